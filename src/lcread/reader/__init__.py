"""The scored reader (haystack's extractive reader, in shape): candidate spans of what was shown, one score for each
from generic features, a calibrated probability, a no-answer probability, one threshold. Its words are the
language table's; its weights are calibrated on the project's suites, per model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from lcread import prompts
from lcread.grounding.evidence import Citation, EvidenceLog, cite
from lcread.models import Scored, Scoring
from lcread.reader import derived
from lcread.reader.candidates import Candidate, Patterns, Spot, _patterns, digits, extract, key, page_in, seams
from lcread.reader.features import Context, checked, features, judged
from lcread.reader.question import Asked, asked, parse_options
from lcread.reader.scorer import Scorer, scorer_for

ANSWER_PREFIX = 'answer "'
"""The reply's start the spans are scored after: the command that answers, as the model writes it."""
ANSWER_END = '"'
READER_PREFIX = '"'
"""The reply's start after the reader's own prompt (reader_passages.txt asks for the answer in double quotes)."""
FREE_CHARS = 2_000
"""Characters of the model's own answer read at most (an answer is a value or a few sentences)."""
PASSAGE_CHARS = 6_000
"""Characters of shown lines the reader's own call puts before the question (one read's worth)."""
PASSAGE_LINE_CHARS = 600
"""Characters of one shown line at most in those passages (a long line is cut around its best sentence)."""
CHECK_CANDIDATES = 4
"""The best candidates the check reads again, each in its own line, against each other and against no answer."""
CHECK_LINE_CHARS = 300
"""Characters of a candidate's line in the check, around the candidate."""
JUDGE_CANDIDATES = 2
"""The best grounded candidates the judge asks the model about, each in a call of its own."""
JUDGE_LINES = 3
"""Lines of a candidate the judge reads at most (those that match the question best)."""

__all__ = ["Asked", "Candidate", "Reader", "Reading", "Scorer", "asked", "parse_options", "scorer_for"]


@dataclass
class Ranked:
    candidate: Candidate
    probability: float
    row: dict[str, float]


@dataclass
class Reading:
    """One round of the reader: every candidate with its probability, the best first."""

    ranked: list[Ranked] = field(default_factory=list)
    threshold: float = 1.0
    floor: float = 0.0
    """Below this confidence the best candidate is no answer."""
    settle: float = 1.0
    """At or above this confidence the run ends with the best answer, verified or not (reading on was measured
    not to make it more often right)."""
    free: str | None = None
    applies: bool = True
    """False for an open question (explain, summarise): its answer is the model's, and never verified."""
    sure: float | None = None
    """The calibrated confidence in the best answer (`Scorer.confidence`); None: the best candidate's
    probability."""

    @property
    def best(self) -> Ranked | None:
        return self.ranked[0] if self.ranked else None

    @property
    def answer(self) -> str | None:
        """The best candidate, if it is an answer: grounded (or the model's own words to an open question) and not
        below the floor of confidence."""
        best = self.best
        if best is None or not self.applies:
            return best.candidate.text if best else None
        return best.candidate.text if best.candidate.spots and self.confidence >= self.floor else None

    @property
    def confidence(self) -> float:
        if self.sure is not None:
            return self.sure
        return self.best.probability if self.best else 0.0

    @property
    def grounded(self) -> bool:
        return bool(self.best and self.best.candidate.spots)

    @property
    def verified(self) -> bool:
        return self.applies and self.grounded and self.confidence >= self.threshold

    @property
    def settled(self) -> bool:
        return self.applies and self.grounded and self.confidence >= min(self.settle, self.threshold)

    @property
    def no_answer(self) -> float:
        """The probability that no candidate is right (each one's 1 - p, multiplied)."""
        out = 1.0
        for r in self.ranked:
            out *= 1.0 - r.probability
        return out

    @staticmethod
    def missing(reading: "Reading | None", answer: str | None) -> str | None:
        """Why an answer is not verified, in words (None when it is, or when no check applies)."""
        if answer is None:
            return "the run ended before an answer was given"
        if reading is None:
            return "no reading of the evidence was made"
        if reading.verified or not reading.applies:
            return None
        if not reading.grounded:
            return "the answer is not in any line the tools showed"
        return f"confidence {reading.confidence:.0%} is below the {reading.threshold:.0%} that verifies an answer"

    def citations(self) -> list[Citation]:
        """The shown sentences the best answer sits in, the one that matches the question best first."""
        if not self.best:
            return []
        seen, out = set(), []
        for spot in self.best.candidate.spots:
            c = cite(spot.sentence)
            if (c.doc, c.line, c.start) not in seen:
                seen.add((c.doc, c.line, c.start))
                out.append(c)
        return out[:3]

    def to_dict(self) -> dict:
        """The reading as the trace records it: every candidate with its probability and features (what
        `lcread calibrate --reader` fits a model's scorer on)."""
        return {"confidence": round(self.confidence, 4), "no_answer": round(self.no_answer, 4),
                "threshold": self.threshold, "settle": self.settle, "free": self.free,
                "candidates": [{"text": r.candidate.text, "type": r.candidate.type, "p": round(r.probability, 4),
                                "features": {k: round(v, 4) for k, v in r.row.items()}} for r in self.ranked]}


