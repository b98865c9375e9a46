"""Stopping policies: when the fold reader may stop. Each decision is a pure function of what was
observed, so a recorded trajectory can be replayed under every policy and charged for its own calls."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lcread.acs.rules import AnswerState, acs_stop, random_stop_step
from lcread.config import AcsConfig


@dataclass
class Policy:
    name: str
    probes_every_step: bool = False
    """Whether the policy needs the answer state after every fold (ACS), or only at the stop."""
    gate: str | None = None
    """A gate call made after every fold: 'verbalized' or 'end'."""
    needs_logprobs: bool = False

    def should_stop(self, t: int, n: int, states: list[AnswerState], gates: list) -> bool:
        raise NotImplementedError


class AcsPolicy(Policy):
    def __init__(self, theta: float, epsilon: float, window: int):
        super().__init__("acs", probes_every_step=True, needs_logprobs=True)
        self.theta, self.epsilon, self.window = theta, epsilon, window

    def should_stop(self, t, n, states, gates):
        return acs_stop(states, self.theta, self.epsilon, self.window)


class FullPolicy(Policy):
    def __init__(self):
        super().__init__("full")

    def should_stop(self, t, n, states, gates):
        return False


class RandomPolicy(Policy):
    def __init__(self, seed: int):
        super().__init__("random")
        self.seed = seed

    def should_stop(self, t, n, states, gates):
        return t >= random_stop_step(n, self.seed)


class VerbalizedPolicy(Policy):
    def __init__(self, threshold: float):
        super().__init__("verbalized", gate="verbalized")
        self.threshold = threshold

    def should_stop(self, t, n, states, gates):
        return gates[-1] is not None and gates[-1] / 100 >= self.threshold


class EndPolicy(Policy):
    def __init__(self):
        super().__init__("end", gate="end")

    def should_stop(self, t, n, states, gates):
        return gates[-1] is True


def make_policy(config: AcsConfig) -> Policy:
    if config.stop == "acs":
        return AcsPolicy(config.theta, config.epsilon, config.window)
    if config.stop == "random":
        return RandomPolicy(config.seed)
    if config.stop == "verbalized":
        return VerbalizedPolicy(config.gate_threshold)
    if config.stop == "end":
        return EndPolicy()
    return FullPolicy()


def parse_verbalized(text: str) -> float | None:
    """The first number in the reply, clamped to 0-100; None when there is none."""
    m = re.search(r"\d+(?:\.\d+)?", text)
    return None if m is None else max(0.0, min(100.0, float(m.group(0))))


def parse_end(text: str) -> bool:
    """True for END (the first of END / CONTINUE the reply names)."""
    upper = text.upper()
    end, cont = upper.find("END"), upper.find("CONTINUE")
    return end != -1 and (cont == -1 or end < cont)
