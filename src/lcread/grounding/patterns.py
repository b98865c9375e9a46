"""The patterns and small helpers the sufficiency checks and the grounded values share."""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![\w.#])(?<!U\+)\d+(?:,\d{3})*(?:\.\d+)*(?![\w#])(?!\.\d)")
"""A number as written: 21,595, 3.5, and a dotted version or address whole (2.28.1, 10.0.0.1); not a piece of a
placeholder such as the 4#4 that LaTeX-made HTML leaves for a formula, nor of a name (the 0 of Qwen2.5-0.5B), nor
a character's code point (U+0023)."""
DATE = re.compile(r"\b(1\d{3}|20\d{2})s?\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(am|pm|a\.m\.|p\.m\.)|"
                  r"\b\d{1,2}(st|nd|rd|th) century\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|"
                  r"\b(january|february|march|april|may|june|july|august|september|october|november|december|"
                  r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)
PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/[\w.+-]+(?:/[\w.+-]+)*/?|(?<![\w/.])[\w.+-]+/[\w.+/-]+")
SPELLED = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
                     r"sixty|seventy|eighty|ninety|hundred|thousand)\b", re.I)
"""Numbers written as words ("at least two characters"); "one" and "zero" are left out, mostly not numbers."""
_NOT_A_VALUE = re.compile(r"^\s*\d+(?:\.\d+)*\.?\s|\[(?:page )?\d+\]|\b(?:page|section|chapter|figure|table|"
                          r"footnote|line)s?\s+\d[\d.]*", re.I | re.M)
LABEL = re.compile(r"^\s*(final answer|the answer is|answer)\s*[:\-]\s*", re.I)
MAX_BRIDGE_USES = 3  # an entity in more sentences than this is boilerplate, not a link


def prefix(start: str, text: str) -> bool:
    """Whether a word of the text begins with `start`."""
    return re.search(rf"(?<![a-z0-9]){re.escape(start)}", text) is not None


def holds_value(text: str, kind: str) -> bool:
    """Whether a text holds a value of the kind a question asks for (a number, a date, a path), leaving out
    what only points elsewhere: section numbers heading a line, page marks, footnote marks, "see section 4"."""
    text = _NOT_A_VALUE.sub(" ", text)
    if kind == "number":
        return NUMBER.search(text) is not None or SPELLED.search(text) is not None
    if kind == "date":
        return DATE.search(text) is not None
    if kind == "path":
        return PATH.search(text) is not None
    return False


def path_key(path: str) -> str:
    """A path as compared: case and surrounding slashes and punctuation aside (/var/opt/ is /var/opt)."""
    return path.lower().rstrip(".,;:").strip("/")


def entry_name(line: str) -> bool:
    """A short line without closing punctuation: a heading, or the name an entry of a manual begins with
    (`keyseq-timeout`, `mark-directories`): where a paragraph or an entry starts."""
    t = line.strip()
    letters = sum(c.isalpha() for c in t)
    return 0 < len(t) <= 40 and len(t.split()) <= 4 and not t.endswith((".", ",", ";", ":", ")", "!", "?")) \
        and t[:1].isalnum() and letters >= len(t.replace(" ", "")) / 2 and "=" not in t  # VAR X = 1 states, not heads


_SPELLINGS = {"colour": "color", "behaviour": "behavior", "favour": "favor", "honour": "honor", "labour": "labor",
              "neighbour": "neighbor", "licence": "license", "centre": "center", "metre": "meter", "litre": "liter",
              "grey": "gray", "analyse": "analyze", "organise": "organize", "recognise": "recognize",
              "initialise": "initialize", "serialise": "serialize", "normalise": "normalize", "optimise": "optimize",
              "customise": "customize", "authorise": "authorize", "summarise": "summarize", "catalogue": "catalog",
              "programme": "program", "defence": "defense", "cancelled": "canceled", "travelled": "traveled",
              "modelling": "modeling", "labelled": "labeled", "signalled": "signaled"}
SPELLING = re.compile(r"\b(" + "|".join(sorted(_SPELLINGS, key=len, reverse=True)) + r")", re.I)
"""British spellings (at a word's start, so "colours" and "initialised" too), read as American ones: a question
asking about "colours" finds "colors"."""


def us_spelling(text: str) -> str:
    return SPELLING.sub(lambda m: _SPELLINGS[m.group(1).lower()], text)


TOC_LEADER = re.compile(r"(?:\.\s?){4,}\s*(\d+)\s*$")
"""A table of contents' line: a title, dot leaders, a page number ("3.7.6 Signals . . . . 45"). It names a subject
and states nothing about it."""
