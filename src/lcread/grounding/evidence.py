"""The run's evidence: every piece of a document the tools showed, split into sentences, and the
citations made from them. A citation is only ever made from a shown piece, so it resolves by
construction; a quote the model writes is checked against the document and the shown pieces."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from functools import cached_property

from lcread.text import entry_name, us_spelling
from lcread.tools.evidence import Search, Shown

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[]?[A-Z0-9])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "«": '"', "»": '"'})


def norm(text: str) -> str:
    """Lower case, straight quotes, no thousands separators, whitespace collapsed, American spelling."""
    return us_spelling(" ".join(_THOUSANDS.sub("", text.translate(_QUOTES)).lower().split()))


def has(haystack_norm: str, needle: str) -> bool:
    """Whether the normalised text holds the needle as a whole word (or whole number)."""
    n = norm(needle)
    if not n:
        return False
    return re.search(_joined(n), haystack_norm) is not None


@functools.lru_cache(maxsize=4096)
def _joined(n: str) -> str:
    """The needle as a whole word, its parts joined by a hyphen, an underscore or a space alike (User-Agent,
    user_agent, user agent)."""
    parts = re.split(r"(?<=[a-z0-9])[-_ ](?=[a-z0-9])", n)
    return r"(?<![a-z0-9])" + r"[-_ ]".join(re.escape(p) for p in parts) + r"(?![a-z0-9])"


@dataclass(frozen=True)
class Sentence:
    doc: str
    line: int
    start: int
    """Character offset in the line."""
    text: str
    section: str | None = None
    title: str | None = None
    """A short title line just above (a heading or a paragraph's title), when it was shown too."""

    @cached_property
    def norm(self) -> str:
        return norm(self.text)

    @cached_property
    def context(self) -> str:
        """The sentence with its section and title, and in a folder its file's path (requests/adapters.py is
        about requests' adapters): where a term may sit for the sentence to carry it."""
        where = re.sub(r"[/_.]+", " ", self.doc) if "/" in self.doc else None
        return norm(" ".join(filter(None, [where, self.section, self.title, self.text])))


@dataclass(frozen=True)
class Citation:
    doc: str
    line: int
    start: int
    end: int
    quote: str
    place: str | None = None
    """Where the line sits in the source of a converted document: "page 12", a heading path."""

    def to_dict(self) -> dict:
        out = {"document": self.doc, "line": self.line, "chars": [self.start, self.end], "quote": self.quote}
        return {**out, "place": self.place} if self.place else out

    def label(self) -> str:
        return f"{self.doc}:{self.line}" + (f" (chars {self.start:,}-{self.end:,})" if self.start else "") + \
            (f" [{self.place}]" if self.place else "")


def cite(s: Sentence) -> Citation:
    return Citation(s.doc, s.line, s.start, s.start + len(s.text), s.text)


@dataclass
class EvidenceLog:
    """Everything the tools showed in one run."""

    pieces: list[Shown] = field(default_factory=list)
    searches: list[Search] = field(default_factory=list)
    _seen: set = field(default_factory=set, repr=False)
    _sentences: list[Sentence] | None = field(default=None, repr=False)

    def add(self, shown: list[Shown], search: Search | None = None) -> None:
        for piece in shown:
            key = (piece.doc, piece.line, piece.start, piece.text, piece.section)
            if key not in self._seen:
                self._seen.add(key)
                self.pieces.append(piece)
                self._sentences = None
        if search is not None:
            self.searches.append(search)

    def shown_lines(self) -> dict[tuple[str, int], str]:
        """Each shown line (document, number) with the text shown of it."""
        out: dict[tuple[str, int], str] = {}
        for p in self.pieces:
            out[(p.doc, p.line)] = out.get((p.doc, p.line), "") + " " + p.text
        return out

    def whole_lines(self) -> dict[tuple[str, int], str]:
        """Each line shown whole (document, number), as written: its indentation and its markers kept."""
        return {(p.doc, p.line): p.text for p in self.pieces if p.start == 0 and p.kind != "heading"}

    def sentences(self) -> list[Sentence]:
        if self._sentences is None:
            lines = {(p.doc, p.line): p.text for p in self.pieces if p.start == 0}
            out, seen = [], set()
            for p in self.pieces:
                if p.kind == "heading":
                    continue
                title = _title_above(lines, p.doc, p.line)
                section = p.section[1] if p.section else None
                offset = p.start
                for part in _SENTENCE_END.split(p.text):
                    at = p.text.find(part, offset - p.start)
                    start = p.start + max(at, 0)
                    key = (p.doc, p.line, part.strip())
                    if part.strip() and key not in seen:
                        seen.add(key)
                        out.append(Sentence(p.doc, p.line, start, part.strip(), section, title))
                    offset = start + len(part)
            self._sentences = out
        return self._sentences

    def searched(self, term: str) -> Search | None:
        """A complete grep whose pattern holds the term (so every line with the term was shown)."""
        t = norm(term)
        for s in reversed(self.searches):
            if s.complete and not s.counted and any(t in norm(p) or norm(p) in t and len(norm(p)) >= 4
                                                    for p in s.patterns):
                return s
        return None


ENTRY_LINES = 10
"""How far above a sentence lcread looks, through shown lines of one paragraph, for the name of its entry."""


def _title_above(lines: dict, doc: str, line: int) -> str | None:
    """The title a line sits under: the name the entry holding the line begins with (`keyseq-timeout`, a few
    shown lines up with no blank line between), else the line just above when it reads as a title."""
    for n in range(line - 1, max(0, line - 1 - ENTRY_LINES), -1):
        text = lines.get((doc, n))
        if text is None or not text.strip():
            break
        if entry_name(text):
            return text.strip()
    above, own = lines.get((doc, line - 1)), lines.get((doc, line), "")
    wrapped = own.lstrip()[:1].islower()  # the line goes on from the one above: that one is no title
    return above.strip() if above and _is_title(above) and not wrapped else None


def _is_title(line: str) -> bool:
    t = line.strip()
    return (0 < len(t) <= 80 and re.match(r"[#A-Z0-9]", t) is not None and not t.endswith((".", ",", ";", ":", "?", '"'))
            and not re.search(r"\d{3,}", t))
