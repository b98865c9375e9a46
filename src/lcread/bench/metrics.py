"""Evidence-aligned metrics for stopping policies (seed 000 §3.4), as pure functions.

Each outcome is (stop, tokens, correct) for one task; `evidence` is the chunk holding the evidence,
`full` the cost of reading everything, `oracle` the cost of stopping right at the evidence chunk.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Outcome:
    stop: int
    """Chunks read before stopping (1-based)."""
    tokens: int
    correct: bool


@dataclass
class Reference:
    evidence: int
    """The chunk that holds the evidence (1-based)."""
    full_tokens: int
    oracle_tokens: int
    full_correct: bool


def premature_rate(outcomes: list[Outcome], refs: list[Reference]) -> float:
    """Share of tasks stopped before the evidence chunk was read."""
    return sum(o.stop < r.evidence for o, r in zip(outcomes, refs)) / len(outcomes)


def mean_over_read(outcomes: list[Outcome], refs: list[Reference]) -> float:
    """Mean chunks read past the evidence chunk, over the tasks not stopped prematurely."""
    over = [o.stop - r.evidence for o, r in zip(outcomes, refs) if o.stop >= r.evidence]
    return sum(over) / len(over) if over else 0.0


def savings_capture(outcomes: list[Outcome], refs: list[Reference]) -> float:
    """Mean share of the oracle's available savings captured; a premature stop captures nothing.
    Tasks with nothing to save (evidence in the last chunk) are left out."""
    shares = []
    for o, r in zip(outcomes, refs):
        available = r.full_tokens - r.oracle_tokens
        if available <= 0:
            continue
        shares.append(0.0 if o.stop < r.evidence else min(1.0, max(0.0, (r.full_tokens - o.tokens) / available)))
    return sum(shares) / len(shares) if shares else 0.0


def accuracy(outcomes: list[Outcome]) -> float:
    return sum(o.correct for o in outcomes) / len(outcomes)


def accuracy_regret(outcomes: list[Outcome], refs: list[Reference]) -> float:
    """Full reading's accuracy minus the policy's (positive = the policy lost accuracy)."""
    return sum(r.full_correct for r in refs) / len(refs) - accuracy(outcomes)


def token_saving(outcomes: list[Outcome], refs: list[Reference]) -> float:
    """1 - the policy's tokens over full reading's tokens, summed over tasks."""
    return 1 - sum(o.tokens for o in outcomes) / sum(r.full_tokens for r in refs)
