"""Stopping policies: when the fold reader may stop. Each decision is a pure function of what was
observed, so a recorded reading can be replayed under every policy and charged for its own calls.

A policy that asks rather than measures owns its gate: the question put to the model after each fold
(its prompt), how the reply is read (its parse), and the key its cost is recorded under."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from lcread import prompts
from lcread.acs.rules import AnswerState, acs_stop, random_stop_step
from lcread.config import AcsConfig
from lcread.models import Model, Reply


def parse_verbalized(text: str) -> float | None:
    """The first number in the reply, clamped to 0-100; None when there is none."""
    m = re.search(r"\d+(?:\.\d+)?", text)
    return None if m is None else max(0.0, min(100.0, float(m.group(0))))


def parse_end(text: str) -> bool:
    """True for END (the first of END / CONTINUE the reply names)."""
    upper = text.upper()
    end, cont = upper.find("END"), upper.find("CONTINUE")
    return end != -1 and (cont == -1 or end < cont)


@dataclass(frozen=True)
class Gate:
    key: str
    """What its readings and costs are recorded under."""
    prompt: str
    parse: Callable[[str], object]

    def ask(self, model: Model, question: str, options_text: str, notes: str) -> tuple[object, Reply]:
        """Whether the notes suffice, in the model's own words, read by `parse`."""
        msg = prompts.render(self.prompt, notes=notes or "(no notes yet)", question=question,
                             options=f"\n{options_text}" if options_text else "")
        reply = model.query([{"role": "user", "content": msg}], max_tokens=8)
        return self.parse(reply.text), reply


VERBALIZED = Gate("verbalized", "acs_gate_verbalized", parse_verbalized)
END = Gate("end", "acs_gate_end", parse_end)


@dataclass
class Policy:
    name: str
    probes_every_step: bool = False
    """Whether the policy needs the answer state after every fold (ACS), or only at the stop."""
    gates: tuple[Gate, ...] = ()
    """Asked after every fold; `should_stop` sees the first one's readings."""
    needs_logprobs: bool = False

    def should_stop(self, t: int, n: int, states: list[AnswerState], gate: list) -> bool:
        raise NotImplementedError


class AcsPolicy(Policy):
    def __init__(self, theta: float, epsilon: float, window: int):
        super().__init__("acs", probes_every_step=True, needs_logprobs=True)
        self.theta, self.epsilon, self.window = theta, epsilon, window

    def should_stop(self, t, n, states, gate):
        return acs_stop(states, self.theta, self.epsilon, self.window)


class FullPolicy(Policy):
    def __init__(self):
        super().__init__("full")

    def should_stop(self, t, n, states, gate):
        return False


class RecordingPolicy(Policy):
    """Reads everything, reading the answer state and asking every gate after each fold: the trajectory
    that `replay` charges each policy on."""

    def __init__(self):
        super().__init__("recording", probes_every_step=True, gates=(VERBALIZED, END))

    def should_stop(self, t, n, states, gate):
        return False


class RandomPolicy(Policy):
    def __init__(self, seed: int):
        super().__init__("random")
        self.seed = seed

    def should_stop(self, t, n, states, gate):
        return t >= random_stop_step(n, self.seed)


class VerbalizedPolicy(Policy):
    def __init__(self, threshold: float):
        super().__init__("verbalized", gates=(VERBALIZED,))
        self.threshold = threshold

    def should_stop(self, t, n, states, gate):
        return gate[-1] is not None and gate[-1] / 100 >= self.threshold


class EndPolicy(Policy):
    def __init__(self):
        super().__init__("end", gates=(END,))

    def should_stop(self, t, n, states, gate):
        return gate[-1] is True


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
