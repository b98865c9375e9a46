"""Policies compared over one recorded reading (seed 000, App. A): the fold reader reads every chunk once
under `RecordingPolicy` (every probe and every gate after each fold), then each stopping policy is
replayed on that trajectory and charged only for the calls it would have made."""

from __future__ import annotations

from dataclasses import dataclass, field

from lcread.acs.policies import Policy
from lcread.acs.reader import Step
from lcread.acs.rules import AnswerState


@dataclass
class Replayed:
    policy: str
    stop: int
    """Chunks read (1-based step at which the policy stopped)."""
    answer: str
    tokens: int
    probe_tokens: int
    seconds: float = 0.0
    states: list[AnswerState] = field(default_factory=list, repr=False)


def replay(policy: Policy, steps: list[Step], probe: str) -> Replayed:
    """Where the policy stops on this trajectory, what it answers (the state `probe` read), and what it pays."""
    n, states, gate = len(steps), [], []
    key = policy.gates[0].key if policy.gates else None
    for t, step in enumerate(steps, start=1):
        states.append(step.probes[probe].value)
        if key:
            gate.append(step.gates[key].value)
        if policy.should_stop(t, n, states if policy.probes_every_step else [], gate) or t == n:
            break
    read = steps[:t]
    probes = [s.probes[probe] for s in read] if policy.probes_every_step else [read[-1].probes[probe]]
    gates = [s.gates[key] for s in read] if key else []
    tokens = sum(s.fold_tokens for s in read) + sum(r.tokens for r in probes + gates)
    seconds = sum(s.fold_seconds for s in read) + sum(r.seconds for r in probes + gates)
    return Replayed(policy.name, t, read[-1].probes[probe].value.answer, tokens, sum(r.tokens for r in probes),
                    seconds, states)


def oracle_tokens(steps: list[Step], evidence: int, probe: str) -> int:
    """What stopping right after the evidence chunk would cost: the folds up to it and one probe."""
    return sum(s.fold_tokens for s in steps[:evidence]) + steps[evidence - 1].probes[probe].tokens
