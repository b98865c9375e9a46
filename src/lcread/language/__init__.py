"""The words of a language, in one file per language (`en.toml`): what the ranked search, the question reader and
the candidate spans know of English is read from there, so another language is another file."""

from __future__ import annotations

import functools
import os
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

from lcread.errors import LcreadError


@dataclass(frozen=True)
class Language:
    name: str
    lemmas: str
    """simplemma's language code for lemmas and word forms."""
    stopwords: frozenset[str]
    asking: frozenset[str]
    number_words: dict[str, int]
    months: frozenset[str]
    weekdays: frozenset[str]
    references: tuple[str, ...]
    """Words before a number that make it a place ("page 57"), not a value."""
    spellings: dict[str, str]
    """Spellings read as another ("colour": "color")."""
    units: frozenset[str]
    yes: str
    no: str
    list_joins: tuple[str, ...]
    not_counted: frozenset[str]
    answer_label: re.Pattern
    articles: frozenset[str]
    abstentions: tuple[str, ...]
    none: str
    """The words the reader's check scores as no answer (what its prompt tells the model to reply when the lines do
    not answer)."""
    how: dict[str, str]
    related: dict[str, str]
    irregular: dict[str, frozenset[str]]
    phrases: dict[str, re.Pattern]
    answers: tuple[tuple[str, re.Pattern], ...]
    """(answer type, the pattern that asks for it), tried in order."""

    @functools.cached_property
    def counting_words(self) -> dict[str, int]:
        """The number words read as numbers wherever they stand: two and up ("one" is mostly a pronoun, "zero" a
        word)."""
        return {w: v for w, v in self.number_words.items() if v >= 2}

    def phrase(self, name: str) -> re.Pattern:
        return self.phrases[name]

    def items(self, text: str) -> list[str]:
        """The items of a list as written ("A, B and C"), each once."""
        joins = "|".join(rf"\b{re.escape(j)}\b" for j in self.list_joins)
        return list(dict.fromkeys(i.strip() for i in re.split(rf",|;|{joins}", text) if i.strip()))


@functools.lru_cache(maxsize=8)
def load(name: str | None = None) -> Language:
    """The language `name` (LCREAD_LANGUAGE, else English), read once."""
    name = name or os.environ.get("LCREAD_LANGUAGE") or "en"
    try:
        raw = tomllib.loads(resources.files(__package__).joinpath(f"{name}.toml").read_text(encoding="utf-8"))
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        known = sorted(p.name.removesuffix(".toml") for p in resources.files(__package__).iterdir()
                       if p.name.endswith(".toml"))
        raise LcreadError(f"no language {name!r}: use one of {', '.join(known)} (LCREAD_LANGUAGE)") from None
    irregular: dict[str, set[str]] = {}
    for group in raw["words"]["irregular"].replace("\n", "").split("|"):
        forms = group.split()
        for form in forms:
            irregular.setdefault(form, set()).update(forms)
    words = {k: raw[k].split() for k in ("stopwords", "asking", "number_words", "months", "weekdays", "references",
                                         "units", "list_joins", "not_counted", "articles")}
    return Language(
        name=name, lemmas=raw["lemmas"], stopwords=frozenset(words["stopwords"]), asking=frozenset(words["asking"]),
        number_words={w: i for i, w in enumerate(words["number_words"])}, months=frozenset(words["months"]),
        weekdays=frozenset(words["weekdays"]), references=tuple(words["references"]),
        spellings=dict(raw.get("spellings", {})), units=frozenset(words["units"]), yes=raw["yes"], no=raw["no"],
        list_joins=tuple(words["list_joins"]), not_counted=frozenset(words["not_counted"]),
        answer_label=re.compile(raw["answer_label"], re.I), articles=frozenset(words["articles"]),
        abstentions=tuple(raw["abstentions"]), none=raw["none"],
        how=dict(raw["how"]), related=dict(raw["related"]), irregular={k: frozenset(v) for k, v in irregular.items()},
        phrases={k: re.compile(_asking(v, raw), re.I) for k, v in raw["phrases"].items()},
        answers=tuple((a["type"], re.compile(_asking(a["pattern"], raw), re.I)) for a in raw["answer"]))

def _asking(pattern: str, raw: dict) -> str:
    """A pattern with the language's way of asking for a thing in place of {ask} ({{ and }} stay braces)."""
    return pattern.replace("{{", "\x00").replace("}}", "\x01").replace("{ask}", raw["phrases"]["ask"]) \
        .replace("\x00", "{").replace("\x01", "}")
