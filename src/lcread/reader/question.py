"""What a question asks for, as far as the reader needs it: the type of answer (by the language's asking phrases),
whether it wants several values or a pair, its options, and its distinguishing terms. Nothing here decides an
answer: the type is one feature among the scorer's."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lcread.language import Language, load

TYPES = ("open", "page", "section", "yesno", "choice", "option", "identifier", "path", "date", "count", "number", "name", "text")
FITS: dict[str, tuple[str, ...]] = {
    "open": (),
    "page": ("page",),
    "section": ("section",),
    "yesno": ("yesno",),
    "choice": ("choice",),
    "option": ("option", "quoted", "identifier"),
    "identifier": ("identifier", "quoted", "option", "path"),
    "path": ("path", "quoted", "identifier"),
    "date": ("date", "number"),
    "count": ("number", "count"),
    "number": ("number", "pair"),
    "name": ("name", "identifier", "quoted", "word", "path", "option"),
    "text": ("quoted", "identifier", "path", "option", "number", "pair", "date", "name", "word"),
}
"""The candidate span types each answer type takes, the one it asks for most first."""

_QUOTED = re.compile(r"[\"“‘«`]([^\"”’»`]{2,200})[\"”’»`]|(?<![A-Za-z])'([^']{2,200})'(?![A-Za-z])")
_TERM = re.compile(r"(?<![\w])(?:[A-Za-z]+\d*(?:-[A-Za-z0-9]+)+|__\w+__|(?<![\w/])~?/[\w.\-/]*\w|--?[A-Za-z][\w-]*"
                   r"|[A-Za-z_$][\w$]*(?:[.:][\w$]+)+\(?\)?|[A-Za-z]+[_\d][\w]*|[A-Z]?[a-z]+[A-Z]\w*|[A-Z]{2,}\w*"
                   r"|\d[\d,.]*)")
"""A term starts where a word does: `ChangeLog`, `MySQL` and `PyPI` are terms whole, never from their second letter."""
_OPTION = re.compile(r"(?:^|\s|\()([A-J])[\)\.:]\s+(.+?)(?=\s+\(?[A-J][\)\.:]\s+|$)", re.S)


@dataclass
class Asked:
    question: str
    type: str
    plural: bool = False
    pair: bool = False
    """A number asked for as a pair: a range, or a size as a whole."""
    options: list[tuple[str, str]] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    """Quoted text, identifiers, options, paths and numbers the question names: an answer seldom repeats them."""
    words: list[str] = field(default_factory=list)
    """The question's terms and content words: what marks a line as bearing on it."""

    @property
    def fits(self) -> tuple[str, ...]:
        """The span types an answer takes; a question asking for several values takes a set first."""
        return ("list",) + FITS[self.type] if self.plural else FITS[self.type]

    @property
    def exact(self) -> str | None:
        """The span type the question asks for most, when it asks for one (a text question does not)."""
        return self.fits[0] if self.fits and self.type != "text" else None


def asked(question: str, options: list[tuple[str, str]] | None = None, language: Language | None = None) -> Asked:
    lang = language or load()
    q = " ".join(question.split())
    asks = lang.phrase("condition_first").sub("", q, count=1)
    kind = "choice" if options else next((t for t, p in lang.answers if p.search(asks)), "text")
    terms = terms_of(q)
    content = [w for w in re.findall(r"[a-z][a-z'-]+", q.lower()) if len(w) >= 3 and w not in lang.stopwords
               and w not in lang.asking]
    return Asked(q, kind, plural=bool(lang.phrase("plural").search(asks)) and kind not in ("yesno", "choice"),
                 pair=kind == "number" and bool(lang.phrase("pair").search(asks)), options=list(options or []),
                 terms=terms, words=list(dict.fromkeys(terms + content)))


_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b|(?<=[a-z,;:] )[A-Z][a-z]+\b")
"""Capitalised names: several capitalised words together (Lucan Prideaux), or one inside a sentence."""


def terms_of(text: str) -> list[str]:
    """The names a text mentions: quoted text, identifiers, options, paths, numbers, capitalised names."""
    found = [a or b for a, b in _QUOTED.findall(text)] + [m.group(0).rstrip(".,") for m in _TERM.finditer(text)] + \
        _NAME.findall(text)
    return list(dict.fromkeys(t for t in found if t))


def parse_options(question: str, given: list[str] | None = None) -> tuple[str, list[tuple[str, str]]]:
    """Options from --options ("A) Anne" or plain texts lettered in order) or listed in the question.

    Returns the question without its listed options, and (letter, text) pairs; no options = open-ended.
    """
    if given:
        pairs = []
        for i, item in enumerate(given):
            m = re.match(r"\s*\(?([A-Ja-j])[\)\.:]\s*(.+)", item)
            pairs.append((m.group(1).upper(), m.group(2).strip()) if m else (chr(65 + i), item.strip()))
        return question, pairs
    first = re.search(r"(?:^|\s|\()A[\)\.:]\s+", question)
    if not first:
        return question, []
    pairs = [(m.group(1), m.group(2).strip()) for m in _OPTION.finditer(question[first.start():])]
    letters = [p[0] for p in pairs]
    if len(pairs) < 2 or letters != [chr(65 + i) for i in range(len(pairs))]:
        return question, []
    return question[:first.start()].strip(), pairs
