"""What a run costs and what it returns: shared by every mode."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from lcread.errors import Stop, StopReason
from lcread.grounding.evidence import Citation
from lcread.text import normalize


@dataclass
class RunStats:
    steps: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    peak_context: int = 0
    compactions: int = 0
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def processed_tokens(self) -> int:
        """Tokens the model actually had to process: prompt minus cache hits, plus completion."""
        return self.total_tokens - self.cached_tokens

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def count(self, reply, context: int) -> None:
        self.calls += 1
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.cached_tokens += reply.cached_tokens
        self.peak_context = max(self.peak_context, context + reply.completion_tokens)


NOTHING_FOUND = "No answer was found in what was read."
"""What is shown for a run that ended without an answer (its answer is None): never a guess."""


@dataclass
class RunResult:
    answer: str | None
    """None when nothing read answers the question (shown as NOTHING_FOUND)."""
    final: bool
    """True when the model answered; False for a best answer after a limit."""
    stop: StopReason
    mode: str
    model: str
    stats: RunStats
    verified: bool | None = None
    """True when the answer is grounded and its confidence reaches the calibrated threshold; None where no
    check applies (an open question)."""
    citations: list[Citation] = field(default_factory=list)
    missing: str | None = None
    """For an unverified answer: the requirement that was still missing (the near-miss record)."""
    documents: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    trace_id: str | None = None
    """The `run` field of this run's records in a JSON-lines trace (None without one)."""
    confidence: float | None = None
    """The calibrated probability that the answer is right (None without an answer)."""
    grounded: bool | None = None
    """True when lcread found the answer's content in a shown line it cites."""

    @property
    def text(self) -> str:
        """The answer as shown: the answer, or that none was found."""
        return self.answer if self.answer is not None else NOTHING_FOUND

    @property
    def reason(self) -> str:
        """Why the run ended, in words (`stop` holds its kind and detail)."""
        return str(self.stop)

    def to_dict(self) -> dict:
        s = self.stats
        return {
            "answer": self.answer, "final": self.final, "verified": self.verified,
            "confidence": None if self.confidence is None else round(self.confidence, 4), "grounded": self.grounded,
            "citations": [c.to_dict() for c in self.citations], "missing": self.missing,
            "stop_reason": self.reason, "mode": self.mode,
            "model": self.model, "steps": s.steps, "calls": s.calls, "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens, "total_tokens": s.total_tokens,
            "cached_tokens": s.cached_tokens, "processed_tokens": s.processed_tokens,
            "peak_context": s.peak_context, "compactions": s.compactions, "wall_time": round(s.seconds, 3),
            **({"documents": self.documents, "warnings": self.warnings} if self.documents else {}),
            **({"trace_id": self.trace_id} if self.trace_id else {}),
        }

    def summary(self) -> str:
        s = self.stats
        return (f"{s.steps} steps · {s.total_tokens:,} tokens ({s.processed_tokens:,} processed) · "
                f"peak {s.peak_context:,} · {s.compactions} compactions · {s.seconds:.1f} s")


def score_answer(prediction: str | None, expected: list[str], options: list[str] | None = None) -> bool:
    """The one scorer of bench and batch: every expected part appears in the prediction (after
    normalisation, RULER's string match); with options, the right letter or the right option's text.
    No answer is never right."""
    if not prediction:
        return False
    if options and re.fullmatch(r"[A-J]", expected[0]):
        letter = expected[0]
        labelled = dict(re.match(r"\s*\(?([A-J])[\).:]\s*(.*)", o).groups() for o in options
                        if re.match(r"\s*\(?([A-J])[\).:]", o))
        text = labelled.get(letter, "")
        return re.match(rf"\s*\(?{letter}\b", prediction) is not None or \
            bool(text) and normalize(text) in normalize(prediction)
    prediction = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", prediction)  # 4,817,263 is 4817263
    prediction = re.sub(r"(?<=\d)\s*[x×]\s*(?=\d)", " x ", prediction)  # a size, 640x480, is 640 by 480
    got = f" {normalize(prediction)} "
    return all(any(f" {normalize(alt)} " in got or not normalize(alt).replace(" ", "").isdigit()
                   and normalize(alt) in got.replace(" ", "") for alt in a.split("|"))
               for a in expected)  # a part holding "|" accepts any of its alternatives; a number only whole
