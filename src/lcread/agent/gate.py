"""The answer gate (seed 002, "Early Exit"): whether an answer may end a run, decided on what the tools
showed, never on the model's say-so. The gate keeps the run's refused answers and returns decisions; the
command loop acts on them (an accepted answer ends the run, a limit ends it with the best answer so far,
an answer sent back goes to the model as an observation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lcread import prompts
from lcread.result import Stop, StopReason
from lcread.config import LoopConfig
from lcread.grounding import Verdict, Verifier
from lcread.grounding.evidence import norm
from lcread.tools import Observation, ParseError, parse
from lcread.trace import Trace

CONSTANT_HOPS = 3
"""How many constants defined as another constant lcread follows to reach a literal value."""
FOCUSED_MATCHES = 20
"""A check step's grep is worth running for the model when each word it greps has at most this many matches."""


@dataclass
class Accepted:
    """The answer's sufficiency predicate holds (or no check can ever apply): the run ends with it."""

    answer: str
    verdict: Verdict


@dataclass
class SentBack:
    """The answer lacks evidence: what is missing (and what lcread ran to find it) goes back to the model."""

    observation: Observation


@dataclass
class Halted:
    """A grounding or sufficiency limit: the run ends with its best answer."""

    stop: StopReason


Decision = Accepted | SentBack | Halted


@dataclass
class AnswerGate:
    verifier: Verifier
    config: LoopConfig
    run_check: Callable[[str], Observation]
    """Runs a check step (a command line) as lcread's own, its output shown to the model and kept as evidence."""
    count: Callable[[str], int]
    """term -> matches over the documents (whether a check step's grep is focused)."""
    trace: Trace
    example: str = "keyword"
    """A word of the question to suggest grepping when the model answers before reading anything."""
    pending: tuple[str, Verdict] | None = None
    """The last answer sent back, and its verdict: accepted the moment the evidence establishes it."""
    refused: set[str] = field(default_factory=set)
    """Answers sent back (normalised): never offered again by the answer grammar."""
    refusals: int = 0
    refused_at: int = 0
    unread_answers: int = 0
    checks_run: set[str] = field(default_factory=set)

    def answer(self, answer: str, step: int, read_anything: bool) -> Decision:
        """An answer: accepted when its predicate holds, else sent back with what is missing, after lcread ran the
        step that would find it (or showed the lines that match the question best) and checked it again."""
        if not read_anything:  # nothing read yet: stop on evidence, not on the model's say-so
            self.unread_answers += 1
            self.trace.event("answer_refused", step=step, answer=answer)
            if self.unread_answers > self.config.max_unread_answers:
                return Halted(StopReason(Stop.GROUNDING_LIMIT, f"{self.unread_answers} answers before reading "
                                                               "anything"))
            return SentBack(Observation(prompts.render("unread_answer", example=self.example)))
        answer = self.constant_value(answer, step) or answer
        verdict = self.verifier.check(answer)
        if verdict.ok or verdict.settled or not self.config.sufficiency:
            return Accepted(answer, verdict)
        progress = self.pending is not None and \
            set(self.verifier.atoms(answer)) > set(self.verifier.atoms(self.pending[0]))
        self.pending = (answer, verdict)
        self.refused.add(norm(answer.strip().strip('"')))
        self.refusals += 0 if progress else 1  # an answer that grows (a chain, more values) is progress
        self.refused_at = self.refused_at or step
        self.trace.event("answer_unverified", step=step, answer=answer, missing=verdict.missing, next=verdict.step)
        if self.refusals > self.config.max_refusals:
            return Halted(StopReason(Stop.SUFFICIENCY_LIMIT, f"{self.refusals} answers without the evidence they "
                                                             "need"))
        check = verdict.step if verdict.step and verdict.step not in self.checks_run else None
        ran = "" if check and self.focused(check) else self.best_lines(self.refused)
        if not ran and check:  # a focused step: a read, or a grep of rare words (a name, a chain's next link)
            self.checks_run.add(check)
            output = self.run_check(check)
            self.trace.event("check_step", step=step, command=check, chars=output.chars)
            ran = f"lcread ran `{check}`:\n{output.text}"
            decision = self.recheck(step)
            if decision is not None:
                return decision
        return SentBack(Observation(prompts.render("unverified_answer", answer=answer, missing=verdict.missing,
                                                   ran=ran)))

    def constant_value(self, answer: str, step: int) -> str | None:
        """An answer that is only a constant's name (`DEFAULT_REDIRECT_LIMIT`) where the question does not ask for
        a name: lcread looks up the definition itself (following a constant defined as another) and the answer is
        the literal value; the definition, shown and kept as evidence, ties the value to the line that uses the
        name. None when the answer is no such name or no literal is found."""
        from lcread.grounding.question import NAME_ASK
        from lcread.tools.definitions import CONSTANT_NAME, assigned_value

        name = answer.strip().strip("\"'`").strip()
        if not CONSTANT_NAME.fullmatch(name) or NAME_ASK.search(self.verifier.profile.question):
            return None
        for _ in range(CONSTANT_HOPS):
            command = f"definition {name}"
            output = self.run_check(command)
            self.checks_run.add(command)
            value = next((v for v in (assigned_value(p.text, name) for p in output.shown) if v), None)
            if value is None:
                return None
            if not CONSTANT_NAME.fullmatch(value):
                self.trace.event("constant_resolved", step=step, answer=answer, value=value)
                return value
            name = value
        return None

    def recheck(self, step: int) -> Accepted | Halted | None:
        """A pending answer is accepted the moment the evidence shown since makes its predicate hold."""
        if self.pending is None:
            return None
        verdict = self.verifier.check(self.pending[0])
        if verdict.ok:
            self.trace.event("answer_verified_later", step=step, answer=self.pending[0])
            return Accepted(self.pending[0], verdict)
        self.pending = (self.pending[0], verdict)
        if step - self.refused_at >= self.config.steps_after_refusal:
            return Halted(StopReason(Stop.SUFFICIENCY_LIMIT, f"{self.config.steps_after_refusal} steps after an "
                                                             "answer without the evidence it needs"))
        return None

    def offered(self, candidates: list[str]) -> list[str]:
        """The grounded values an answer may still take: an answer sent back is not offered again."""
        return [c for c in candidates if norm(c) not in self.refused]

    def best_lines(self, refused: set[str], top: int = 4) -> str:
        """The shown sentences that match the question best (holding a value of the kind asked for, none of
        them refused), as lcread shows them after its first search and after a refused answer; "" if none."""
        lines = self.verifier.answer_lines(refused, top=top)
        if not lines:
            return ""
        kind = self.verifier.profile.answer_type
        rows = "\n".join(f"{s.doc}:{s.line}: {self.verifier.whole_sentence(s)[:300]}" for s in lines)
        return prompts.render("answer_lines", holding=f" and hold a {kind}" if kind in ("number", "date", "path")
                              else "", lines=rows)

    def focused(self, step: str) -> bool:
        """Whether a check step shows few lines: a read, or a grep of words the documents hold rarely (a name,
        the next link of a chain), not of a common word whose thousands of matches would bury the answer."""
        try:
            command = parse(step)
        except ParseError:  # never: lcread builds its steps to parse; a step that did not is not worth running
            return False
        return command.name == "read" or command.name == "grep" and \
            all(self.count(p) <= FOCUSED_MATCHES for p in command.patterns)
