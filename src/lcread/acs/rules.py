"""Answer-Convergence Stopping (seed 000 §3.2-3.3) as pure functions: answer states, their change, stability,
the stopping test, and the random baseline's stopping step.

An answer state is what the probe read after a fold: the prediction, a confidence in [0, 1], and
for multiple choice the posterior over the options. The change between consecutive states is the
Jensen-Shannon divergence of the posteriors (base 2, so in [0, 1]) or 1 - token F1 of the drafts.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass

from lcread.language import load
from lcread.text import normalize

@dataclass
class AnswerState:
    """The probe's reading after one fold."""

    answer: str
    confidence: float
    posterior: dict[str, float] | None = None
    """Option letter -> probability, for multiple choice."""
    eligible: bool = True
    """False for an empty or abstaining draft: such a state never triggers a stop."""


def token_f1(a: str, b: str) -> float:
    """SQuAD-style token F1 between two answers after normalisation; two empty answers agree."""
    ta, tb = normalize(a).split(), normalize(b).split()
    if not ta and not tb:
        return 1.0
    common = sum((Counter(ta) & Counter(tb)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(ta), common / len(tb)
    return 2 * precision * recall / (precision + recall)


def jsd(p: dict[str, float], q: dict[str, float]) -> float:
    """Jensen-Shannon divergence in bits (0 = identical, 1 = disjoint)."""
    keys = set(p) | set(q)
    m = {k: (p.get(k, 0.0) + q.get(k, 0.0)) / 2 for k in keys}

    def kl(x: dict[str, float]) -> float:
        return sum(x.get(k, 0.0) * math.log2(x[k] / m[k]) for k in keys if x.get(k, 0.0) > 0)

    return max(0.0, (kl(p) + kl(q)) / 2)


def is_abstention(answer: str) -> bool:
    norm = normalize(answer)
    if not norm:
        return True
    return any(re.search(rf"(^|\s){re.escape(a)}($|\s)", norm) for a in _abstentions())


def _abstentions() -> list[str]:
    return [a for a in (normalize(x) for x in load().abstentions) if a]


def change(prev: AnswerState, cur: AnswerState) -> float:
    """How much the answer state moved between two consecutive steps."""
    if prev.posterior is not None and cur.posterior is not None:
        return jsd(prev.posterior, cur.posterior)
    return 1.0 - token_f1(prev.answer, cur.answer)


def stability(states: list[AnswerState], window: int) -> float | None:
    """Mean change across the last min(t, w) eligible states (their consecutive changes); None while
    fewer than two were read. A state read from empty notes, or an abstaining draft, is no answer state
    yet: counting it would charge every reading one or two extra chunks for the change from "nothing"
    to the first evidence."""
    states = [s for s in states if s.eligible]
    recent = states[-min(len(states), window):]
    if len(recent) < 2:
        return None
    moves = [change(a, b) for a, b in zip(recent, recent[1:])]
    return sum(moves) / len(moves)


def acs_stop(states: list[AnswerState], theta: float, epsilon: float, window: int) -> bool:
    """Stop at step t when c_t >= theta, the mean recent change <= epsilon, and the state is eligible."""
    cur = states[-1]
    mean_change = stability(states, window)
    return cur.eligible and cur.confidence >= theta and mean_change is not None and mean_change <= epsilon


def posterior_from_top(top: dict[str, float], options: list[str]) -> dict[str, float]:
    """Renormalise top-k token log-probabilities over the option letters (` B` and `B` count as B).

    Options absent from the top k get no mass; if none is present the posterior is uniform.
    """
    mass = {o: 0.0 for o in options}
    for token, logprob in top.items():
        key = (token or "").strip().rstrip(")").upper()
        if key in mass and logprob is not None:
            mass[key] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return {o: 1 / len(options) for o in options}
    return {o: v / total for o, v in mass.items()}


_WORD = re.compile(r"\w+")
_COPULAS = {"is", "are", "was", "were", "the", "a", "an", "answer", "final", "of", "it", "that", "this", "in", "for"}


def answer_confidence(tokens: list, how: str = "min", question: str = "") -> float:
    """Confidence over the answer's own tokens. A small model wavers over the wrapping (restate "The special
    magic number for X is ..." first, or give the bare value, or restate after it) while it copies the value
    with near certainty; that doubt is not doubt about the answer. So only content tokens count (those
    inside a word that is neither the question's nor a label's), and each is taken among the alternatives
    at its position that are not wrapping either: p / (1 - the mass of wrapping alternatives). `tokens` are
    TokenScores, or (token, log-probability) pairs when the alternatives are unknown; `how` is min or mean.
    When no token is content (an answer in the question's own words: "X or Y?"), every token counts."""
    echo = {w.lower() for w in _WORD.findall(question)} | _COPULAS
    triples = [(t[0], t[1], {}) if isinstance(t, tuple) else (t.token, t.logprob, t.top) for t in tokens]
    text = "".join(token for token, _, _ in triples)
    content_chars = {i for m in _WORD.finditer(text) if m.group(0).lower() not in echo
                     for i in range(m.start(), m.end())}
    content, at = [], 0
    for token, logprob, top in triples:
        if any(i in content_chars for i in range(at, at + len(token))):
            wrapping = sum(math.exp(v) for alt, v in top.items()
                           if alt != token and v is not None and _wraps(alt, echo))
            content.append(min(0.0, logprob - math.log(max(1e-12, 1.0 - wrapping))))
        at += len(token)
    content = content or [lp for _, lp, _ in triples]
    if not content:
        return 0.0
    if how == "mean":
        return math.exp(sum(content) / len(content))
    return math.exp(min(content))


def _wraps(alternative: str, echo: set[str]) -> bool:
    """An alternative token that would start or continue wrapping: spaces, punctuation, or the start of a
    label's or the question's word."""
    words = [w.lower() for w in _WORD.findall(alternative)]
    return all(any(e.startswith(w) for e in echo) for w in words)


def random_stop_step(n_chunks: int, seed: int) -> int:
    """The random baseline's stopping step, uniform over 1..N, fixed by the seed."""
    return random.Random(seed).randint(1, n_chunks)
