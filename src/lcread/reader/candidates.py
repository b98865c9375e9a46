"""Candidate answers: typed spans of what the tools showed (numbers with their units, pairs of numbers, dates,
paths, options, identifiers, quoted text, names, plain words), each with every shown sentence it sits in. The
reader scores them; nothing here judges one. Spans come from shown lines only, so a candidate is grounded by
construction."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lcread.grounding.evidence import Sentence, norm
from lcread.language import Language, load
from lcread.reader.question import Asked

MAX_CANDIDATES = 48
"""Candidates scored per round at most: those of the types the question takes first, from the best sentences."""
WORD_SENTENCES = 8
"""Plain words and phrases are taken from this many of the best-matching sentences only."""
MAX_SPAN = 80
"""Characters of a span at most."""
SEAM_CHARS = 60
"""Characters either side of a line break that a span may cross in hard-wrapped text (a name, a date, a number
and its unit wrapped onto the next line)."""
HANDLE_TYPES = ("name", "identifier", "text")
"""The answer types whose question, asking for one thing, takes names of letters and digits (Patterns.HANDLE)."""
WRAPPED_LINE = 200
"""Characters a line holds at most to read as one of hard-wrapped text (a long line is a paragraph of its own)."""


@dataclass(frozen=True)
class Spot:
    sentence: Sentence
    start: int
    end: int
    """The span's characters in the sentence's text."""


@dataclass
class Candidate:
    text: str
    type: str
    spots: list[Spot] = field(default_factory=list)
    computed: bool = False
    """A value lcread worked out (a page, a count, a name's value, a set) rather than a span of the text."""
    source: str | None = None
    """For a name's value: the name it was resolved from."""
    items: list[str] | None = None
    """For a set: its items."""
    complete: bool = False
    """For a set: nothing shown links it to a further item, and every item's own lines were searched."""
    partial: bool = False
    """For a set: a shown line links one of its items to an item it leaves out."""
    counted: tuple[str, ...] | None = None
    """For a count: the words every counted line holds (the reader's own call reads the count beside the
    passages)."""
    unit: str = "lines"
    """For a count: what it counts, lines, entries (a release log's releases, a ChangeLog's entries) or items (of
    a list laid out one item a line)."""
    listed: bool = False
    """For a set or a count of a list laid out one item a line: its spots are the list's lead and its items' lines,
    which the reader's passages show together."""

    @property
    def key(self) -> str:
        return key(self.text)


def page_in(place: str | None) -> str | None:
    """The page number a converted document's place names (`manual.pdf.gz, page 17`: 17), if it names one."""
    m = re.search(r"\bpage (\d+)\b", place or "")
    return m.group(1) if m else None


@dataclass(frozen=True)
class Seam:
    """Where a shown line runs on into the next shown line of its document: the end of the one, a space, the start
    of the other. A span that crosses `join` sits on both lines; it is cited by the first."""

    sentence: Sentence
    """The first line's last sentence."""
    offset: int
    """Where `text` begins in that sentence."""
    text: str
    join: int
    """The joining space's index in `text`."""

    def crosses(self, start: int, end: int) -> bool:
        return start < self.join < end - 1

    def spot(self, start: int) -> Spot:
        return Spot(self.sentence, self.offset + start, len(self.sentence.text))


def seams(sentences: list[Sentence]) -> list[Seam]:
    """The line breaks of hard-wrapped text among shown sentences: a short line that does not end a sentence,
    followed by the next line of its document, also shown."""
    lines: dict[tuple[str, int], list[Sentence]] = {}
    for s in sentences:
        lines.setdefault((s.doc, s.line), []).append(s)
    out = []
    for (doc, line), held in lines.items():
        after = lines.get((doc, line + 1))
        last = max(held, key=lambda s: s.start)
        if not after or last.start + len(last.text) > WRAPPED_LINE or re.search(r"[.!?:;]$", last.text):
            continue
        first = min(after, key=lambda s: s.start)
        tail, head = last.text[-SEAM_CHARS:], first.text[:SEAM_CHARS]
        out.append(Seam(last, len(last.text) - len(tail), f"{tail} {head}", len(tail)))
    return out


def key(text: str) -> str:
    """What makes two answers the same: case, spacing, quotes and a final full stop aside."""
    return norm(text.strip().strip("\"'`“”‘’").rstrip(".,;:"))


def digits(text: str, language: Language | None = None) -> str | None:
    """A number the document wrote in words ("seven"), in the digits a model writes it in ("7"); None for any other
    text, and for the words the language does not read as numbers everywhere (`Language.counting_words`)."""
    value = (language or load()).counting_words.get(key(text))
    return None if value is None else str(value)


class Patterns:
    """The span patterns of one language (months, units and number words are its words)."""

    def __init__(self, lang: Language):
        months = "|".join(sorted(lang.months, key=len, reverse=True))
        units = "|".join(re.escape(u) for u in sorted(lang.units, key=len, reverse=True))
        number = r"(?:0x[0-9a-fA-F]+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)"
        self.number = re.compile(rf"(?<![\w.$/-])-?{number}(?:%|\s?(?:{units})\b)?(?![\w])(?!\.\d)", re.I)
        joins = "|".join(r",(?!\d{3}\b)" if j == "," else re.escape(j) if len(j) == 1 else rf"\b{j}\b"
                         for j in lang.phrase("pair_joins").pattern.split("|"))  # "12,310" is one number
        self.pair = re.compile(rf"(?<![\w.$/-]){number}(?:\s?(?:{units})\b)?\s*(?:{joins})\s*{number}"
                               rf"(?:\s?(?:{units})\b)?(?![\w])(?!\.\d)", re.I)
        self.date = re.compile(
            rf"\b\d{{4}}-\d{{2}}-\d{{2}}(?:[ T]\d{{2}}:\d{{2}}(?::\d{{2}})?)?\b|\b\d{{1,2}}:\d{{2}}(?::\d{{2}})?"
            rf"(?:\s?[ap]\.?m\.?)?(?!\d)|\b(?:\d{{1,2}}\s+)?(?:{months})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b|"
            rf"\b\d{{1,2}}\s+(?:{months})\.?,?\s+\d{{4}}\b|\b(?:{months})\.?\s+\d{{4}}\b", re.I)
        self.words = re.compile(r"\b(?:" + "|".join(sorted(lang.number_words, key=len, reverse=True)) + r")\b", re.I)
        self.lang = lang

    PATH = re.compile(r"(?<![\w.~/-])~?/(?:[\w.+@-]+/?)*[\w.+@-]*|(?<![\w/.-])(?:\.{1,2}/)?[\w.+@-]+(?:/[\w.+@-]+)+/?"
                      r"|(?<![\w/.-])\.[A-Za-z][\w.-]*\w")
    OPTION = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:=[^\s,;)\]\"']+)?")
    IDENTIFIER = re.compile(r"\$?\b[A-Za-z_]\w*(?:(?:\.|::|->)[A-Za-z_]\w*)+(?:\(\))?|\$?\b[A-Za-z_]*_\w+(?:\(\))?"
                            r"|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z][A-Z0-9_]{2,}\b|\$\w+|\b\w+\(\)")
    HANDLE = re.compile(r"\b(?=[A-Za-z][\w-]*?\d)[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*\b(?![.-]?\w)")
    """A name that joins letters and digits, whole: worker-3, eth0, sda1, UTF-8, x86_64, libc6. Taken only where
    the question asks for one thing by name (HANDLE_TYPES): as candidates of every question they crowd out the
    values a count or a set is made of."""
    QUOTED = re.compile(r"\"([^\"\n]{1,60})\"|'([^'\n]{1,60})'|`([^`\n]{1,60})`|[‘“]([^’”\n]{1,60})[’”]")
    NAME = re.compile(r"\b[A-Z][\w+-]*[a-z0-9][\w+-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w+-]*)*")
    WORD = re.compile(r"\b[A-Za-z][A-Za-z-]{2,}\b")

    def spans(self, text: str, kinds: set[str]) -> list[tuple[str, int, int, str]]:
        """(type, start, end, span) for each span of the wanted types in a sentence."""
        out: list[tuple[str, int, int, str]] = []

        def take(kind: str, pattern: re.Pattern, group: bool = False) -> None:
            if kind not in kinds:
                return
            for m in pattern.finditer(text):
                if group:
                    g = next(i for i in range(1, (m.lastindex or 0) + 1) if m.group(i) is not None)
                    s, e = m.start(g), m.end(g)
                else:
                    s, e = m.start(), m.end()
                span = text[s:e].strip()
                if kind == "path" and re.search(r"\w\.$", span):  # a sentence's full stop is not the path's
                    span, e = span[:-1], e - 1
                if span and len(span) <= MAX_SPAN:
                    out.append((kind, s, e, span))

        take("pair", self.pair)
        out = [o for o in out if not re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", o[3])]
        take("date", self.date)
        take("number", self.number)
        if "number" in kinds:
            for m in self.words.finditer(text):
                out.append(("number", m.start(), m.end(), m.group(0)))
        take("path", self.PATH)
        take("option", self.OPTION)
        take("identifier", self.IDENTIFIER)
        if "handle" in kinds:
            take("identifier", self.HANDLE)
        take("quoted", self.QUOTED, group=True)
        take("name", self.NAME)
        return out


def extract(asked: Asked, sentences: list[Sentence], match, place_of=None, language: Language | None = None,
            limit: int = MAX_CANDIDATES) -> list[Candidate]:
    """The candidate answers of the shown sentences, those the question's type takes first, then by how well their
    best sentence matches the question (`match`: text -> score)."""
    lang = language or load()
    if asked.type == "open":
        return []  # an open question's answer is the model's own
    patterns = _patterns(lang)
    fits = set(asked.fits)
    found: dict[str, Candidate] = {}
    score = {s: match(s.text) for s in sentences}
    ranked = sorted(sentences, key=lambda s: -score[s])

    def add(kind: str, text: str, spot: Spot | None, computed: bool = False) -> None:
        k = key(text)
        if not k or k in asked_keys:
            return
        c = found.setdefault(k, Candidate(text, kind, computed=computed))
        if spot is not None and spot not in c.spots:
            c.spots.append(spot)

    asked_keys = {key(t) for t in asked.terms} | {key(asked.question)}
    if asked.type == "yesno":
        best = ranked[:1]
        for word in (lang.yes, lang.no):
            add("yesno", word, Spot(best[0], 0, len(best[0].text)) if best else None)
    elif asked.type == "choice":
        for letter, text in asked.options:
            held = [s for s in ranked if norm(text) in s.norm]
            add("choice", f"{letter}) {text}", Spot(held[0], 0, len(held[0].text)) if held else None)
    elif asked.type == "page" and place_of is not None:
        for s in ranked:
            page = page_in(place_of(s.doc, s.line))
            if page:
                add("page", page, Spot(s, 0, len(s.text)), computed=True)
    kinds = {"pair", "date", "number", "path", "option", "identifier", "quoted", "name"}
    if asked.type in HANDLE_TYPES and not asked.plural:
        kinds.add("handle")
    for s in ranked:
        for kind, start, end, span in patterns.spans(s.text, kinds):
            add(kind, span, Spot(s, start, end))
    for seam in seams(sentences):
        for kind, start, end, span in patterns.spans(seam.text, kinds):
            if seam.crosses(start, end):
                add(kind, span, seam.spot(start))
    if "word" in fits:
        for s in ranked[:WORD_SENTENCES]:
            for m in Patterns.WORD.finditer(s.text):
                if m.group(0).lower() not in lang.stopwords:
                    add("word", m.group(0), Spot(s, m.start(), m.end()))
    order = {t: i for i, t in enumerate(asked.fits)}
    pool = sorted(found.values(), key=lambda c: (order.get(c.type, len(order)),
                                                 -max((score.get(p.sentence, 0.0) for p in c.spots), default=0.0)))
    return pool[:limit]


_CACHE: dict[str, Patterns] = {}


def _patterns(lang: Language) -> Patterns:
    if lang.name not in _CACHE:
        _CACHE[lang.name] = Patterns(lang)
    return _CACHE[lang.name]
