"""The scorer's features of each candidate answer: generic readings of the model's likelihood, the retrieval, the
answer's type and the competition, none of them about any sentence in particular."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from lcread.language import load
from lcread.reader.candidates import Candidate, digits, key
from lcread.reader.question import Asked

LIKELIHOOD = ("lm_mean", "lm_sum", "lm_first", "lm_end", "lm_gap", "lm_top", "lm_share", "lm_greedy", "lm_first_rank",
              "answer_now")
"""Features that need the model's log-probabilities of the spans (`Model.scores_spans`)."""
CHECK = ("check_share", "check_top", "check_none", "check_margin", "check_judge")
"""Features of the check (a second view of a reading's best candidates in their own lines, against no answer, and
the model asked whether the best one's lines make it the answer): for the confidence, not the ranking."""
GENERIC = ("match", "match_top", "near", "type_exact", "type_fits", "free", "answered", "echo", "mentions", "pool",
           "pair_asked", "pair_unasked", "computed", "length", "spelled", "resolved", "members", "complete", "partial",
           "named", "derived_asked", "cover")
FEATURES = LIKELIHOOD + GENERIC
NEAR_CHARS = 60.0
"""A span this many characters from the nearest question word is about 1/e as near as one beside it."""


@dataclass
class Context:
    """What the features of one round read besides the candidates."""

    asked: Asked
    match: Callable[[str], float]
    """text -> how well it matches the question (the ranked search's weighted terms)."""
    terms_at: Callable[[str], list[tuple[int, int]]]
    """text -> the character spans of the question's words in it."""
    free: str | None = None
    """The model's own answer this round, when it gave one."""
    likelihood: list[list[float]] | None = None
    """Per candidate, the log-probabilities of its tokens (and of the closing quote) as the answer."""
    ranks: list[list[int]] | None = None
    """Per candidate, each token's rank among the model's choices (0: the one it would write)."""
    answer_now: float = 0.0
    """The log-probability that the model's reply starts as an answer."""
    cover: Callable[[str], float] | None = None
    """text -> the share of the question's own words (by weight) it holds."""


def features(candidates: list[Candidate], ctx: Context) -> list[dict[str, float]]:
    """One feature row per candidate, in order."""
    best_sentence = max((ctx.match(p.sentence.text) for c in candidates for p in c.spots), default=0.0) or 1.0
    fitting = sum((c.items is not None) if ctx.asked.plural else (c.type in ctx.asked.fits) for c in candidates)
    lm = [_likelihood(t) for t in ctx.likelihood] if ctx.likelihood else [None] * len(candidates)
    top_mean = max((x[0] for x in lm if x), default=0.0)
    sums = [x[3] for x in lm if x]
    top_sum = max(sums, default=0.0)
    norm = _logsumexp(sums) if sums else 0.0
    ranks = ctx.ranks or [[] for _ in candidates]
    asked_words = set(_words(ctx.asked.question))
    free = key(ctx.free) if ctx.free else None
    # The kind of value lcread computes that the question asks for: a set, a count, a page, a section.
    derived = "list" if ctx.asked.plural else ctx.asked.type
    rows = []
    for c, x, rank in zip(candidates, lm, ranks):
        matches = [ctx.match(p.sentence.text) for p in c.spots] or [0.0]
        best = max(range(len(matches)), key=matches.__getitem__)
        words = _words(c.text)
        row = {
            "match": matches[best] / best_sentence,
            "match_top": float(matches[best] >= best_sentence - 1e-9),
            "cover": ctx.cover(c.spots[best].sentence.text) if ctx.cover and c.spots else 0.0,
            "near": _near(c, best, ctx.terms_at),
            "type_exact": float(c.items is not None if ctx.asked.plural else c.type == ctx.asked.exact),
            "type_fits": float(c.items is not None if ctx.asked.plural else c.type in ctx.asked.fits),
            "free": _agreement(c, free, ctx.free),
            "answered": float(free is not None),
            "echo": sum(w in asked_words for w in words) / len(words) if words else 0.0,
            "mentions": math.log1p(len({(p.sentence.doc, p.sentence.line) for p in c.spots})),
            "pool": math.log1p(fitting),
            "pair_asked": float(c.type == "pair" and ctx.asked.pair),
            "pair_unasked": float(c.type == "pair" and not ctx.asked.pair),
            "computed": float(c.computed),
            "derived_asked": float(c.computed and c.type == derived),
            "length": math.log(1 + len(c.text)),
            "spelled": float(c.type == "number" and not re.search(r"\d", c.text)),
            "resolved": float(c.source is not None),
            "named": _named(c.source, asked_words) if c.source else 0.0,
            "members": math.log1p(len(c.items or [])),
            "complete": float(c.complete),
            "partial": float(c.partial),
        }
        if x is not None:
            mean, first, end, total = x
            row.update(lm_mean=mean, lm_sum=total, lm_first=first, lm_end=end, lm_gap=mean - top_mean,
                       lm_top=float(mean >= top_mean - 1e-9), lm_share=total - norm, answer_now=ctx.answer_now,
                       lm_greedy=sum(r == 0 for r in rank) / len(rank) if rank else 0.0,
                       lm_first_rank=math.log1p(rank[0]) if rank else 0.0)
        rows.append(row)
    return rows


