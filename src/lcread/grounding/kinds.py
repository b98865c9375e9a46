"""Question kinds, in one table: what recognises each in a question, its sufficiency predicate, the values the
embedded model's answer grammar may take for it, and the step lcread runs when an answer of that kind lacks its
evidence. Adding a kind is one entry here and its functions.

The predicates are plain functions of the Verifier (which holds the run's evidence and the readings of it they
share) and the answer: the answer's text, its atoms (the parts lcread looks for), and the shown sentences
holding each atom.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lcread.grounding import question as q
from lcread.grounding.evidence import Citation, EvidenceLog, cite, has, norm
from lcread.grounding.patterns import PATH, holds_value, path_key, prefix
from lcread.grounding.question import Kind, stem
from lcread.grounding.verdict import NEGATION, Verdict, grep_step, holds, only_a_reference
from lcread.tools.evidence import Shown

if TYPE_CHECKING:
    from lcread.grounding.check import Verifier

VALUES = ("number", "date", "path")
"""The answer types that are values: searched for by kind, offered from the best lines, met by competing ones."""
ANSWER_LINES = 6
"""Shown lines whose values an answer may take before any line carries the question's names."""


@dataclass(frozen=True)
class KindSpec:
    recognise: Callable[..., dict | None]
    """(profile, quoted strings) -> None, or the profile's fields the kind sets: what in a question recognises it
    (question.classify tries the kinds in the table's order, the first that recognises the question wins)."""
    predicate: Callable[..., Verdict]
    """(verifier, answer, atoms, found) -> Verdict: whether the shown evidence establishes the answer."""
    candidates: Callable[..., list[str]]
    """(verifier, after_refusal) -> the grounded values the embedded model's answer grammar may take."""
    next_step: Callable[..., str]
    """(verifier) -> the command lcread runs when an answer fails without a more specific step."""


# --- predicates, one per kind ----------------------------------------------------------------------------------

