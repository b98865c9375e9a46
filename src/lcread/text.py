"""Readings of text that every layer shares (the search, the evidence, the reader): what holds a value of a kind,
where an entry of a manual starts, a table of contents' line, spelling. Their words are the language table's."""

from __future__ import annotations

import functools
import re
import string

from lcread.language import load

NUMBER = re.compile(r"(?<![\w.#])(?<!U\+)\d+(?:,\d{3})*(?:\.\d+)*(?![\w#])(?!\.\d)")
"""A number as written: 21,595, 3.5, and a dotted version or address whole (2.28.1, 10.0.0.1); not a piece of a
placeholder such as the 4#4 that LaTeX-made HTML leaves for a formula, nor of a name (the 0 of Qwen2.5-0.5B), nor
a character's code point (U+0023)."""
PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/[\w.+-]+(?:/[\w.+-]+)*/?|(?<![\w/.])[\w.+-]+/[\w.+/-]+")
TOC_LEADER = re.compile(r"(?:\.\s?){4,}\s*(\d+)\s*$")
"""A table of contents' line: a title, dot leaders, a page number ("3.7.6 Signals . . . . 45"). It names a subject
and states nothing about it."""


@functools.lru_cache(maxsize=4)
def _patterns(name: str) -> dict[str, re.Pattern]:
    lang = load(name)
    words = list(lang.counting_words)
    references = "|".join(lang.references)
    months = "|".join(sorted(lang.months, key=len, reverse=True))
    return {
        "date": re.compile(r"\b(1\d{3}|20\d{2})s?\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(am|pm|a\.m\.|p\.m\.)|"
                           r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b(" +
                           "|".join(sorted(lang.months | lang.weekdays, key=len, reverse=True)) + r")\b", re.I),
        "full_date": re.compile(rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}\s+(?:{months})\.?,?\s+\d{{4}}\b|"
                                rf"\b(?:{months})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b", re.I),
        "spelled": re.compile(r"\b(?:" + "|".join(words) + r")\b", re.I),
        "reference": re.compile(r"^\s*\d+(?:\.\d+)*\.?\s|\[(?:page )?\d+\]|\b(?:" + references +
                                r")s?\s+\d[\d.]*", re.I | re.M),
        "spelling": re.compile(r"\b(" + "|".join(sorted(lang.spellings, key=len, reverse=True)) + r")", re.I)
        if lang.spellings else re.compile(r"(?!)"),
    }


def full_date(text: str) -> re.Match | None:
    """The first date in a text that gives day, month and year ("2022-02-26", "28 Dec 2021", "March 5, 2020")."""
    return _patterns(load().name)["full_date"].search(text)


def holds_value(text: str, kind: str) -> bool:
    """Whether a text holds a value of the kind a question asks for (a number, a date, a path), leaving out what
    only points elsewhere: section numbers heading a line, page marks, footnote marks, "see section 4"."""
    p = _patterns(load().name)
    text = p["reference"].sub(" ", text)
    if kind == "number":
        return NUMBER.search(text) is not None or p["spelled"].search(text) is not None
    if kind == "date":
        return p["date"].search(text) is not None
    if kind == "path":
        return PATH.search(text) is not None
    return False


def entry_name(line: str) -> bool:
    """A short line without closing punctuation: a heading, or the name an entry of a manual begins with
    (`keyseq-timeout`, `mark-directories`): where a paragraph or an entry starts."""
    t = line.strip()
    letters = sum(c.isalpha() for c in t)
    return 0 < len(t) <= 40 and len(t.split()) <= 4 and not t.endswith((".", ",", ";", ":", ")", "!", "?")) \
        and t[:1].isalnum() and letters >= len(t.replace(" ", "")) / 2 and "=" not in t  # VAR X = 1 states, not heads


def us_spelling(text: str) -> str:
    """The language's other spellings read as one (British as American: "colours" finds "colors")."""
    lang = load()
    return _patterns(lang.name)["spelling"].sub(lambda m: lang.spellings[m.group(1).lower()], text)


def normalize(text: str) -> str:
    """An answer as compared: lower case, without its label ("Answer:"), punctuation and articles, whitespace
    collapsed."""
    lang = load()
    text = lang.answer_label.sub("", text.strip()).lower()
    text = "".join(ch if ch not in string.punctuation else " " for ch in text)
    return " ".join(w for w in text.split() if w not in lang.articles)
