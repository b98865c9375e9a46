"""The probe: a separate call on the running notes that reads the answer state (seed 000 §3.2)."""

from __future__ import annotations


from lcread import prompts
from lcread.acs.rules import AnswerState, draft_confidence, is_abstention, posterior_from_top
from lcread.errors import LcreadError
from lcread.models import Model, Reply

class Probe:
    def __init__(self, model: Model, question: str, options: list[tuple[str, str]], top_k: int = 20,
                 draft_tokens: int = 32):
        self.model, self.question, self.options = model, question, options
        self.top_k, self.draft_tokens = top_k, draft_tokens
        self.letters = [letter for letter, _ in options]

    @property
    def options_text(self) -> str:
        return "\n".join(f"{letter}) {text}" for letter, text in self.options)

    def read(self, notes: str) -> tuple[AnswerState, Reply]:
        """The answer state the notes support now."""
        notes = notes or "(no notes yet)"
        if self.options:
            msg = prompts.render("acs_probe_mc", notes=notes, question=self.question, options=self.options_text)
            reply = self.model.query([{"role": "user", "content": msg}], max_tokens=1, logprobs=self.top_k,
                                     choices=self.letters)
            return self._posterior(reply), reply
        msg = prompts.render("acs_probe_open", notes=notes, question=self.question)
        reply = self.model.query([{"role": "user", "content": msg}], max_tokens=self.draft_tokens, logprobs=1)
        return self._draft(reply), reply

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
        confidence = draft_confidence([s.logprob for s in reply.scores])
        return AnswerState(draft, confidence, eligible=not is_abstention(draft))

    def gate(self, kind: str, notes: str) -> tuple[str, Reply]:
        """Ask the model whether the notes suffice (the baselines that ask rather than measure)."""
        options = f"\n{self.options_text}" if self.options else ""
        msg = prompts.render(f"acs_gate_{kind}", notes=notes or "(no notes yet)", question=self.question,
                             options=options)
        reply = self.model.query([{"role": "user", "content": msg}], max_tokens=8)
        return reply.text, reply
