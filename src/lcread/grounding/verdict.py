"""A verdict on an answer, and the small readings of text every predicate shares: whether a text holds an
answer's part, whether a number there is only a reference, the grep that would find a term."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from lcread.grounding.evidence import Citation, has, norm
from lcread.grounding.patterns import NUMBER, PATH, TOC_LEADER, path_key
from lcread.grounding.question import NUMBER_WORDS


@dataclass
class Verdict:
    ok: bool
    citations: list[Citation] = field(default_factory=list)
    missing: str | None = None
    """What is still missing, in words (for the model, the display and the near-miss record)."""
    step: str | None = None
    """The command that would find it, which lcread runs itself."""
    applies: bool = True
    """False for open questions (summaries), where no predicate applies."""
    kind_ok: bool = True
    """False when the answer is not of the kind asked for (or only repeats the question)."""
    settled: bool = False
    """True when no further evidence can verify the answer (lcread cannot check its kind): the run ends with it,
    unverified, instead of sending it back."""


def thousands(number: str) -> str:
    return number.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", number) else number.rstrip(",")


_REFERENCE = re.compile(r"\b(?:page|pages|p\.|pp\.|section|sec\.|chapter|figure|table|footnote|line|lines)\s+$")
_NUMBERED_HEADING = re.compile(r"^\s*(\d+(?:\.\d+)*)\.?\s+[A-Z\"'/(]|^\s*(\d+(?:\.\d+)+\.?|\d+\.)\s*$")


def distinctive(answer: str) -> bool:
    """A name that can only mean one thing where it is found (Qwen2.5-Coder-0.5B-Instruct, HTTPAdapter,
    python-requests): digits, CamelCase, or a part that is no ordinary English word. "Static", "Variable" or
    "non-zero" are words any passage holds."""
    from lcread.grounding.question import _common_word

    for token in answer.split():
        token = token.strip(".,;:!?()[]\"'")
        if re.search(r"\d", token) or re.search(r"[a-z][A-Z]", token):
            return True
        parts = [p for p in re.split(r"[-_./]", token) if len(p) >= 3]
        if any(not _common_word(p.capitalize()) for p in parts):
            return True
    return False


_SPELLED = {str(n): w for w, n in NUMBER_WORDS.items()}
VALUE = re.compile(NUMBER.pattern + r"|\b(?:" + "|".join(w for w in NUMBER_WORDS if w not in ("zero", "one")) + r")\b",
                    re.I)  # "one" is mostly a pronoun ("the one that"), "zero" an adjective


NEGATION = re.compile(r"\b(?:no|not|never|none|cannot|neither|nor|nothing|forbidden|prohibited|disallowed)\b|n't\b",
                       re.I)


def value_shape(answer: str) -> str | None:
    """What an answer is when it is one value: a path (~/.sh_history, /var/opt), a number (30, 2.28.1), or None."""
    a = answer.strip().strip("\"'`").rstrip(".")
    if PATH.fullmatch(a) and ("/" in a) and re.search(r"[a-z]", a, re.I):
        return "path"
    return "number" if NUMBER.fullmatch(a) else None


def holds(text: str, atom: str) -> bool:
    """Whether the text holds the atom: a path as a path (the word "boot" is not /boot), a small number also
    as a word ("at least two characters", but not the "zero" of "non-zero")."""
    if "/" in atom and re.search(r"[a-z_~]", atom, re.I):
        want = path_key(atom)
        return any(path_key(m.group(0)) == want for m in PATH.finditer(text))
    if re.fullmatch(r"[\d.,]+", atom):  # a number whole: 2.28 is not in 2.28.1
        held = re.search(rf"(?<![\w.]){re.escape(norm(atom))}(?!\.?\d)", text) is not None
    else:
        held = has(text, atom)
    return held or atom in _SPELLED and \
        re.search(rf"(?<![\w-]){_SPELLED[atom]}(?![\w-])", text, re.I) is not None


def only_a_reference(sentence: str, atom: str) -> bool:
    """Whether a number stands in the sentence only as a reference to a place ("Section B.3.1 [Setting paper
    size], page 57"), a heading's number ("12.5. Copyright") or a table of contents' page ("Purpose ..... 3"),
    never as a value: such a number answers "which page" or "which section", nothing else."""
    if not re.fullmatch(r"[\d.]+", atom):
        return False
    heading = _NUMBERED_HEADING.match(sentence)
    leader = TOC_LEADER.search(sentence)
    places = [m.start() for m in re.finditer(rf"(?<![\w.]){re.escape(atom)}(?![\w])", sentence)]
    return bool(places) and all(_REFERENCE.search(sentence[max(0, at - 12):at])
                                or sentence[at - 1:at] == "[" and sentence[at + len(atom):at + len(atom) + 1] == "]"
                                or heading and at == (heading.start(1) if heading.group(1) else heading.start(2))
                                or leader and at == leader.start(1)
                                for at in places)


def grep_step(term: str, word: bool = False, with_section: bool = False) -> str:
    """The grep lcread runs itself to find a term: the term on one line, after `-e` (an answer such as
    `--log-file=<path>` is a pattern, never an option)."""
    flags = "-i -F" + (" -w" if word else "") + (" -p" if with_section else "")
    return f"grep {flags} -e {shlex.quote(' '.join(term.split()))}"