class Reader:
    """Reads the run's evidence for the question: which candidates to score, then their probabilities."""

    def __init__(self, question: Asked, evidence: EvidenceLog, scorer: Scorer, match, terms_at, place_of=None,
                 heading_of=None, count_lines=None, cover=None, count_entries=None):
        self.asked, self.evidence, self.scorer = question, evidence, scorer
        self.match, self.terms_at, self.cover = match, terms_at, cover
        self.place_of, self.heading_of, self.count_lines = place_of, heading_of, count_lines
        self.count_entries = count_entries
        """(doc, line) -> the page or heading path of a converted document's line; (doc, line) -> the heading a line
        sits under; words -> how many lines of the whole input hold them all, and the first of those lines; words ->
        how many release or log entries of the searched documents hold those of them any entry's header holds."""
        self._counts: list[Candidate] | None = None
        self.scores: dict[str, tuple[list[float], list[int] | None]] = {}
        """Candidate -> the token log-probabilities (and ranks) of the last call that scored it."""
        self.answer_now = 0.0

    @property
    def words(self) -> list[str]:
        return self.asked.words

    def pool(self) -> list[Candidate]:
        """The spans of what was shown, and what lcread works out from them (values of names, sets, headings,
        counts)."""
        sentences = self.evidence.sentences()
        spans = extract(self.asked, sentences, self.match, self.place_of)
        values = derived.resolved(spans, sentences)
        made = values + derived.sections(self.asked, sentences, self.heading_of) + \
            self.counts() + \
            derived.sets(self.asked, spans + values, lambda t: self.evidence.searched(t) is not None) + \
            derived.enumerations(self.asked, sentences, self.match) + \
            derived.lists(self.asked, sentences, self.evidence.whole_lines(), self.match)
        have = {c.key: c for c in spans}
        out = list(spans)
        for c in made:  # a value lcread worked out that is also a span is one candidate: the span, so worked out
            same = have.get(c.key)
            if same is None:
                have[c.key] = c
                out.append(c)
            elif c.source or c.items or c.counted:
                same.source, same.items = same.source or c.source, same.items or c.items
                same.counted, same.unit = (same.counted, same.unit) if same.counted else (c.counted, c.unit)
                same.complete, same.partial, same.listed = c.complete, c.partial, same.listed or c.listed
                same.spots += [p for p in c.spots if p not in same.spots]
        return out

    def counts(self) -> list[Candidate]:
        """lcread's counts for a "how many" question, made once a run (they read the whole input, not what was
        shown); copies, as the pool merges spots into its candidates."""
        if self._counts is None:
            self._counts = derived.counts(self.asked, self.count_lines, self.count_entries)
        return [replace(c, spots=list(c.spots)) for c in self._counts]

    def names_to_resolve(self, reading: "Reading") -> list[str]:
        """The constant-like names among the best candidates, when the question asks for a value (not a name):
        their definitions may hold it."""
        if self.asked.type in ("identifier", "name", "option", "section", "page", "choice", "yesno", "open"):
            return []
        return [r.candidate.text.strip("$") for r in reading.ranked[:3]
                if r.candidate.type == "identifier" and derived.CONSTANT_NAME.fullmatch(r.candidate.text.strip("$"))]

    def follow(self, reading: "Reading") -> list[str]:
        """The items of the best sets whose own lines were not searched yet (a chain's next link may sit there):
        what lcread greps itself before the next step."""
        out: list[str] = []
        for r in reading.ranked[:3]:
            for item in r.candidate.items or []:
                if self.evidence.searched(item) is None and item not in out:
                    out.append(item)
        return out[:derived.SET_ITEMS]

    def lists_to_read(self) -> list[tuple[str, int, int]]:
        """Where a list laid out below the lines that match the question best goes on past what was shown
        (document, first line, last line): what lcread reads itself before the next step."""
        return derived.list_reads(self.asked, self.evidence.sentences(), self.evidence.whole_lines(), self.match)

    def scoring(self, pool: list[Candidate], prefix: str = ANSWER_PREFIX) -> Scoring | None:
        """What the model should score with its next call: each candidate as the answer it would write after
        `prefix` (the agent's `answer "`, the reader's own prompt's `"`), then each number the document wrote in
        words as its digits (`_digit_forms`)."""
        if not pool:
            return None
        texts = [c.text for c in pool] + [text for _, text in _digit_forms(pool)]
        return Scoring(prefix, tuple(t.replace('"', "'") + ANSWER_END for t in texts))

    def passages(self, budget: int = PASSAGE_CHARS, pool: list[Candidate] | None = None) -> str:
        """The shown lines that match the question best (a list's items as well as its lead), in document order, as
        `DOC:LINE: text` (with the line's page, where its document has pages: what a page is read from), then what
        lcread worked out of the whole input beside them (its counts), as the reader's own call reads them before
        the question: the prototype's one pass over the question and its passages."""
        lines: dict[tuple[str, int], str] = {}
        for p in self.evidence.pieces:
            if p.kind != "heading" and p.text.strip():
                lines[(p.doc, p.line)] = (lines.get((p.doc, p.line), "") + " " + p.text).strip()
        counted = [prompts.render(f"reader_count_{c.unit}", count=c.text, words=", ".join(c.counted))
                   for c in pool or [] if c.counted]
        budget -= sum(len(c) + 1 for c in counted)
        best = {k: max(map(self.match, _SENTENCE.findall(text)), default=0.0) for k, text in lines.items()}
        for c in pool or []:  # a list's items are read with its lead, whatever words they hold
            if c.listed:
                held = [k for p in c.spots if (k := (p.sentence.doc, p.sentence.line)) in lines]
                lead = max((best[k] for k in held), default=0.0)
                best.update({k: max(best[k], lead) for k in held})
        chosen, used = [], 0
        for k in sorted(lines, key=lambda k: (-best[k], k)):  # a line ranks by its best sentence
            text = f"{k[0]}:{k[1]}{self._page(*k)}: {_cut(lines[k], self.match)}"
            if used + len(text) + 1 > budget:
                continue
            chosen.append((k, text))
            used += len(text) + 1
        return "\n".join([text for _, text in sorted(chosen)] + counted)

    def _page(self, doc: str, line: int) -> str:
        """` (page 17)` for a line of a document that has pages, else nothing."""
        page = page_in(self.place_of(doc, line)) if self.place_of else None
        return f" (page {page})" if page else ""

    def read(self, pool: list[Candidate], scored: Scored | None, free: str | None = None) -> Reading:
        """The candidates' probabilities after a call; the model's own answer (`free`) counts for the candidate
        it names, and is a candidate itself when it names none. `scored` holds the span likelihoods of `pool`
        from this call; without it, a candidate keeps those of the last call that scored it."""
        pool = list(pool)
        if scored is not None:
            for i, c in enumerate(pool):
                self.scores[c.key] = (scored.texts[i], scored.ranks[i] if scored.ranks else None)
            for j, (i, _) in enumerate(_digit_forms(pool), start=len(pool)):  # a number in words: its likelier form
                if j < len(scored.texts) and _mean(scored.texts[j]) > _mean(scored.texts[i]):
                    self.scores[pool[i].key] = (scored.texts[j], scored.ranks[j] if scored.ranks else None)
            self.answer_now = scored.prefix
        known = [self.scores.get(c.key) for c in pool]
        likelihood = [k[0] if k else [] for k in known] if any(known) else None
        ranks = [(k[1] or []) if k else [] for k in known] if any(known) else None
        free = trimmed((free or "")[:FREE_CHARS])
        if free and not any(key(free) in (c.key, digits(c.text)) for c in pool):
            pool.append(derived.judge_set(self.located(free), self.asked, pool,
                                          lambda t: self.evidence.searched(t) is not None))
            if likelihood:  # the model wrote it: as likely as the likeliest candidate, each token its first choice
                best = max(range(len(likelihood)), key=lambda i: _mean(likelihood[i]))
                likelihood.append(likelihood[best])
                if ranks is not None:
                    ranks.append([0] * len(likelihood[best]))
        ctx = Context(self.asked, self.match, self.terms_at, free=free, likelihood=likelihood, ranks=ranks,
                      answer_now=self.answer_now, cover=self.cover)
        rows = features(pool, ctx)
        # an answer is one of the grounded candidates whenever there is one: an ungrounded answer is never chosen
        # over a value a shown line holds, whatever its score
        ranked = sorted((Ranked(c, self.scorer.probability(r), r) for c, r in zip(pool, rows)),
                        key=lambda r: (not r.candidate.spots, -r.probability))
        return Reading(ranked, self.scorer.threshold, self.scorer.floor, self.scorer.settle, free,
                       applies=self.asked.type != "open",
                       sure=self.scorer.confidence([(r.probability, r.row) for r in ranked]))

    def check(self, reading: "Reading") -> tuple[str, list[str], list[Ranked]] | None:
        """A second view of a reading (the confidence's, not the ranking's): the lines of its best candidates alone,
        each cut around its candidate, in document order, and those candidates and the language's words for no
        answer as the replies the model scores after them. A view without the other passages tells whether the best
        answer still wins where only its rivals compete, and whether no answer does better than any of them."""
        top = [r for r in reading.ranked[:CHECK_CANDIDATES] if r.candidate.spots]
        if not top or not reading.applies:
            return None
        lines: dict[tuple[str, int], str] = {}
        for r in top:
            k, text = self._line_of(max(r.candidate.spots, key=lambda p: self.match(p.sentence.text)))
            lines.setdefault(k, text)
        replies = [READER_PREFIX + text.replace('"', "'") + ANSWER_END
                   for text in [r.candidate.text for r in top] + [_language().none]]
        return "\n".join(lines[k] for k in sorted(lines)), replies, top

    def checked(self, reading: "Reading", top: list[Ranked], scores: list[float]) -> None:
        """The check's scores (each reply's log-probability, no answer's last) into the rows of the candidates it
        read (`features.checked`), and the reading's confidence again."""
        for r, row in zip(top, checked(scores)):
            r.row.update(row)
        self._sure_again(reading)

    def judge(self, reading: "Reading") -> list[tuple[Ranked, str, str]]:
        """The judge's views of a reading (the confidence's, not the ranking's): for each of its best grounded
        candidates, its own lines, those that match the question best, each cut around it, in document order, and
        the candidate as the proposed answer, for the model to say whether the lines make it the answer (yes or no,
        scored: it writes nothing)."""
        if not reading.applies:
            return []
        out = []
        for r in [r for r in reading.ranked if r.candidate.spots][:JUDGE_CANDIDATES]:
            lines: dict[tuple[str, int], str] = {}
            for spot in sorted(r.candidate.spots, key=lambda p: -self.match(p.sentence.text)):
                k, text = self._line_of(spot)
                if len(lines) < JUDGE_LINES:
                    lines.setdefault(k, text)
            out.append((r, "\n".join(lines[k] for k in sorted(lines)), r.candidate.text))
        return out

    def judge_replies(self) -> list[str]:
        """The replies the judge scores: the language's yes, then its no, each as written and capitalised
        (`judged` reads them in this order)."""
        return [w for word in (_language().yes, _language().no) for w in (word, word.capitalize())]

    def _line_of(self, spot: Spot) -> tuple[tuple[str, int], str]:
        """A candidate's line as the check and the judge show it, `DOC:LINE (page N): text`, cut to
        CHECK_LINE_CHARS around the candidate, with its (document, line)."""
        k = (spot.sentence.doc, spot.sentence.line)
        cut = _window(spot.sentence.text, (spot.start + spot.end) // 2, CHECK_LINE_CHARS)
        return k, f"{k[0]}:{k[1]}{self._page(*k)}: {cut}"

    def judged(self, reading: "Reading", judged_ones: list[tuple[Ranked, list[float]]]) -> None:
        """The judge's scores (of `judge_replies`, in order: the yeses, then the noes) into the rows of the
        candidates it judged (`features.judged`), and the reading's confidence again."""
        for r, scores in judged_ones:
            half = len(scores) // 2
            r.row.update(judged(scores[:half], scores[half:]))
        self._sure_again(reading)

    def _sure_again(self, reading: "Reading") -> None:
        reading.sure = self.scorer.confidence([(r.probability, r.row) for r in reading.ranked])

    def located(self, answer: str) -> Candidate:
        """The model's answer as a candidate: its text, where shown sentences hold it whole; to a question asking
        for several values, each of its items."""
        items = _language().items(answer)
        if self.asked.plural and len(items) >= 2:
            found = [self.located(i) for i in items]
            spots = [s for c in found for s in c.spots[:1]] if all(c.spots for c in found) else []
            return Candidate(", ".join(items), "list", spots, items=items)
        words = answer.split()
        pattern = re.compile(r"(?<![\w])" + r"\s+".join(re.escape(w) for w in words) + r"(?![\w])", re.I) \
            if words else None
        sentences = self.evidence.sentences()
        spots = [Spot(s, m.start(), m.end()) for s in sentences if pattern and (m := pattern.search(s.text))]
        spots += [seam.spot(m.start()) for seam in seams(sentences)
                  if pattern and (m := pattern.search(seam.text)) and seam.crosses(m.start(), m.end())]
        return Candidate(answer, _type_of(answer), spots)


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_EDGE = re.compile(r"^(?:[\s\"'`,;“”‘’]|:(?!:))+|(?:[\s\"'`,;“”‘’]|(?<!:):)+$")  # `::1` keeps its colons


def trimmed(answer: str) -> str | None:
    """The model's answer without what it copied from around the value: the quotes (straight or curly, as a
    converted document writes them), the separators on either side
    (`,5d` of "lifetime,5d", `:2.28.1`), and a closing bracket it did not open (`50)`)."""
    text = answer
    while True:
        text, cut = _EDGE.sub("", text), text
        for close, open_ in ((")", "("), ("]", "["), ("}", "{")):
            if text.endswith(close) and text.count(close) > text.count(open_):
                text = text[:-1]
        if text == cut:
            return text or None


def _cut(text: str, match) -> str:
    """A line of at most PASSAGE_LINE_CHARS characters: a longer one around its sentence that matches best."""
    if len(text) <= PASSAGE_LINE_CHARS:
        return text
    parts = list(_SENTENCE.finditer(text))
    best = max(parts, key=lambda m: match(m.group()), default=None)
    return _window(text, (best.start() + best.end()) // 2 if best else 0, PASSAGE_LINE_CHARS)


def _window(text: str, middle: int, chars: int) -> str:
    """`chars` characters of `text` around `middle`, with "..." where it was cut."""
    if len(text) <= chars:
        return text
    start = max(0, min(middle - chars // 2, len(text) - chars))
    return ("..." if start else "") + text[start:start + chars] + ("..." if start + chars < len(text) else "")


def _digit_forms(pool: list[Candidate]) -> list[tuple[int, str]]:
    """(index, digits) for each candidate that is a number the document wrote in words: a model writes "2" where a
    manual says "at least two characters", so the word alone would score as unlikely as a wrong answer. Both forms
    are scored and the candidate takes the likelier (the answer stays as the document wrote it)."""
    return [(i, d) for i, c in enumerate(pool) if c.type == "number" and (d := digits(c.text, _language()))]


def _mean(tokens: list[float]) -> float:
    return sum(tokens) / len(tokens) if tokens else -99.0


def _type_of(text: str) -> str:
    """The type of an answer that is one value (a path, a number with its unit: "40 euros"), else a word or
    several."""
    patterns: Patterns = _patterns(_language())
    text = text.strip().rstrip(".")
    for kind, start, end, span in patterns.spans(text, {"pair", "date", "number", "path", "option", "identifier",
                                                        "quoted", "name"}):
        rest = text[end:].split()
        if start == 0 and (end >= len(text) or kind in ("number", "pair") and len(rest) <= 2
                           and all(w.isalpha() for w in rest)):
            return kind
    return "word"


def _language():
    from lcread.language import load

    return load()
