"""The values a grounded answer can take, read off the shown evidence: what the embedded model's answer
grammar is limited to (numbers and dates beside the question's terms, one slot per part, a list that can
only grow, grounded options, sections, counts, pages)."""

from __future__ import annotations

import re

from lcread.grounding.evidence import has, norm
from lcread.grounding.patterns import LABEL, MAX_BRIDGE_USES, NUMBER, PATH, holds_value, path_key, prefix
from lcread.grounding.question import distinguishing_terms, stem


_QUOTED_VALUE = re.compile(r"\"([^\"\n]{2,40})\"|'([^'\n]{2,40})'|[‘“]([^’”\n]{2,40})[’”]")
ANSWER_LINES = 6
"""Shown lines whose values an answer may take before any line carries the question's names."""


def _reference(sentence: str, value: str) -> bool:
    from lcread.grounding.check import _only_a_reference

    return _only_a_reference(sentence, value)


class GroundedValues:
    """Mixed into the Verifier: it supplies profile, log and the predicates' helpers."""

    def linked_items(self, answer: str) -> list[str]:
        """The items of a list answer that the chain of shown lines already links to the question."""
        if self.profile.kind != "list":
            return []
        component = self._component()
        atoms = self.atoms(LABEL.sub("", answer.strip()).strip().strip('"').rstrip("."))
        return [a for a in atoms if any(has(s.norm, a) for s in component)]

    def expected_count(self) -> int | None:
        """How many values a several-value answer must hold, when the evidence says: one per part asked
        for, or every value a complete search for the term showed."""
        p = self.profile
        if p.kind == "parts":
            return len(p.parts)
        if p.values > 1:
            return p.values
        term = self._main_term() if p.kind == "all" else None
        if term and self.log.searched(term) is not None:
            values = {v for s in self.log.sentences() if has(s.context, term) for v in self._values(s.text)}
            return len(values) or None
        return None

    def slots(self) -> list[list[str]] | None:
        """For several parts asked together, the values shown with each part, part by part."""
        p = self.profile
        if p.kind != "parts" or p.answer_type not in ("number", "date"):
            return None
        out = []
        for part in p.parts:
            values = [v for s in self.log.sentences() if has(s.context, part) for v in self._raw_values(s.text)]
            out.append(list(dict.fromkeys(values))[:12])
        return out if all(out) else None

    def candidates(self, after_refusal: bool = False) -> list[str]:
        """Values of the asked kind in shown sentences that carry the question's terms: what a grounded
        answer can be. Numbers and dates always; names and other text only after an answer was sent back
        (the embedded model's answer grammar is then limited to these)."""
        kind = self.profile.answer_type
        if self.profile.kind == "count":
            return self._counts() if after_refusal else []
        if self.profile.kind == "page":
            return sorted(set(self._pages().values()), key=int)
        if self.profile.kind == "choice":
            options = [f"{letter}) {text}" for letter, text in self.profile.options]
            grounded = [f"{letter}) {text}" for letter, text in self.profile.options
                        if any(has(s.norm, text) and self._carries(s) is not None for s in self.log.sentences())]
            return grounded or options
        if self.profile.kind == "where":
            fragment = norm(self.profile.quote or "")[:40]
            return list(dict.fromkeys(p.section[1].split(" > ")[-1] for p in self.log.pieces
                                      if p.section and fragment and fragment in norm(p.text)))
        if self.profile.kind in ("summary", "yesno"):
            return []
        if kind not in ("number", "date", "path") and not after_refusal:
            return []
        asked = set(re.split(r"[^a-z0-9]+", self.profile.question.lower()))
        terms = {norm(t) for t in self.profile.terms}
        asked_paths = {path_key(m.group(0)) for m in PATH.finditer(self.profile.question)}
        out: list[str] = []
        if self.profile.kind == "list":
            pool = self._component()
        elif self.profile.kind == "parts":
            pool = [s for s in self.log.sentences() if any(has(s.context, part) for part in self.profile.parts)]
        else:
            pool = [s for s in self.log.sentences() if self._carries(s) is not None]
        if kind in ("number", "date", "path") and not any(self._raw_values(s.text) for s in pool):
            # nothing grounded yet: the values of the shown lines that match the question best, else of any
            pool = self.answer_lines(set(), top=ANSWER_LINES) or self.log.sentences()
        elif kind not in ("number", "date", "path") and not any(self._names(s, asked, terms, len(pool)) for s in pool):
            pool = self.answer_lines(set(), top=ANSWER_LINES)  # no line carries the question: the best ones
        elif kind in ("number", "date", "path") and self.profile.kind == "lookup" and len(pool) > ANSWER_LINES:
            # many lines carry the question's names: offer the values of those that match the question best
            valued = sorted((s for s in pool if holds_value(s.text, kind)), key=self._sentence_score, reverse=True)
            pool = valued[:ANSWER_LINES] or pool
        if self.profile.kind == "lookup":  # the values of the lines that match the question best come first
            pool = sorted(pool, key=lambda s: (self.default_after(s) is not None, -self._sentence_score(s)))
        for s in pool:
            if kind in ("number", "date"):
                out += [v for v in self._raw_values(s.text) if norm(v) not in terms and not _reference(s.norm, v)]
            elif kind == "path":  # a directory or file the best sentences name (/var/tmp), not one the question does
                out += [v for v in self._raw_values(s.text) if path_key(v) not in asked_paths]
            else:
                out += self._names(s, asked, terms, len(pool))
        return list(dict.fromkeys(out))[:24]

    def _names(self, s, asked: set[str], terms: set[str], pool: int) -> list[str]:
        """The names and quoted values a sentence states (`python-requests` in `name="python-requests"`), less
        those made of the question's own words and those on many lines (boilerplate)."""
        quoted = [a or b or c for a, b, c in _QUOTED_VALUE.findall(s.text)]
        paths = [m.group(0).rstrip(".,;:") for m in PATH.finditer(s.text) if re.search(r"[a-z]", m.group(0), re.I)]
        names = [e for e in distinguishing_terms(s.text, [], whole=True) if '"' not in e]
        return [e for e in dict.fromkeys(quoted + paths + names) if norm(e) not in terms and not NUMBER.fullmatch(e)
                and not set(re.split(r"[^a-z0-9]+", e.lower())) <= asked
                and self._uses(e) <= max(MAX_BRIDGE_USES, 2 * pool // 3)]


    def pairs(self) -> list[str]:
        """For a range or a size asked as a whole: the pairs of different values, in order, that one shown
        sentence states side by side ("10, 7" from "10 inches x 7 inches", "1000, 59999" from "1000-59999"),
        among the grounded values: the only two-value answers that can be verified."""
        if self.profile.values < 2 or self.profile.kind != "lookup":
            return []
        grounded = set(self.candidates())
        out = []
        for s in self.log.sentences():
            values = [v for v in dict.fromkeys(self._raw_values(s.text)) if v in grounded]
            out += [f"{a}, {b}" for a, b in zip(values, values[1:])]
        return list(dict.fromkeys(out))[:24]

    def _counts(self) -> list[str]:
        """What lcread can count: the sentences with the question's place or name (over the whole input when
        lcread can search it, else from a complete search shown), and those of them that also name what is
        counted."""
        from lcread.grounding.evidence import EvidenceLog

        term = self._main_term()
        if term is None:
            return []
        if self.occurrences is not None:
            whole = EvidenceLog()
            whole.add(self.occurrences(term))
            pool = whole.sentences()
        else:
            search = self.log.searched(term)
            if search is None:
                return []
            pool = [s for s in self.log.sentences() if (s.doc, s.line) in set(search.lines)]
        rows = {(s.doc, s.line, s.start): s for s in pool if has(s.context, term)}
        needs = [t for t in self.profile.terms if t != term] + self.profile.count_words
        both = [s for s in rows.values() if all(has(s.context, t) or prefix(stem(t), s.context) for t in needs)]
        return list(dict.fromkeys([str(len(both)), str(len(rows))]))