def checked(sums: list[float]) -> list[dict[str, float]]:
    """The check's features of each candidate it read, from the log-probabilities of those candidates and, last, of
    no answer: its share of the view's probability (no answer's included), whether it is the view's
    likeliest, no answer's share, and its log-odds over the likeliest other (no answer's included)."""
    top = max(sums)
    norm = _logsumexp(sums)
    none = sums[-1]
    rows = []
    for i, v in enumerate(sums[:-1]):
        rival = max(sums[j] for j in range(len(sums)) if j != i)
        rows.append({"check_share": math.exp(v - norm), "check_top": float(v >= top - 1e-9),
                     "check_none": math.exp(none - norm), "check_margin": max(min(v - rival, LOGIT_CAP), -LOGIT_CAP)})
    return rows


def judged(yes: list[float], no: list[float]) -> dict[str, float]:
    """The judge's feature of the best candidate: the log-odds of the model's yes (in any of its spellings) over its
    no, asked whether the candidate's lines make it the answer (the model's own probability that it is right)."""
    return {"check_judge": max(min(_logsumexp(yes) - _logsumexp(no), LOGIT_CAP), -LOGIT_CAP)}


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _likelihood(tokens: list[float]) -> tuple[float, float, float, float] | None:
    if not tokens:
        return None
    return sum(tokens) / len(tokens), tokens[0], tokens[-1], sum(tokens)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _named(name: str, asked: set[str]) -> float:
    """The share of a name's parts (`DEFAULT_REDIRECT_LIMIT`: default, redirect, limit) that are forms of the
    question's words: whether the name whose value a candidate is, is about what was asked."""
    parts = [p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)]
    if not parts:
        return 0.0

    def form_of(part: str, word: str) -> bool:
        short, long = sorted((part, word), key=len)
        return len(short) >= 4 and long.startswith(short) or part == word

    return sum(any(form_of(p, w) for w in asked) for p in parts) / len(parts)


def _agreement(c: Candidate, free: str | None, said: str | None) -> float:
    """1 when the model's answer is the candidate (as a set, for a set; "7" for "seven"), 0.5 when one holds the other
    as whole words; a name's value agrees as the name does."""
    if not free:
        return 0.0
    if c.items:
        given = {key(i) for i in load().items(said or "")}
        mine = {key(i) for i in c.items}
        return 1.0 if given == mine else 0.5 if given and (given < mine or mine < given) else 0.0
    candidate = key(c.source) if c.source else c.key
    if free in (candidate, digits(candidate)):
        return 1.0
    inside = re.search(rf"(?<![\w.]){re.escape(candidate)}(?![\w])", free) or \
        re.search(rf"(?<![\w.]){re.escape(free)}(?![\w])", candidate)
    return 0.5 if inside else 0.0


