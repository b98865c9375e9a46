"""The probe: a separate call on the running notes that reads the answer state (seed 000 §3.2).

Multiple choice is read one of two ways (`kind`):
- letters: the paper's probe: one token constrained to the option letters, top-k log-probabilities
  renormalised over them. A 0.5B model's letter posterior stays near uniform whatever the notes say.
- likelihood: each option's text scored as the answer after the notes (its tokens' summed
  log-probability), divided by the same option's likelihood with no notes (the question's prior:
  contextual calibration), renormalised. Sharp when the notes hold the answer, split when they do not.
A state read from empty notes is never eligible to stop, whatever the probe.
"""

from __future__ import annotations

import math

from lcread import prompts
from lcread.acs.rules import AnswerState, answer_confidence, is_abstention, posterior_from_top
from lcread.errors import LcreadError
from lcread.models import Model, Reply

NO_NOTES = "(no notes yet)"


def probe_kind(model: Model, wanted: str) -> str:
    """`auto`: likelihood where the backend can score continuations, letters elsewhere."""
    if wanted == "likelihood" and not model.supports_scoring:
        raise LcreadError(f"--probe likelihood needs a backend that scores continuations ({model.name} does "
                          "not): use --probe letters")
    if wanted == "auto":
        return "likelihood" if model.supports_scoring else "letters"
    return wanted


class Probe:
    def __init__(self, model: Model, question: str, options: list[tuple[str, str]], top_k: int = 20,
                 draft_tokens: int = 32, kind: str = "auto", confidence: str = "min"):
        self.model, self.question, self.options = model, question, options
        self.top_k, self.draft_tokens = top_k, draft_tokens
        self.letters = [letter for letter, _ in options]
        self.confidence = confidence
        """How an open-ended draft's token probabilities become one confidence: min or mean."""
        self.kind = probe_kind(model, kind) if options else f"draft·{confidence}"
        """letters, likelihood, draft·min or draft·mean: named in the run header, the trace and the bench,
        and the key a calibrated θ is saved under."""
        self._prior: list[float] | None = None
        self.prior_reply: Reply | None = None

    @property
    def options_text(self) -> str:
        return "\n".join(f"{letter}) {text}" for letter, text in self.options)

    def read(self, notes: str) -> tuple[AnswerState, list[Reply]]:
        """The answer state the notes support now, and the calls it took (the first read of a likelihood
        probe also pays for the question's prior). Empty notes hold no evidence: their state is never
        eligible to stop, and no call is made for it."""
        had_prior = self.prior_reply is not None
        state, reply = self._read(notes) if notes.strip() else (self._uninformed(), Reply("", 0, 0, 0.0))
        paid = [self.prior_reply] if self.prior_reply is not None and not had_prior else []
        return state, paid + [reply]

    def _uninformed(self) -> AnswerState:
        """No evidence yet: the options equally likely, no draft."""
        if not self.options:
            return AnswerState("", 0.0, eligible=False)
        uniform = {letter: 1 / len(self.letters) for letter in self.letters}
        return AnswerState(self.letters[0], 1 / len(self.letters), posterior=uniform, eligible=False)

    def _read(self, notes: str) -> tuple[AnswerState, Reply]:
        if self.kind == "likelihood":
            prior = self.prior()
            reply = self._score(notes)
            calibrated = [lp - p for lp, p in zip(reply.continuation_logprobs, prior)]
            top = max(calibrated)
            mass = [math.exp(c - top) for c in calibrated]
            posterior = {letter: m / sum(mass) for letter, m in zip(self.letters, mass)}
            best = max(posterior, key=posterior.get)
            return AnswerState(best, posterior[best], posterior=posterior), reply
        if self.options:
            msg = prompts.render("acs_probe_mc", notes=notes, question=self.question, options=self.options_text)
            reply = self.model.query([{"role": "user", "content": msg}], max_tokens=1, logprobs=self.top_k,
                                     choices=self.letters)
            return self._posterior(reply), reply
        # The notes hold only lines copied from the document about the question's terms: the draft answers
        # from them; whether they suffice is what its confidence and stability measure.
        msg = prompts.render("acs_probe_draft", notes=notes, question=self.question)
        reply = self.model.query([{"role": "user", "content": msg}], max_tokens=self.draft_tokens,
                                 logprobs=self.top_k)
        return self._draft(reply), reply

    def _score(self, notes: str) -> Reply:
        msg = prompts.render("acs_probe_score", notes=notes, question=self.question)
        return self.model.score([{"role": "user", "content": msg}], [text for _, text in self.options])

    def prior(self) -> list[float]:
        """The options' likelihood with no notes: computed once per question, charged to the first read."""
        if self._prior is None:
            self.prior_reply = self._score(NO_NOTES)
            self._prior = list(self.prior_reply.continuation_logprobs)
        return self._prior

    def _need_scores(self, reply: Reply) -> None:
        if not reply.scores:
            raise LcreadError(f"model {self.model.name} returned no log-probabilities; "
                              "use --stop verbalized|end|full, or --mode select")

    def _posterior(self, reply: Reply) -> AnswerState:
        self._need_scores(reply)
        first = reply.scores[0]
        top = dict(first.top)
        top.setdefault(first.token, first.logprob)
        posterior = posterior_from_top(top, self.letters)
        best = max(posterior, key=posterior.get)
        return AnswerState(best, posterior[best], posterior=posterior)

    def _draft(self, reply: Reply) -> AnswerState:
        draft = reply.text.strip().splitlines()[0].strip() if reply.text.strip() else ""
        self._need_scores(reply)
        confidence = answer_confidence(reply.scores, self.confidence, self.question)
        return AnswerState(draft, confidence, eligible=not is_abstention(draft))
