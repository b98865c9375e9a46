"""The answer gate (seed 002, "Early Exit"): whether a run may end, decided on the reader's calibrated confidence in
what the tools showed, never on the model's say-so. The gate returns decisions; the command loop acts on them (an
accepted reading ends the run, a limit ends it with the best reading so far, an answer the reader is unsure of goes
back to the model with the lines that bear on it)."""

from __future__ import annotations

from dataclasses import dataclass

from lcread import prompts
from lcread.config import LoopConfig
from lcread.reader import Reading
from lcread.errors import Stop, StopReason
from lcread.tools import Command, Observation
from lcread.trace import Trace

SHOWN_CANDIDATES = 3
"""Candidates (with the line each sits in) shown to the model with an answer the reader is unsure of."""


@dataclass
class Accepted:
    """The reading is verified or settled (or the user turned the check off): the run ends with it."""

    reading: Reading
    answer: str | None = None
    """The model's own words, when the check is off; else the reading's best answer."""


@dataclass
class SentBack:
    """The reader is not sure: the model sees why, and the lines of the best candidates."""

    observation: Observation


@dataclass
class Halted:
    """A grounding or sufficiency limit: the run ends with its best reading."""

    stop: StopReason


Decision = Accepted | SentBack | Halted


@dataclass
class AnswerGate:
    config: LoopConfig
    trace: Trace
    example: str = "keyword"
    """A word of the question to suggest grepping when the model answers before reading anything."""
    unsure: int = 0
    """Answers given while the reader was unsure."""
    unsure_at: int | None = None
    """The step of the first of them."""
    unread_answers: int = 0

    def decide(self, reading: Reading, command: Command | None, step: int, read_anything: bool) -> Decision | None:
        """After a call: stop on a verified or settled reading; an answer while unsure goes back; None: run the
        command."""
        answered = command is not None and command.name == "answer"
        if read_anything and reading.settled:
            return Accepted(reading)
        if answered and not read_anything:
            return self.unread(command.answer, step)
        if answered and not self.config.sufficiency:
            return Accepted(reading, command.answer)
        if self.unsure_at is not None and step - self.unsure_at >= self.config.steps_after_refusal:
            return Halted(StopReason(Stop.SUFFICIENCY_LIMIT, f"{self.config.steps_after_refusal} steps after an "
                                                             "answer lcread could not verify"))
        if not answered:
            return None
        self.unsure += 1
        self.unsure_at = step if self.unsure_at is None else self.unsure_at
        self.trace.event("answer_unverified", step=step, answer=command.answer, best=reading.answer,
                         confidence=round(reading.confidence, 4))
        if self.unsure > self.config.max_refusals:
            return Halted(StopReason(Stop.SUFFICIENCY_LIMIT, f"{self.unsure} answers lcread could not verify"))
        return SentBack(Observation(prompts.render("unsure_answer", answer=command.answer,
                                                   confidence=f"{reading.confidence:.0%}", lines=lines(reading))))

    def unread(self, answer: str, step: int) -> Decision:
        """An answer before anything was read: stop on evidence, not on the model's say-so."""
        self.unread_answers += 1
        self.trace.event("answer_refused", step=step, answer=answer)
        if self.unread_answers > self.config.max_unread_answers:
            return Halted(StopReason(Stop.GROUNDING_LIMIT, f"{self.unread_answers} answers before reading anything"))
        return SentBack(Observation(prompts.render("unread_answer", example=self.example)))


def lines(reading: Reading, top: int = SHOWN_CANDIDATES) -> str:
    """The best candidates, each with the shown line it sits in: what the model may answer from."""
    rows = []
    for r in reading.ranked[:top]:
        spot = r.candidate.spots[0] if r.candidate.spots else None
        where = f"{spot.sentence.doc}:{spot.sentence.line}: {spot.sentence.text[:240]}" if spot else "(not in a shown line)"
        rows.append(f"- {r.candidate.text!r} ({r.probability:.0%}) in {where}")
    return "\n".join(rows) or "(no candidate yet)"