def _near(c: Candidate, best: int, terms_at) -> float:
    """How close the span sits to a question word in its best sentence (1 beside it, towards 0 far away)."""
    if not c.spots:
        return 0.0
    spot = c.spots[best]
    spans = [(s, e) for s, e in terms_at(spot.sentence.text) if e <= spot.start or s >= spot.end]
    if not spans:
        return 0.0
    gap = min(spot.start - e if e <= spot.start else s - spot.end for s, e in spans)
    return math.exp(-max(gap, 0) / NEAR_CHARS)


ANSWER = ("a_best", "a_margin", "a_share", "a_free", "a_pool", "a_lm_share", "a_lm_margin", "a_greedy",
          "a_answer_now", "a_type", "a_type_exact", "a_members", "a_cover", "a_echo", "a_judge_margin", "a_match",
          "a_match_top", "a_near", "a_mentions") + \
    tuple(f"a_{f}" for f in CHECK)
"""Features of a reading's best answer against the pool it won over (the confidence's, not the ranking's): how
sure the scorer is of it, by how much it beats the runner-up, whether the model's own answer is it, whether its
type is the one asked, and how much of it is the question's own words (an echo of the question is seldom the
answer), and by how much the model, asked, holds it right more than the runner-up it also asked about; and the
retrieval's view of its line: how well that line matches the question against the best shown line, whether it is
the best, how near the answer sits to a question word in it, and how many shown lines hold the answer."""
OF_THE_BEST = {"a_free": "free", "a_greedy": "lm_greedy", "a_answer_now": "answer_now", "a_type": "type_fits",
               "a_type_exact": "type_exact", "a_echo": "echo", "a_members": "members", "a_cover": "cover",
               "a_match": "match", "a_match_top": "match_top", "a_near": "near", "a_mentions": "mentions"}
"""The confidence's features that are the best candidate's own (0 where its row lacks one)."""
LOGIT_CAP = 12.0
"""Log-odds beyond this say nothing more (a probability of 1 - 6e-6)."""


def answer_features(ranked: list[tuple[float, dict[str, float]]]) -> dict[str, float]:
    """The confidence's features of a reading: its candidates as (probability, feature row), the best first."""
    if not ranked:
        return {}
    (p, row), others = ranked[0], ranked[1:]
    second = max((q for q, _ in others), default=0.0)
    share = row.get("lm_share")
    rival = max((r["lm_share"] for _, r in others if "lm_share" in r), default=None)
    total = sum(q for q, _ in ranked)
    return {"a_best": _logit(p), "a_margin": _logit(p) - _logit(second), "a_share": p / total if total else 0.0,
            "a_pool": math.log1p(len(ranked)), "a_lm_share": share if share is not None else 0.0,
            "a_lm_margin": min(share - rival, LOGIT_CAP) if share is not None and rival is not None else 0.0,
            **{name: row.get(f, 0.0) for name, f in OF_THE_BEST.items()},
            **{f"a_{f}": row[f] for f in CHECK if f in row}, **_judge_margin(row, [r for _, r in others])}


def _judge_margin(best: dict[str, float], others: list[dict[str, float]]) -> dict[str, float]:
    """The judge's log-odds for the best answer less those for the likeliest-ranked other it judged (none unless it
    judged both)."""
    rival = next((r["check_judge"] for r in others if "check_judge" in r), None)
    return {"a_judge_margin": best["check_judge"] - rival} if "check_judge" in best and rival is not None else {}


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return max(min(math.log(p / (1.0 - p)), LOGIT_CAP), -LOGIT_CAP)