def lookup(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    main = v.main_atoms(atoms)
    together = main if v.profile.values > 1 else []  # a range or a size: both numbers in one sentence
    if together and len(set(main)) < v.profile.values:
        return Verdict(False, missing=f"a range or a size has {v.profile.values} different values; the answer "
                                      f"gives {len(set(main))}", step=next_step(v))
    for atom in main:
        for s in sorted(found[atom], key=v.sentence_score, reverse=True):  # the best-matching line first
            links = v.carries(s)
            if links is not None and v.relates(atom, s, links) and all(holds(s.norm, a) for a in together) \
                    and v.best_valued(s) and v.default_kept(s, links) and v.the_default(s, together or [atom]) \
                    and v.best_clause(s, together or [atom]) and not v.denies(s) and v.whole_range(s, main):
                return Verdict(True, [cite(x) for x in [s, *links]])
    return v.unlinked(main[0] if main else atoms[0], found)


def yes_or_no(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    """Yes or no, as the shown sentence that carries the question's terms and matches it best says: a
    sentence with a negation ("There must be no subdirectories in /bin") says no, one without says yes."""
    carrying = [(s, links) for s in v.log.sentences() if (links := v.carries(s)) is not None]
    if not carrying or not (v.profile.terms or v.profile.keywords):
        return Verdict(False, missing="no shown line carries the question's terms", step=next_step(v))
    s, links = max(carrying, key=lambda x: v.sentence_score(x[0]))
    says = "no" if NEGATION.search(v.whole_sentence(s)) else "yes"
    if re.match(r"\s*(yes|no)\b", answer, re.I).group(1).lower() != says:
        return Verdict(False, [cite(s)], missing=f"the line that matches the question best reads as {says!r}: "
                                                 f"{s.doc}:{s.line}: {v.whole_sentence(s)[:160]}")
    return Verdict(True, [cite(x) for x in [s, *links]])



def parts(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    values = v.main_atoms(atoms)
    cited, missing = [], []
    for part in v.profile.parts:
        hit = next((s for x in values for s in found.get(x, []) if has(s.context, part)), None)
        if hit is None:
            missing.append(part)
        else:
            cited.append(cite(hit))
    if missing:
        have = [p for p in v.profile.parts if p not in missing]
        return Verdict(False, cited, missing=f"{len(v.profile.parts)} values are asked for "
                       f"({', '.join(v.profile.parts)}); none cited for {missing[0]!r}"
                       + (f" (you have {', '.join(have)})" if have else ""), step=grep_step(missing[0]))
    return Verdict(True, cited)



def every_value(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    term = v.main_term()
    if term is None:
        return lookup(v, answer, atoms, found)
    if v.log.searched(term) is None:
        return Verdict(False, missing=f"every value for {term!r} is asked for, and no complete search for it "
                       "has been shown", step=next_step(v))
    values = set(v.main_atoms(atoms))
    with_term = [s for s in v.log.sentences() if has(s.context, term)]
    expected = {x for s in with_term for x in v.values(s.text)}
    lacking = sorted(expected - values)
    if lacking or not expected:
        return Verdict(False, [cite(s) for s in with_term], missing=f"lines with {term!r} also give "
                       f"{', '.join(lacking) or 'no value'}, which the answer lacks" if lacking
                       else f"no shown line gives a value for {term!r}", step=next_step(v))
    return Verdict(True, [cite(s) for s in with_term if any(has(s.norm, x) for x in values)])



def items(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    items = [a for a in atoms if found.get(a)]
    if not items:
        return v.unlinked(atoms[0], found)
    component = v.component()
    unlinked = [i for i in items if not any(has(s.norm, i) for s in component)]
    cited = [cite(s) for s in component if any(has(s.norm, i) for i in items)]
    if unlinked:
        return Verdict(False, cited, missing=f"no chain of shown lines links {unlinked[0]!r} to the "
                       "question's terms", step=grep_step(unlinked[0]))
    for item in items:  # completeness: each item's own lines searched, nothing linked left out
        if v.log.searched(item) is None:
            return Verdict(False, cited, missing=f"lines that mention {item!r} have not all been searched; "
                           "more items may link to it", step=grep_step(item, word=True))
    more = v.unlisted(items, component)
    if more:
        return Verdict(False, cited, missing=f"shown lines link {more!r} to the answer's items, and the "
                       "answer lacks it", step=grep_step(more, word=True))
    return Verdict(True, cited)



def count(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    """Counts count occurrences, never lines: the sentences that hold the counted thing and the question's
    terms (four on one 217,000-character line are four), counted by lcread over the whole input itself; or
    a count the documents state outright ("logged 5 gale warnings")."""
    numbers = [int(a) for a in atoms if a.isdigit()]
    term = v.main_term() or (v.profile.count_words[0] if v.profile.count_words else None)
    if term is None or not numbers:
        return lookup(v, answer, atoms, found)
    needs = [t for t in v.profile.terms if t != term] + v.profile.count_words
    nouns = [stem(w) for w in v.profile.count_words] or ["time", "occurr", "entr"]
    for n in numbers:  # a count the documents state outright: "logged 5 gale warnings"
        for s in found.get(str(n), []):
            follows = re.search(rf"(?<![\d.,]){n}\s+([a-z-]+)", s.norm)
            if follows and any(follows.group(1).startswith(x) for x in nouns) and v.carries(s) is not None:
                return Verdict(True, [cite(s)])

    def counted(sentences) -> dict:
        return {(s.doc, s.line, s.start): s for s in sentences if has(s.context, term) and all(
            has(s.context, t) or prefix(stem(t), s.context) for t in needs if t.lower() != term.lower())}

    if v.occurrences is not None:  # lcread counts over the whole input, whatever the model was shown
        whole = EvidenceLog()
        whole.add(v.occurrences(term))
        events = counted(whole.sentences())
        v.log.add([Shown(s.doc, s.line, s.start, s.text, kind="match") for s in events.values()])
    else:
        search = v.log.searched(term)
        if search is None:
            return Verdict(False, missing=f"a count needs every line with {term!r} shown", step=grep_step(term))
        events = counted(s for s in v.log.sentences() if (s.doc, s.line) in set(search.lines))
    cited = [cite(s) for s in events.values()][:12]
    if len(events) in numbers:
        return Verdict(True, cited)
    return Verdict(False, cited, missing=f"lcread finds {len(events)} sentences with {term!r}"
                   + (f" and {', '.join(needs)}" if needs else "") + f" in the documents, not {numbers[0]}",
                   step=grep_step(term))



def page(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    numbers = [a for a in atoms if a.isdigit()]
    pages = v.pages()
    for s in [s for s in v.log.sentences() if v.carries(s) is not None]:
        if pages.get((s.doc, s.line)) in numbers:
            return Verdict(True, [cite(s)])
    if not pages:
        return Verdict(False, missing="no shown line carries the question's terms on a known page",
                       step=next_step(v))
    return Verdict(False, missing=f"the shown lines with the question's terms are on page "
                   f"{', '.join(sorted(set(pages.values()), key=int)[:5])}, not {numbers[0] if numbers else answer!r}")



def where(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    fragment = norm(v.profile.quote or "")[:40]
    hits = [p for p in v.log.pieces if p.kind != "heading" and fragment and fragment in norm(p.text)]
    placed = [p for p in hits if p.section]
    quoted = [Citation(p.doc, p.line, p.start, p.start + len(p.text), p.text) for p in hits]
    if not placed:
        return Verdict(False, quoted, missing="the section holding the quoted text has not been shown",
                       step=next_step(v))
    want = norm(answer)
    for p in placed:
        section = norm(p.section[1])
        if want and (has(section, want) or atoms and all(has(section, a) for a in atoms)):
            heading = Citation(p.doc, p.section[0], 0, len(p.section[1]), p.section[1])
            return Verdict(True, [heading, *[q for q in quoted if q.line == p.line]])
    return Verdict(False, quoted, missing=f"the quoted text sits under {placed[0].section[1]!r}, "
                   "which the answer does not name")


def open_question(v: Verifier, answer: str, atoms: list[str], found: dict) -> Verdict:
    """No predicate says an open answer ("Why does /lib/cpp exist ...?") is complete, but it must come from what
    was shown: most of its own words (any form of them; the question's aside) are in shown sentences, and it is
    not lcread's instructions copied back (a small model copies the example answer of its prompt). It is cited
    on the sentences that hold the most of them, and never marked verified."""
    from lcread import prompts
    from lcread.tools.search import forms_of

    asked = set(q.content_words(v.profile.question))
    words = [w for w in q.content_words(answer) if w not in asked]
    sentences = v.log.sentences()
    text = norm(answer)
    if text and len(text) >= 8 and text in prompts.instructions() and not any(text in s.norm for s in sentences):
        return Verdict(False, missing=f"{answer!r} is the example in lcread's instructions, not a reading of the "
                       "documents", step=v.term_step())
    held = {w: [s for s in sentences if any(has(s.norm, f) for f in forms_of(w) | {w})] for w in words}
    present = [w for w in words if held[w]]
    if words and 2 * len(present) < len(words) + 1:
        missing = [w for w in words if not held[w]]
        return Verdict(False, missing=f"the answer's words ({', '.join(missing[:4])}) are not in what the tools "
                       "showed: an answer must come from the documents", step=v.term_step())
    best = sorted(sentences, key=lambda s: -sum(s in held[w] for w in present))[:3] if present else []
    return Verdict(True, [cite(s) for s in best if any(s in held[w] for w in present)], applies=False,
                   missing="an open question: no sufficiency check applies")


# --- the values an answer may take, by kind ----------------------------------------------------------------------

def no_values(v: Verifier, after_refusal: bool = False) -> list[str]:
    return []


def counts(v: Verifier, after_refusal: bool = False) -> list[str]:
    return v.counts() if after_refusal else []


def pages(v: Verifier, after_refusal: bool = False) -> list[str]:
    return sorted(set(v.pages().values()), key=int)


def options(v: Verifier, after_refusal: bool = False) -> list[str]:
    listed = [f"{letter}) {text}" for letter, text in v.profile.options]
    grounded = [f"{letter}) {text}" for letter, text in v.profile.options
                if any(has(s.norm, text) and v.carries(s) is not None for s in v.log.sentences())]
    return grounded or listed


def sections(v: Verifier, after_refusal: bool = False) -> list[str]:
    fragment = norm(v.profile.quote or "")[:40]
    return list(dict.fromkeys(p.section[1].split(" > ")[-1] for p in v.log.pieces
                              if p.section and fragment and fragment in norm(p.text)))


def grounded_values(v: Verifier, after_refusal: bool = False, lines: int | None = None,
                    refused: set[str] | frozenset = frozenset()) -> list[str]:
    """Values of the asked kind in shown sentences that carry the question's terms: what a grounded answer can
    be, those of the lines that match the question best first. Numbers, dates and paths always; names and other
    text only after an answer was sent back (the embedded model's answer grammar is then limited to these)."""
    p, kind = v.profile, v.profile.answer_type
    if kind not in VALUES and not after_refusal:
        return []
    asked = set(re.split(r"[^a-z0-9]+", p.question.lower()))
    terms = {norm(t) for t in p.terms}
    asked_paths = {path_key(m.group(0)) for m in PATH.finditer(p.question)}
    asked_values = set(v.values(p.question))  # "restricted to eight bits: what is the maximum?" is not 8
    if p.kind is Kind.LIST:
        pool = v.component()
    elif p.kind is Kind.PARTS:
        pool = [s for s in v.log.sentences() if any(has(s.context, part) for part in p.parts)]
    else:
        pool = [s for s in v.log.sentences() if v.carries(s) is not None]
    if kind in VALUES and not any(v.raw_values(s.text) for s in pool):
        # nothing grounded yet: the values of the shown lines that match the question best, else of any
        pool = v.answer_lines(set(), top=ANSWER_LINES) or v.log.sentences()
    elif kind not in VALUES and p.kind is Kind.LOOKUP and not any(v.names(s, asked, terms, len(pool)) for s in pool):
        pool = v.answer_lines(set(), top=ANSWER_LINES)  # no line carries the question: the best ones
    elif kind in VALUES and p.kind is Kind.LOOKUP and len(pool) > ANSWER_LINES:
        # many lines carry the question's names: offer the values of those that match the question best
        valued = sorted((s for s in pool if holds_value(s.text, kind)), key=v.sentence_score, reverse=True)
        pool = valued[:ANSWER_LINES] or pool
    if p.kind is Kind.LOOKUP:  # the values of the lines that match the question best come first
        pool = sorted(pool, key=lambda s: (v.default_after(s) is not None, -v.sentence_score(s)))
    out: list[str] = []
    for s in pool:
        if kind in ("number", "date"):
            mine = [x for x in v.raw_values(s.text) if norm(x) not in terms and not only_a_reference(s.norm, x)
                    and v.values(x)[:1] != [] and v.values(x)[0] not in asked_values]
        elif kind == "path":  # a directory or file the best sentences name (/var/tmp), not one the question does
            mine = [x for x in v.raw_values(s.text) if path_key(x) not in asked_paths]
        else:
            mine = v.names(s, asked, terms, len(pool))
        mine = [x for x in mine if norm(x) not in refused]
        if mine and lines is not None:  # only the values of the best few lines not yet refused
            if lines == 0:
                break
            lines -= 1
        out += mine
    return list(dict.fromkeys(out))[:24]


# --- what lcread runs next, by kind -------------------------------------------------------------------------------

def next_step(v: Verifier) -> str:
    """The step the question's kind runs when an answer lacks its evidence (the table's)."""
    return KINDS[v.profile.kind].next_step(v)


def term_step(v: Verifier) -> str:
    """grep the question's rarest distinguishing term (else its rarest keyword)."""
    return v.term_step()


def main_term_step(v: Verifier) -> str:
    """grep the term a count or an every-value question is about: every line with it must be seen."""
    term = v.main_term()
    return grep_step(term) if term else v.term_step()


def quote_step(v: Verifier) -> str:
    """grep -p the quoted text: the section it sits in is the answer."""
    return grep_step((v.profile.quote or "")[:60], with_section=True)


def page_step(v: Verifier) -> str:
    """grep -p the question's term: the page heading the hit sits under."""
    return v.term_step().replace("grep ", "grep -p ", 1)


# --- the table ----------------------------------------------------------------------------------------------------

KINDS: dict[Kind, KindSpec] = {  # in the order they are recognised
    Kind.CHOICE: KindSpec(q.is_choice, lookup, options, term_step),  # options given, or "X or Y?"
    Kind.PAGE: KindSpec(q.is_page, page, pages, page_step),  # "which page"
    Kind.WHERE: KindSpec(q.is_where, where, sections, quote_step),  # "which section ..." with a quoted text
    Kind.SUMMARY: KindSpec(q.is_summary, open_question, no_values, term_step),  # summarise, explain, why
    Kind.COUNT: KindSpec(q.is_count, count, counts, main_term_step),  # "how many X were logged"
    Kind.YESNO: KindSpec(q.is_yesno, yes_or_no, no_values, term_step),  # "Is / Does / May ...", no number asked
    Kind.PARTS: KindSpec(q.is_parts, parts, grounded_values, term_step),  # plural, terms joined by "and"
    Kind.ALL: KindSpec(q.is_all, every_value, grounded_values, main_term_step),  # "all the values of"
    Kind.LIST: KindSpec(q.is_list, items, grounded_values, term_step),  # any other plural question
    Kind.LOOKUP: KindSpec(q.is_lookup, lookup, grounded_values, term_step),  # anything else: one fact
}
