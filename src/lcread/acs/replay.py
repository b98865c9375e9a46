"""Policies compared over one recorded reading (seed 000, App. A): read every chunk once with the fold,
the probe and both gates, then replay each stopping policy on that trajectory, charging it only for the
calls it would have made."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from lcread.acs.chunks import Chunk
from lcread.acs.policies import Policy, parse_end, parse_verbalized
from lcread.acs.reader import FoldReader
from lcread.acs.rules import AnswerState


@dataclass
class Step:
    fold_tokens: int
    probe_tokens: int
    state: AnswerState
    verbalized: float | None
    verbalized_tokens: int
    end: bool
    end_tokens: int
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of this step's fold, probe, verbalized and end calls."""
    probes: dict[str, tuple[AnswerState, int, float]] = field(default_factory=dict)
    """Every probe read after this fold: kind -> (state, tokens, seconds); `state` is the first one's."""


@dataclass
class Outcome:
    policy: str
    stop: int
    """Chunks read (1-based step at which the policy stopped)."""
    answer: str
    tokens: int
    probe_tokens: int
    seconds: float = 0.0
    states: list[AnswerState] = field(default_factory=list, repr=False)


def record(reader: FoldReader, question: str, chunks: list[Chunk], probes: list | None = None) -> list[Step]:
    """Fold every chunk, reading the answer state with every probe and asking both gates after each fold.
    A probe's one-off cost (the likelihood probe's prior) is charged to its first step."""
    steps, notes = [], ""
    probes = probes or [reader.probe]
    reader.reset()
    for chunk in chunks:
        before, clock = dict(reader.by_kind), time.monotonic()
        notes = reader.fold(question, notes, chunk)
        fold_s = time.monotonic() - clock
        read = {}
        for probe in probes:
            clock = time.monotonic()
            state, reply = probe.read(notes)
            tokens = reply.prompt_tokens + reply.completion_tokens
            if probe.prior_reply is not None and not steps:
                tokens += probe.prior_reply.prompt_tokens
            read[probe.kind] = (state, tokens, time.monotonic() - clock)
        clock = time.monotonic()
        text, reply = reader.probe.gate("verbalized", notes)
        reader.account("gate", reply)
        verbalized, v_tokens = parse_verbalized(text), reply.prompt_tokens + reply.completion_tokens
        verbalized_s, clock = time.monotonic() - clock, time.monotonic()
        text, reply = reader.probe.gate("end", notes)
        reader.account("gate", reply)
        first = read[probes[0].kind]
        seconds = {"fold": fold_s, "probe": first[2], "verbalized": verbalized_s, "end": time.monotonic() - clock}
        steps.append(Step(reader.by_kind["fold"] - before["fold"], first[1], first[0], verbalized, v_tokens,
                          parse_end(text), reply.prompt_tokens + reply.completion_tokens, seconds, read))
    return steps


def replay(policy: Policy, steps: list[Step], probe: str | None = None) -> Outcome:
    """Where the policy stops on this trajectory, what it answers, and what it pays (reading the answer
    state with `probe`, when several were recorded)."""
    if probe is not None:
        steps = [with_probe(s, probe) for s in steps]
    n = len(steps)
    states, gates = [], []
    for t, step in enumerate(steps, start=1):
        states.append(step.state)
        if policy.gate:
            gates.append(step.verbalized if policy.gate == "verbalized" else step.end)
        if policy.should_stop(t, n, states if policy.probes_every_step else [], gates) or t == n:
            break
    read = steps[:t]
    probe = sum(s.probe_tokens for s in read) if policy.probes_every_step else read[-1].probe_tokens
    gate = sum((s.verbalized_tokens if policy.gate == "verbalized" else s.end_tokens) for s in read) \
        if policy.gate else 0
    tokens = sum(s.fold_tokens for s in read) + probe + gate
    seconds = sum(s.seconds.get("fold", 0) + (s.seconds.get(policy.gate, 0) if policy.gate else 0) for s in read)
    seconds += sum(s.seconds.get("probe", 0) for s in read) if policy.probes_every_step \
        else read[-1].seconds.get("probe", 0)
    return Outcome(policy.name, t, read[-1].state.answer, tokens, probe, seconds, states)


def with_probe(step: Step, probe: str) -> Step:
    """The step as read by one of the probes recorded on it."""
    state, tokens, seconds = step.probes[probe]
    return Step(step.fold_tokens, tokens, state, step.verbalized, step.verbalized_tokens, step.end, step.end_tokens,
                {**step.seconds, "probe": seconds}, step.probes)


def oracle_tokens(steps: list[Step], evidence: int) -> int:
    """What stopping right after the evidence chunk would cost: the folds up to it and one probe."""
    return sum(s.fold_tokens for s in steps[:evidence]) + steps[evidence - 1].probe_tokens
