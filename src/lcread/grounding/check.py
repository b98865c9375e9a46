"""Sufficiency predicates (seed 002, "Early Exit"): whether an answer is backed by what the tools showed.

The answer's content (numbers, names, dates; the whole text when short) is located in the shown
sentences by lcread, never taken from the model; then the predicate for the question's kind is checked
on those sentences. A failed check says what is missing and names the command that would find it.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace

from lcread.grounding.evidence import ENTRY_LINES, Citation, EvidenceLog, Sentence, cite, has, norm
from lcread.grounding.patterns import DATE, LABEL, MAX_BRIDGE_USES, NUMBER, PATH, entry_name, holds_value, path_key, prefix
from lcread.grounding.question import (DEFAULT_STATED, NAME_ASK, NUMBER_WORDS, STOPWORDS, Kind, Profile,
                                      distinguishing_terms, stem)
from lcread.grounding.kinds import KINDS, VALUES
from lcread.grounding.verdict import (NEGATION, VALUE, Verdict, distinctive, grep_step, holds, only_a_reference,
                                      thousands, value_shape)
from lcread.tools.evidence import Shown

_QUOTED_VALUE = re.compile(r"\"([^\"\n]{2,40})\"|'([^'\n]{2,40})'|[‘“]([^’”\n]{2,40})[’”]")
"""A quoted value in a shown line (`name="python-requests"`): a name an answer may take."""
COMPETING_SHARE = 0.85
"""Another sentence competes with the cited one when it matches the question at least this well, relative to it."""
LEAD_SHARE, LEAD_CHARS, WRAPPED_LINE = 0.5, 400, 50
"""A sentence matches the question by its own words and, at half weight, by the 400 characters before it in its
paragraph or entry (across line breaks where the text is wrapped: the line before is 50 characters or more, or
this one goes on in lower case)."""
DEFAULT_BONUS = 1.5
"""When the question asks for a default, a sentence that states one matches it this much better."""
DEFAULT_REACH = 80
"""How far after the word "default" the value it states may sit, in characters (within its clause)."""
RARER_COMPETING_SHARE = 0.7
"""Another sentence holding a rarer word of the question than the cited one (the condition the question names)
competes when it matches the question this well."""
CLAUSES = r"[;:]|,(?!\d)|\s(?:though|but|while|whereas|except)\s"
"""Where a sentence's clauses part: the values of one sentence are told apart by the clause each sits in."""
LABEL_CHARS = 300
"""How much of the indented block under a label ("65534:") is read as what the label says."""
NAMED_BONUS = 1.5
"""A line of code assigning a name made of the question's words matches it this much better."""
_ASSIGNED = re.compile(r"^\s*(?:self\.)?([A-Za-z_]\w*)\s*(?::\s*[\w\[\], .]+)?=(?!=)\s*\S")
_MODIFIERS = {"max", "min", "default", "num", "n", "count", "total", "limit", "initial"}
"""Parts of a code name that qualify what it names (`max_retries` names retries)."""
_LARGEST = re.compile(r"\b(?:largest|maximum|max|highest|greatest|biggest|longest|most|upper)\b", re.I)
_SMALLEST = re.compile(r"\b(?:smallest|minimum|min|lowest|least|fewest|shortest|lower)\b", re.I)
"""A question asking for the largest or the smallest of the values a clause states."""
_RANGE = re.compile(r"(?<![\w.])(\d+(?:,\d{3})*)\s*(?:-|–|\bto\b|\bthrough\b)\s*(\d+(?:,\d{3})*)(?![\w.])")
"""A range of numbers as written: 1000-59999, 10 to 20."""
_AN_END = re.compile(r"\b(?:first|last|start|starts|begin|begins|end|ends|upper|lower|bound|from|up to)\b", re.I)
"""A question asking for one end of a range."""
CLAUSE_END = r";|\.(?:\s|$)"
"""Where a clause ends: the value a default is said of sits in the same clause as the word."""
DEFAULT_COMPETING_SHARE = 0.7
"""For a question about a default, another sentence stating a default competes when it matches the question
this well (two defaults of one thing, one of them in a mode or case the question does not name, are not
told apart by lcread: neither is verified)."""
MAX_NAME_USES = 12
"""A name written as code (`DEFAULT_REDIRECT_LIMIT`) still links sentences when this many shown lines use it."""
BRIDGE_HOPS = 3
"""A chain links the answer's sentence to the question's names through at most this many sentences."""
BEST_PASSAGES, BEST_SHARE, VALUED_SHARE = 3, 0.7, 0.5
"""An answer to a question without names must sit in one of the 3 best passages, in a sentence scoring at least
70% of the best one there (50% for a number, a date or a path, which must also match about as well as the best
sentence there stating one), and the passage at least 70% of the best passage."""


class Verifier:
    def __init__(self, profile: Profile, log: EvidenceLog, counter=None, place_of=None, occurrences=None,
                 best_passages=None):
        self.profile, self.log = profile, log
        self.counter = counter
        """term -> how many matches the documents hold (lets a next step grep the rarest keyword)."""
        self.place_of = place_of
        """(document, line) -> where in the source the line came from ("page 12"), for converted documents."""
        self.occurrences = occurrences
        """term -> every piece of the documents that holds it (lcread's own search of the whole input, no model
        tokens): what the competing-evidence check reads."""
        self.best_passages = best_passages
        """() -> lcread's ranked search for the question (passages best first, and the query's weighted terms):
        where an answer to a question with no name in it must come from."""

    def check(self, answer: str) -> Verdict:
        p = self.profile
        if p.kind is Kind.SUMMARY:
            return KINDS[p.kind].predicate(self, answer, [], {})
        if p.comparison and self._option_text(answer.strip()) is not None:
            return Verdict(True, self.locate(self._option_text(answer.strip())), applies=False,
                           missing="a comparison: the lines show each side, not which one wins")
        answer = LABEL.sub("", answer.strip()).strip().strip('"').rstrip(".")
        if p.kind is Kind.CHOICE:
            answer = self._option_text(answer)
            if answer is None:
                return Verdict(False, missing="the answer names none of the options",
                               step=self.term_step())
        wrong = self._wrong_kind(answer)
        if wrong:
            return wrong
        atoms = self.atoms(answer)
        if not atoms:
            return Verdict(False, missing=f"the answer {answer!r} holds nothing lcread can look for in the documents",
                           step=self.term_step(), kind_ok=False)
        found = {a: [s for s in self.log.sentences() if holds(s.context if p.kind is Kind.WHERE else s.norm, a)
                     and (p.kind is Kind.PAGE or not only_a_reference(s.norm, a) and a not in self.section_numbers())]
                 for a in atoms}
        absent = [a for a, where in found.items() if not where]
        if absent and p.kind not in (Kind.WHERE, Kind.COUNT, Kind.PAGE, Kind.YESNO):
            unsearched = [t for t in p.parts or p.terms if self.log.searched(t) is None]
            return Verdict(False, missing=f"no output shown so far contains {absent[0]!r}",
                           step=grep_step(unsearched[0] if unsearched else absent[0]))
        if p.kind is Kind.LOOKUP and p.answer_type == "text" and not p.terms and not p.quote and not distinctive(answer):
            return Verdict(False, self.locate(answer), settled=True,
                           missing="the question names nothing the answer can be tied to, and lcread cannot tell "
                                   "what kind of answer it asks for: the answer is not verified")
        verdict = KINDS[p.kind].predicate(self, answer, atoms, found)
        if verdict.ok and verdict.applies and p.answer_type in VALUES and p.kind in (Kind.LOOKUP, Kind.PARTS):
            return self._competing(atoms, verdict)
        if verdict.ok and verdict.applies and p.answer_type == "text" and p.kind is Kind.LOOKUP:
            # an open question ("the default value of HISTFILE") answered with a path or a number, or a piece of a
            # path the cited line holds (sh_history of ~/.sh_history): other values of that shape in sentences
            # matching the question as well compete all the same
            whole = next((m.group(0) for c in verdict.citations for m in PATH.finditer(c.quote)
                          if answer in m.group(0) and "/" in m.group(0)), answer)
            shape = value_shape(whole)
            if shape:
                return self._as_kind(shape)._competing(self._as_kind(shape).atoms(whole), verdict)
        return verdict

    def _as_kind(self, kind: str) -> "Verifier":
        """This verifier, reading answers and evidence as values of `kind`."""
        other = copy.copy(self)
        other.profile = replace(self.profile, answer_type=kind)
        other._memo_version = None
        return other

    def section_numbers(self) -> set[str]:
        """The dotted numbers the shown text calls a section or a chapter ("except those listed in FHS, section
        4.9."): the same number further on ("the directories listed in 4.9") is that reference, never a value."""
        def compute() -> set[str]:
            text = " ".join(p.text for p in sorted(self.log.pieces, key=lambda p: (p.doc, p.line)) if p.start == 0)
            return set(re.findall(r"\b(?:section|chapter|sec\.|§)\s+(\d+(?:\.\d+)+)", text, re.I))
        return self._memo("section_numbers", compute)

    def _competing(self, atoms: list[str], verdict: Verdict) -> Verdict:
        """Competing evidence, whatever the question's words: lcread searches the whole input for
        the sentences that carry the question's words the cited sentence carries, and collects the values of the
        asked kind in them. A sentence that matches the question as well as the cited one (or names a word of
        the question the cited one lacks: "spring and autumn") and holds a value the answer leaves out means the
        answer is not established: that value is what lcread shows next. Sentences are read whole, with their
        paragraph, as the cited one is."""
        if self.occurrences is None or not verdict.citations:
            return verdict
        cited = set().union(*(self.question_words(c.quote + " " + (c.place or "")) for c in verdict.citations))
        key = self._rarest(cited)
        if key is None:
            return verdict
        found = EvidenceLog()
        found.add(self.occurrences(key))
        view = copy.copy(self)  # this run's evidence and the whole input's lines with the key, read alike
        view.log, view._memo_version = EvidenceLog(), None
        view.log.add(self.log.pieces + found.pieces)
        cited_sentences = [x for x in view.log.sentences()
                           if any((x.doc, x.line) == (c.doc, c.line) for c in verdict.citations)]
        cited = cited.union(*(view._words_read(x) for x in cited_sentences))
        stated = frozenset().union(*(view.stated_words(x) for x in cited_sentences))
        best = max((view.sentence_score(x) for x in cited_sentences), default=0.0)
        have = {path_key(a) for a in atoms} if self.profile.answer_type == "path" else set(self.main_atoms(atoms))
        quoted = {(c.doc, c.line, c.quote) for c in verdict.citations}
        asked = set(self.values(self.profile.question)) | {path_key(m.group(0)) for m in PATH.finditer(
            self.profile.question)}  # the question's own values (/opt in "installed in /opt") answer nothing
        wholes = {(x.doc, norm(view.whole_sentence(x))) for x in cited_sentences}
        bound = self._memo("asked_bindings", self._asked_bindings) if self.profile.default else set()
        named = any(self._names_asked(x.text) for x in cited_sentences)  # `__version__ = "2.28.1"` cited
        for s in found.sentences():
            if (s.doc, s.line, s.text) in quoted or (s.doc, norm(view.whole_sentence(s))) in wholes:
                continue  # the cited sentence, or the rest of it across a line break
            others = [v for v in self.values(s.text) if v not in have and v not in asked
                      and not only_a_reference(s.norm, v)]
            if not others or not view._valued(s) or have <= set(self.values(view.whole_sentence(s))):
                continue  # no other value, one value where a range or a size (two) is asked, or it states the answer
            if named and not self._names_asked(s.text):
                continue  # in code, the value assigned to the name the question asks for is that value
            rebound = self._bound_to_asked_name(s.text)
            if rebound and bound and not rebound & bound:
                continue  # another function's parameter of the asked name (`def iter_content(self, chunk_size=1)`)
            words = view._words_read(s, after=[c.quote for c in verdict.citations])
            if not words or self._told_apart(cited - words, words - cited):
                continue  # the question tells them apart
            states = self.profile.default and DEFAULT_STATED.search(view.whole_sentence(s))
            own = view.stated_words(s)
            share = RARER_COMPETING_SHARE if self._rarer(own - stated, stated - own) else \
                DEFAULT_COMPETING_SHARE if states else COMPETING_SHARE
            if view.sentence_score(s) < share * best:
                continue  # it shares the words but matches the question clearly worse (a common word or two)
            self.log.add([Shown(s.doc, s.line, s.start, s.text, kind="match")])
            why = "matches the question as well" if words == cited else \
                f"also matches the question ({', '.join(sorted(words - cited))})"
            return Verdict(False, verdict.citations + [cite(s)],
                           missing=f"another line {why} and holds {others[0]!r}, which the answer leaves out: "
                                   f"{s.doc}:{s.line}: {s.text[:160]}", step=f"read {s.doc} {s.line} {s.line}")
        return verdict

    def _told_apart(self, lacks: set[str], adds: set[str]) -> bool:
        """Whether the question's words tell a sentence from the cited one: it lacks a name of the question the
        cited one has, or lacks a word of it and adds none as telling (the documents hold it as often or less),
        as "autumn" is beside "spring" in "in its spring survey and in its autumn survey", and "files" is not
        beside "variable" in "the variable files"."""
        if not lacks:
            return False
        if lacks & set(self.profile.terms) or not adds:
            return True
        if self.counter is None:
            return False
        return min(self.counter(w) for w in adds) > min(self.counter(w) for w in lacks)

    def _rarer(self, adds: set[str], lacks: set[str]) -> bool:
        """Whether a sentence holds a word of the question, that the cited one lacks, rarer than any the cited one
        holds over it: "if command cannot be found" beside "If no commands are executed" for "a command that doesn't
        exist". The condition the question names is in the other sentence: it matches the question as well."""
        from lcread.tools.search import related_words

        if not adds or self.counter is None:
            return False
        counts = {w: self.counter(w) or min((n for n in map(self.counter, related_words(w)) if n), default=0)
                  for w in adds | lacks}  # a word held only in a related word ("executed" for "run") counts as it
        rarity = lambda words: min((counts[w] for w in words if counts[w]), default=None)
        added, lacking = rarity(adds), rarity(lacks)
        return added is not None and (lacking is None or added < lacking)

    def _words_read(self, s: Sentence, after: list[str] | None = None) -> frozenset[str]:
        """The question's words a sentence carries, read whole (across a line break), and with its paragraph
        when it names nothing of its own; a paragraph read only from after the texts in `after` (the cited
        sentences: the sentence that follows a cited one in its paragraph is about something else, "The default
        for eps output is 5 x 3.5 inches." after the postscript default, not about what the cited one is)."""
        lead = self.lead(s) if not self.own_names(s) else ""
        for text in after or []:
            if text and text in lead:
                lead = lead[lead.rindex(text) + len(text):]
        return self.question_words(" ".join([s.context, self.whole_sentence(s), lead]), related=True)

    def question_words(self, text: str, related: bool = False) -> frozenset[str]:
        """The question's terms and keywords that a text carries; with `related`, also those it says in the words
        documents use for them ("cannot be found" for "doesn't exist", "exit status" for "exit code")."""
        from lcread.tools.search import related_words

        low = norm(text)
        return frozenset([t for t in self.profile.terms if has(low, t)] +
                         [k for k in self.profile.keywords if prefix(stem(k), low) or related and any(
                             has(low, r) if " " in r else prefix(stem(r), low) for r in related_words(k))])

    def _rarest(self, words: frozenset[str]) -> str | None:
        """Of the question's words a sentence carries, the one the documents hold least often (a term first)."""
        terms = [t for t in self.profile.terms if t in words] or [k for k in self.profile.keywords if k in words]
        if not terms:
            return None
        if self.counter is None:
            return terms[0]
        counts = {t: self.counter(t) for t in terms}
        return min((t for t in terms if counts[t]), key=lambda t: counts[t], default=None)

    # --- answer content -------------------------------------------------------------------------------

    def atoms(self, answer: str) -> list[str]:
        """The parts of the answer that must be found in the evidence."""
        question_terms = {t.lower() for t in self.profile.terms}
        numbers = [n for n in (thousands(m) for m in NUMBER.findall(answer)) if n not in question_terms]
        names = [t for t in distinguishing_terms(answer, []) if t.lower() not in question_terms
                 and not NUMBER.fullmatch(t) and t.lower() not in STOPWORDS]
        atoms = list(dict.fromkeys(numbers + names))
        if not atoms:
            words = [w for w in re.split(r"\W+", answer.lower()) if w and w not in ("a", "an", "the")]
            if 0 < len(words) <= 8:
                atoms = [" ".join(words)]
        if self.profile.answer_type == "path":  # a path is looked for whole: /var/tmp, not "var" and "tmp"
            paths = [m.group(0).rstrip(".,;:") for m in PATH.finditer(answer)]
            atoms = [p for p in paths if "/" in p.strip("/")] + [f"/{p.strip('/')}" for p in paths
                                                                 if "/" not in p.strip("/")] or atoms
        if self.profile.answer_type == "number" and not numbers:
            atoms = [str(NUMBER_WORDS[w]) for w in re.findall(r"[a-z]+", answer.lower()) if w in NUMBER_WORDS] \
                or atoms
        return atoms

    def _wrong_kind(self, answer: str) -> Verdict | None:
        p, low = self.profile, answer.lower()
        if p.kind is Kind.YESNO:
            return None if re.match(r"\s*(yes|no)\b", low) else Verdict(False, missing="the question asks yes or no",
                                                                          kind_ok=False)
        own = [w for w in re.split(r"[^a-z0-9]+", low) if w and w not in STOPWORDS]
        asked = set(re.split(r"[^a-z0-9]+", p.question.lower()))
        asked |= {stem(w) for w in asked}  # in any form: default_headers() for "its default User-Agent header"
        # a compound token (~/.bash_history, HTTPStatus.OK) is a word of its own unless the question writes it
        compounds = [t.strip(".,;:!?()\"'").rstrip("/") for t in low.split()
                     if re.search(r"\w[_./~-]\w|^[~/.]", t.strip(".,;:!?()\"'"))]
        # ... and an identifier made only of the question's words (default_user_agent for "the default User-Agent")
        # repeats the question; a path (~/.bash_history) is a place of its own
        new_compound = any(c and c not in p.question.lower() and
                           ("/" in c or "~" in c or not {stem(w) for w in re.split(r"[_.()-]+", c.strip("_.()"))
                                                         if w} <= asked)
                           for c in compounds)
        if own and all(w in asked or stem(w) in asked for w in own) and p.kind is not Kind.CHOICE and not new_compound:
            return Verdict(False, missing=f"the answer {answer!r} only repeats words of the question",
                           step=self.term_step(), kind_ok=False)
        if re.match(r"\s*who(?:m|se)?\b", p.question, re.I):
            described = {stem(w.lower()) for w in re.findall(r"\bthe\s+(\w+)", p.question, re.I)}
            last = re.findall(r"[a-z]+", low)[-1:]
            if not last:  # "105-89" for "Who signed ...?"
                return Verdict(False, missing=f"the question asks who; {answer!r} names no one",
                               step=self.term_step(), kind_ok=False)
            if stem(last[0]) in described:  # "Who signed the act ...?" answered with the act's name
                return Verdict(False, missing=f"the answer {answer!r} names the {last[0]} the question speaks of; "
                                              f"the question asks who", step=self.term_step(), kind_ok=False)
        kind = p.answer_type
        ok = {"number": lambda: bool(re.search(r"\d", answer)) or any(w in NUMBER_WORDS for w in own),
              "date": lambda: bool(DATE.search(answer)),
              "path": lambda: bool(re.search(r"(^|\s)[~.]?/\S|\S/\S|(^|\s)~|\w\.\w{1,5}\b", answer))}.get(kind, lambda: True)()
        if ok and kind == "text" and NAME_ASK.search(p.question) and NUMBER.fullmatch(answer.strip()):
            return Verdict(False, missing=f"the question asks for a name; {answer!r} is a number", kind_ok=False,
                           step=self.term_step())
        if ok:
            return None
        shown = answer if len(answer) <= 60 else answer[:57] + "..."
        return Verdict(False, missing=f"the question asks for a {kind}; {shown!r} is not one",
                       step=grep_step(answer) if len(answer) <= 60 else self.term_step(), kind_ok=False)

    def _option_text(self, answer: str) -> str | None:
        options = dict(self.profile.options)
        m = re.match(r"\s*\(?([A-J])(\)|\.|:|$|\s)", answer)
        if m and m.group(1) in options:
            return options[m.group(1)]
        for _, text in self.profile.options:
            if norm(text) and norm(text) in norm(answer):
                return text
        return None

    # --- predicates, one per kind of question ---------------------------------------------------------

    def best_valued(self, s: Sentence) -> bool:
        """For a number, a date or a path: the sentence matches the question about as well as the best shown
        sentence that carries the question's names and states such a value ("/etc/opt" in a sentence on
        configuration files does not answer where variable files go, when a sentence on variable files says)."""
        kind = self.profile.answer_type
        if self.default_after(s) is not None:
            return False
        if kind not in VALUES or not self.profile.terms:
            return True  # questions naming nothing are held to it in _in_best_passage
        pool = self._memo("valued_carrying", lambda: [
            x for x in self.log.sentences()
            if self._valued(x) and self.carries(x, bridges=False) is not None and self.default_after(x) is None])
        return self._unbeaten(s, pool, by_rarer=False)  # one holding a rarer word competes: _competing says so

    def _unbeaten(self, s: Sentence, pool: list[Sentence], by_rarer: bool = True) -> bool:
        """Whether no sentence of `pool` matches the question clearly better than `s`: one holding a word of the
        question rarer than any `s` holds over it, matching at least half as well (the condition the question
        names: "If a command cannot be found" beside "If no commands are executed" for "a command that doesn't
        exist"), or one matching clearly better (1/COMPETING_SHARE) when `s` holds no such rarer word itself. A line
        of code assigning a name made of the question's words is beaten by no line that does not."""
        mine, score = self.stated_words(s), self.sentence_score(s)
        named = self._names_asked(s.text)  # `__version__ = "2.28.1"`: in code, a value is what its name says
        for x in pool:
            its, other = self.stated_words(x), self.sentence_score(x)
            if x is s or its == mine and other == score or named and not self._names_asked(x.text):
                continue
            if by_rarer and other >= RARER_COMPETING_SHARE * score and self._rarer(its - mine, mine - its):
                return False
            if score < COMPETING_SHARE * other and not self._rarer(mine - its, its - mine):
                return False
        return True

    def whole_range(self, s: Sentence, atoms: list[str]) -> bool:
        """Whether the answer gives a range the sentence states whole: "65536" from "UIDs in the range
        65536-4294967293 are reserved" is one end of what is asked, unless the question asks for an end (the
        largest, the lowest, where it starts)."""
        if self.profile.values > 1 or _LARGEST.search(self.profile.question) or \
                _SMALLEST.search(self.profile.question) or _AN_END.search(self.profile.question):
            return True
        for m in _RANGE.finditer(self.whole_sentence(s)):
            ends = {thousands(m.group(1)), thousands(m.group(2))}
            if len(ends) == 2 and len(ends & set(atoms)) == 1:
                return False
        return True

    def denies(self, s: Sentence) -> bool:
        """Whether a sentence says the question's action does not happen (for a question that does not ask about a
        negation): "adduser will not allocate UIDs and GIDs in this range" gives no range adduser allocates."""
        if NEGATION.search(self.profile.question):
            return False
        stems = [stem(k) for k in self.profile.keywords]
        text = norm(self.whole_sentence(s))
        return any(prefix(k, " ".join(text[m.end():].split()[:2])) for m in NEGATION.finditer(text) for k in stems)

    def stated_words(self, s: Sentence) -> frozenset[str]:
        """The question's words a sentence states itself (whole, across a line break; not from its paragraph):
        a condition is stated in the sentence it holds for. The question's names are not among them: a sentence
        carries those through its section or a chain as well."""
        return self.question_words(self.whole_sentence(s), related=True) - set(self.profile.terms)

    def relates(self, atom: str, s: Sentence, links: list[Sentence]) -> bool:
        """Beyond naming the same things, the sentence speaks of what is asked: one of the question's other
        words is there (or in a linking sentence); and a number answering "how many beds" is a number of
        beds, not of something else on the same line."""
        p = self.profile
        if p.terms and p.keywords and not any(prefix(stem(k), x.context) for k in p.keywords for x in [s, *links]) \
                and not self._defines_term(s):
            return False
        if p.answer_type == "number" and p.count_words:
            nouns = [stem(w) for w in p.count_words]
            # the words after the number (after the list it starts: "75, 100, 150 or 300 dots per inch"), or before
            nears = list(re.finditer(rf"(?<![\d.]){re.escape(atom)}(?!\.?\d)(?:(?:\s*,\s*|\s+(?:or|and|to)\s+)"
                                     rf"\d[\d.]*)*(?:\s+\S+){{0,3}}", s.norm))
            if any(prefix(n, near.group(0) + " " + s.norm[:near.start()][-40:]) for near in nears for n in nouns):
                return True
            near = nears[0] if nears else None
            named = re.search(rf"(\w+)\s*[:=]\s*{re.escape(atom)}(?![\w.])", s.text)  # code: chunk_size=1
            if named and any(prefix(stem(k), " ".join(named.group(1).lower().split("_"))) for k in p.keywords):
                return True
            # a sentence with one value and no name of its own takes its unit from its paragraph ("The value is
            # specified in milliseconds ... The default value is 500.")
            lead = norm(self.lead(s))
            return near is not None and not self.own_names(s) and len(set(self.values(s.text))) == 1 and \
                any(prefix(n, lead) for n in nouns)
        return True

    def _defines_term(self, s: Sentence) -> bool:
        """Whether the sentence is the definition of a name the question asks about (`def default_user_agent(name=
        "python-requests"):` for "What name does default_user_agent put ...?"): it speaks of it, whatever words the
        question uses around the name."""
        from lcread.tools.definitions import NAME, definition_pattern

        names = [t for t in self.profile.terms if NAME.match(t) and ("_" in t or "." in t)]  # written as code
        return any(re.search(definition_pattern(t), s.text) for t in names)

    def component(self) -> list[Sentence]:
        """The shown sentences that carry the question's terms, and every sentence linked to them through a
        shared name (not boilerplate), transitively: the chain a list answer is drawn from."""
        sentences = self.log.sentences()
        inside = [s for s in sentences if self.carries(s, bridges=False) is not None]
        names = set().union(*(self.entities(s) for s in inside)) if inside else set()
        names = {n for n in names if self.uses(n) <= MAX_BRIDGE_USES}
        grew = True
        while grew:
            grew = False
            for s in sentences:
                if s in inside:
                    continue
                mine = {e for e in self.entities(s) if self.uses(e) <= MAX_BRIDGE_USES}
                if mine & names:
                    inside.append(s)
                    names |= mine
                    grew = True
        return inside

    def pages(self) -> dict[tuple[str, int], str]:
        """The page of each shown sentence that carries the question's terms (from the document's page map,
        or a [page N] heading grep -p showed)."""
        out = {}
        for s in self.log.sentences():
            if self.carries(s) is None:
                continue
            place = (self.place_of(s.doc, s.line) if self.place_of else None) or s.section or ""
            m = re.search(r"\bpage (\d+)", place)
            if m:
                out[(s.doc, s.line)] = m.group(1)
        return out

    # --- the values an answer may take (the answer grammar's) -----------------------------------------

    def candidates(self, after_refusal: bool = False, **narrower) -> list[str]:
        """The grounded values an answer to this question may take (the question kind's, from the table); a
        lookup's may be narrowed to the values of its best `lines`, leaving out those `refused`."""
        return KINDS[self.profile.kind].candidates(self, after_refusal, **narrower)

    def linked_items(self, answer: str) -> list[str]:
        """The items of a list answer that the chain of shown lines already links to the question."""
        if self.profile.kind is not Kind.LIST:
            return []
        component = self.component()
        atoms = self.atoms(LABEL.sub("", answer.strip()).strip().strip('"').rstrip("."))
        return [a for a in atoms if any(has(s.norm, a) for s in component)]

    def expected_count(self) -> int | None:
        """How many values a several-value answer must hold, when the evidence says: one per part asked
        for, or every value a complete search for the term showed."""
        p = self.profile
        if p.kind is Kind.PARTS:
            return len(p.parts)
        if p.values > 1:
            return p.values
        term = self.main_term() if p.kind is Kind.ALL else None
        if term and self.log.searched(term) is not None:
            values = {v for s in self.log.sentences() if has(s.context, term) for v in self.values(s.text)}
            return len(values) or None
        return None

    def slots(self) -> list[list[str]] | None:
        """For several parts asked together, the values shown with each part, part by part; for every value of a
        term, once a complete search for it is shown, each value it gave, once, in the documents' order (a small
        model drops values it gave before and repeats others)."""
        p = self.profile
        if p.answer_type not in ("number", "date"):
            return None
        term = self.main_term() if p.kind is Kind.ALL else None
        if term and self.log.searched(term) is not None:
            found = {}
            for s in sorted(self.log.sentences(), key=lambda x: (x.doc, x.line, x.start)):
                if has(s.context, term):
                    for raw in self.raw_values(s.text):
                        found.setdefault(self.values(raw)[0] if self.values(raw) else raw, raw)
            return [[raw] for raw in found.values()] or None
        if p.kind is not Kind.PARTS:
            return None
        out = []
        for part in p.parts:
            values = [v for s in self.log.sentences() if has(s.context, part) for v in self.raw_values(s.text)]
            out.append(list(dict.fromkeys(values))[:12])
        return out if all(out) else None

    def names(self, s, asked: set[str], terms: set[str], pool: int) -> list[str]:
        """The names and quoted values a sentence states (`python-requests` in `name="python-requests"`), less
        those made of the question's own words and those on many lines (boilerplate)."""
        quoted = [a or b or c for a, b, c in _QUOTED_VALUE.findall(s.text)]
        paths = [m.group(0).rstrip(".,;:") for m in PATH.finditer(s.text) if re.search(r"[a-z]", m.group(0), re.I)]
        names = [e for e in distinguishing_terms(s.text, [], whole=True) if '"' not in e]
        return [e for e in dict.fromkeys(quoted + paths + names) if norm(e) not in terms and not NUMBER.fullmatch(e)
                and not set(re.split(r"[^a-z0-9]+", e.lower())) <= asked
                and self.uses(e) <= max(MAX_BRIDGE_USES, 2 * pool // 3)]


    def pairs(self) -> list[str]:
        """For a range or a size asked as a whole: the pairs of different values, in order, that one shown
        sentence states side by side ("10, 7" from "10 inches x 7 inches", "1000, 59999" from "1000-59999"),
        among the grounded values: the only two-value answers that can be verified."""
        if self.profile.values < 2 or self.profile.kind is not Kind.LOOKUP:
            return []
        grounded = set(self.candidates())
        out = []
        for s in self.log.sentences():
            values = [v for v in dict.fromkeys(self.raw_values(s.text)) if v in grounded]
            out += [f"{a}, {b}" for a, b in zip(values, values[1:])]
        return list(dict.fromkeys(out))[:24]

    def counts(self) -> list[str]:
        """What lcread can count: the sentences with the question's place or name (over the whole input when
        lcread can search it, else from a complete search shown), and those of them that also name what is
        counted."""
        from lcread.grounding.evidence import EvidenceLog

        term = self.main_term()
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

    # --- helpers --------------------------------------------------------------------------------------

    def carries(self, s: Sentence, bridges: bool = True) -> list[Sentence] | None:
        """Whether the sentence carries the question's terms: each term in it (or its section or title),
        or in a shown sentence that shares an entity with it. Returns the linking sentences ([] when none
        are needed), or None."""
        p = self.profile
        if not p.terms and self.best_passages is not None:
            return [] if self._in_best_passage(s) else None
        if not p.terms:
            need = min(1 if len(p.keywords) <= 2 else 2, len(p.keywords))
            have = self._coverage(s)
            return [] if have >= need and have >= self._best_coverage() else None
        links: list[Sentence] = []
        lead = None
        for term in p.terms:
            if has(s.context, term) or has(norm(self.whole_sentence(s)), term):  # across a line break too
                continue
            if lead is None:  # a sentence that names nothing of its own is about what its paragraph is about
                lead = norm(self.lead(s)) if not self.own_names(s) else ""
            if has(lead, term):
                continue
            chain = self._bridge(s, term) if bridges else None
            if chain is None:
                return None
            links += [x for x in chain if x not in links]
        return links

    def _bridge(self, s: Sentence, term: str) -> list[Sentence] | None:
        """The shortest chain of shown sentences (at most BRIDGE_HOPS) from `s` to one that carries `term`,
        each sharing a (not boilerplate) name with the one before: `self.max_redirects = DEFAULT_REDIRECT_LIMIT`,
        `DEFAULT_REDIRECT_LIMIT = LIMIT_ALIAS`, `LIMIT_ALIAS = 30`."""
        def index() -> dict[str, list[Sentence]]:
            out: dict[str, list[Sentence]] = {}
            for x in self.log.sentences():
                for e in self.entities(x):
                    if self.uses(e) <= (MAX_NAME_USES if "_" in e else MAX_BRIDGE_USES):  # a code name links
                        out.setdefault(e, []).append(x)
            return out

        by_name = self._memo("by_name", index)
        paths, visited = [[s]], {id(s)}
        for _ in range(BRIDGE_HOPS):
            following = []
            for path in paths:
                for e in self.entities(path[-1]):
                    for other in by_name.get(e, []):
                        if id(other) in visited or _rebinds(path[-1].text, other.text, e):
                            continue
                        if has(other.context, term):
                            return path[1:] + [other]
                        visited.add(id(other))
                        following.append(path + [other])
            paths = following
        return None

    def _memo(self, key, compute):
        """A value computed once per state of the evidence (it only grows, so its size is its version)."""
        version = len(self.log.pieces)
        if getattr(self, "_memo_version", None) != version:
            self._memo_version, self._memo_values = version, {}
        if key not in self._memo_values:
            self._memo_values[key] = compute()
        return self._memo_values[key]

    def _in_best_passage(self, s: Sentence) -> bool:
        """With no name or number in the question to tie the answer to, the answer must come from one of the
        passages that match the question best over the whole input (lcread's ranked search, lemmas and all),
        and from a sentence there that matches the question about as well as the best one does (with the lines
        beside it: a PDF breaks sentences across lines): a sentence that merely sits near the question's words
        ("6.1. Linux" in a table of contents) establishes nothing."""
        found = self._best_search()
        best = found.passages[:BEST_PASSAGES] if found else []
        if not best:
            return False
        floor = BEST_SHARE * best[0].score
        inside = [p for p in best if p.score >= floor]
        if not any(p.doc.name == s.doc and p.start <= s.line <= p.end for p in inside):
            return False
        score = self.sentence_score
        top = self._memo("best_sentence", lambda: max(
            (score(x) for x in self.log.sentences() for p in inside
             if p.doc.name == x.doc and p.start <= x.line <= p.end), default=0.0))
        kind = self.profile.answer_type
        share = VALUED_SHARE if kind in VALUES else BEST_SHARE  # a value: held to the valued best
        lines = self._memo("lines", lambda: {(p.doc, p.line): p.text for p in self.log.pieces if p.start == 0})
        before = lines.get((s.doc, s.line), "")[:s.start]  # a short sentence ("The default is 79 by 24.") with its line
        words = len(re.findall(r"[A-Za-z]{3,}", before + self.whole_sentence(s)))
        if not (score(s) >= share * top > 0 and (words >= 3 or self._names_asked(s.text))):
            return False
        if self.default_after(s) is not None:
            return False
        if kind not in VALUES:
            return True
        # a value must come from the sentence stating such a value that matches the question best (or one about
        # as good): "/etc/opt" in a sentence on configuration does not answer where variable files go
        pool = self._memo("valued_inside", lambda: [
            x for x in self.log.sentences() for p in inside
            if p.doc.name == x.doc and p.start <= x.line <= p.end and self._valued(x)
            and self.default_after(x) is None])
        return self._unbeaten(s, pool)

    def _valued(self, s: Sentence) -> bool:
        """Whether a sentence states a value of the asked kind (two different ones, for a range or a size asked
        as a whole: "a size of 12 points" states no size of a plot)."""
        if not holds_value(s.text, self.profile.answer_type):
            return False
        if self.profile.answer_type in ("number", "date") and all(
                only_a_reference(s.norm, v) or v in self.section_numbers() for v in self.values(s.text)):
            return False  # "the directories listed in 4.9" states a place in the text, no value
        return self.profile.values < 2 or len(set(self.values(self.whole_sentence(s)))) >= self.profile.values

    def the_default(self, s: Sentence, atoms: list[str]) -> bool:
        """For a question about a default, in a sentence that states one among other values ("res may be 75, 100,
        150 or 300 dots per inch; the default is 75"): the answer is the value the default is said of, just
        after the mention (or just before it: "500 by default")."""
        text = self.whole_sentence(s)
        if not self.profile.default or len(set(self.values(text))) < 2:
            return True
        for m in DEFAULT_STATED.finditer(text):
            clause = re.split(CLAUSE_END, text[m.end():m.end() + DEFAULT_REACH])[0]
            before = re.split(CLAUSE_END, text[max(0, m.start() - 25):m.start()])[-1]
            near = self.values(clause) or self.values(before)[-1:]
            if near:
                return all(a in near for a in atoms)
        return True

    def default_kept(self, s: Sentence, links: list[Sentence]) -> bool:
        """A question about a default, when a shown line that carries the question states one, is answered from
        a line (or a chain) that states a default: `self.max_redirects = DEFAULT_REDIRECT_LIMIT`, not a line that
        merely uses the value (`if len(resp.history) >= self.max_redirects`)."""
        if not self.profile.default:
            return True
        bound = self._memo("asked_bindings", self._asked_bindings)
        if bound and not any(has(x.norm, b) and not re.search(rf"=\s*{re.escape(b)}\b", x.text)
                             for b in bound for x in [s, *links]):
            return False  # `def iter_lines(self, chunk_size=ITER_CHUNK_SIZE)`: the default is ITER_CHUNK_SIZE's value
        stated = self._memo("default_stated", lambda: any(
            DEFAULT_STATED.search(self.whole_sentence(x)) and self.carries(x, bridges=False) is not None
            for x in self.log.sentences()))
        return not stated or any(DEFAULT_STATED.search(self.whole_sentence(x)) for x in [s, *links])

    def _asked_bindings(self) -> set[str]:
        """What the lines naming the question's terms bind the asked name to (`chunk_size=ITER_CHUNK_SIZE` in
        `iter_lines`' signature, for "What chunk size does iter_lines read with by default?"): a default comes
        from there, not from another function's parameter of the same name."""
        out = set()
        for x in self.log.sentences():
            if self.profile.terms and all(has(x.context, t) for t in self.profile.terms):
                out |= {v for v in self._bound_to_asked_name(x.text)
                        if re.fullmatch(r"[A-Za-z_][\w.]*", v) and v not in ("None", "True", "False")}
        return out

    def _bound_to_asked_name(self, text: str) -> set[str]:
        """The values a line binds a name made of the question's words to (`chunk_size=ITER_CHUNK_SIZE`, and
        `max_retries=DEFAULT_RETRIES` for "how many times ... retry"), not passing a name on as itself."""
        stems = {stem(k) for k in self.profile.keywords}
        out = set()
        for name, value in re.findall(r"(?<![\w.])([A-Za-z_]\w*)\s*=(?!=)\s*([^\s,)]+)", text):
            parts = [w for w in re.split(r"_+|(?<=[a-z])(?=[A-Z])", name.lower()) if w]
            named = [w for w in parts if w not in _MODIFIERS]  # max_retries names retries
            if len(parts) >= 2 and named and all(stem(w) in stems for w in named) and value.lower() != name.lower():
                out.add(value)
        return out

    def default_after(self, s: Sentence) -> Sentence | None:
        """For a question about a default: a sentence further on in the same paragraph that states the default
        (with a value of the kind asked), when this one does not: "a value of 1000 means one second" is an
        example, "The default value is 500." answers."""
        if not self.profile.default or DEFAULT_STATED.search(self.whole_sentence(s)):
            return None
        kind = self.profile.answer_type
        mine = norm(self.whole_sentence(s))[:60]
        for x in self.log.sentences():
            if x.doc == s.doc and (x.line, x.start) > (s.line, s.start) and x.line <= s.line + ENTRY_LINES and \
                    DEFAULT_STATED.search(self.whole_sentence(x)) and \
                    (kind not in VALUES or holds_value(x.text, kind)) and mine in norm(self.lead(x)):
                return x
        return None

    def _best_search(self):
        if not hasattr(self, "_best_found"):  # one ranked search per run: it depends on the question alone
            self._best_found = self.best_passages() if self.best_passages is not None else None
        return self._best_found

    def sentence_score(self, s: Sentence) -> float:
        """How well a shown sentence (whole, across a PDF's line breaks) matches the question, by the ranked
        search's weighted terms; a sentence that quotes the question itself echoes it, it does not answer."""
        ranker = self._ranker()
        if ranker is None:
            return float(self._coverage(s))
        whole = self.whole_sentence(s)
        asked = norm(self.profile.question).rstrip("?")
        if asked and asked in norm(whole):
            return 0.0
        score = ranker.score(whole) + LEAD_SHARE * ranker.score(" ".join(filter(None, [s.title, self.lead(s)])))
        if self.profile.default and DEFAULT_STATED.search(whole):
            score *= DEFAULT_BONUS
        return score * NAMED_BONUS if self._names_asked(whole) else score

    def _names_asked(self, text: str) -> bool:
        """Whether a line of code assigns a name made only of the question's words (`__version__ = "2.28.1"` for
        "Which version of requests is this?"): in code, a value is what its name says."""
        m = _ASSIGNED.match(text)
        if not m or text.rstrip().endswith(","):  # `version=morsel["version"] or 0,`: an argument of a call
            return False
        parts = [w for w in re.split(r"_+|(?<=[a-z])(?=[A-Z])", m.group(1).lower()) if w]
        stems = {stem(k) for k in self.profile.keywords}
        return bool(parts) and all(stem(w) in stems for w in parts)

    def _ranker(self):
        """The ranked search's weighted terms, as a scorer of sentences (without the words of a case the question
        sets aside); None without a ranked search."""
        from lcread.tools.search import Ranker, lemma

        found = self._best_search()
        if found is None:
            return None
        aside = [lemma(w.lower()) for w in self.profile.set_aside]
        return self._memo("ranker", lambda: Ranker([t for t in found.terms if not any(w in t.key for w in aside)]))

    def best_clause(self, s: Sentence, atoms: list[str]) -> bool:
        """In a sentence stating several values of the kind asked for one, the answer is in the clause that
        matches the question best: "Exit statuses fall between 0 and 255, though, as explained below, the shell
        may use values above 125 specially" states the largest exit status in its first clause, not its last."""
        text, ranker = self.whole_sentence(s), self._ranker()
        if ranker is None or self.profile.values > 1 or self.profile.default or len(set(self.values(text))) < 2:
            return True
        clauses = [(ranker.score(c), set(self.values(c))) for c in re.split(CLAUSES, text)]
        mine = [(score, values) for score, values in clauses if values & set(atoms)]
        if not mine:
            return True
        score, values = max(mine, key=lambda pair: pair[0])
        if score < max(score for score, values in clauses if values):
            return False
        extreme = max if _LARGEST.search(self.profile.question) else \
            min if _SMALLEST.search(self.profile.question) else None  # "between 0 and 255": the largest is 255
        numbers = {float(v): v for v in values if re.fullmatch(r"\d+(?:\.\d+)?", v)}
        return extreme is None or len(numbers) < 2 or numbers[extreme(numbers)] in atoms

    def lead(self, s: Sentence) -> str:
        """What comes before a sentence in its paragraph, as shown (up to LEAD_CHARS): the sentences before it on
        its line and, where the text is wrapped (a PDF's lines: the line before ends mid-sentence, or this one
        goes on in lower case), the lines before, back to where a paragraph or an entry begins. "The default value
        is 500." is about the wait for more input its paragraph began with."""
        from lcread.tools.definitions import is_code

        if s.start == 0 and s.text[:1].islower():  # the sentence began on the line before: its lead is from there
            by_line = self._memo("by_line", lambda: {(x.doc, x.line): x for x in self.log.sentences()})
            before = by_line.get((s.doc, s.line - 1))  # the last sentence shown on that line
            if before is not None and not before.text.rstrip().endswith((".", "!", "?", ":")):
                return self.lead(before)
        lines = self._memo("lines", lambda: {(p.doc, p.line): p.text for p in self.log.pieces if p.start == 0})
        own = lines.get((s.doc, s.line))
        out = [own[:s.start]] if own is not None and s.start > 0 else []
        head, n = (own or s.text), s.line - 1
        while not is_code(s.doc) and sum(map(len, out)) < LEAD_CHARS:
            text = lines.get((s.doc, n))
            if text is None or not text.strip():
                break
            wrapped = head.lstrip()[:1].islower() or len(text.strip()) >= WRAPPED_LINE  # a line a PDF broke
            if entry_name(text) or not wrapped or \
                    text.rstrip().endswith((".", "!", "?", ":")) and not head.lstrip()[:1].islower():
                break
            out.insert(0, text)
            head, n = text, n - 1
        return " ".join(out)[-LEAD_CHARS:]

    def answer_lines(self, refused: set[str], top: int = 4) -> list[Sentence]:
        """The shown sentences that match the question best and hold a value of the kind asked for that no
        refused answer holds: what lcread shows when an answer to a question naming nothing is sent back."""
        kind = self.profile.answer_type
        scored = []
        for s in self.log.sentences():
            if kind in VALUES and not holds_value(s.text, kind):
                continue
            values = {norm(v) for v in self.raw_values(s.text)} if kind in ("number", "date") else set()
            if values and values <= refused:
                continue
            score = self.sentence_score(s)
            if score > 0:
                scored.append((score, s))
        scored.sort(key=lambda x: (self.default_after(x[1]) is not None, -x[0]))  # a default stated first
        seen, out = set(), []
        for _, s in scored:  # a sentence across a line break is one sentence, shown once
            whole = (s.doc, norm(self.whole_sentence(s)))
            if (s.doc, s.line) not in seen and whole not in seen:
                seen |= {(s.doc, s.line), whole}
                out.append(s)
        return out[:top]

    def whole_sentence(self, s: Sentence) -> str:
        """A sentence as written, where a line break cut it (PDF text): the end of the line before when the
        sentence begins its line in lower case and that line ends mid-sentence, the start of the next when it
        ends its line without a full stop and the next line goes on in lower case (a heading borrows nothing)."""
        lines = self._memo("lines", lambda: {(p.doc, p.line): p.text for p in self.log.pieces if p.start == 0})
        text = s.text
        before, after = lines.get((s.doc, s.line - 1)), lines.get((s.doc, s.line + 1))
        own = lines.get((s.doc, s.line), "")
        # a sentence goes on across a line break when the line ends mid-sentence and the next begins in lower case
        if before and s.start == 0 and s.text[:1].islower() and not before.rstrip().endswith((".", "!", "?", ":")) \
                and not re.search(r"[\w\])]\s*=(?!=)\s*\S", before):  # an assignment is a whole statement
            text = re.split(r"(?<=[.!?])\s+", before.strip())[-1] + " " + text
        ends = own.rstrip().endswith(s.text.rstrip())
        if after and ends and s.text.rstrip().endswith(":"):  # a label ("65534:"): the lines below describe it
            n, more = s.line + 1, []
            while after and after.strip() and after[:1].isspace() and not after.rstrip().endswith(":") and \
                    sum(map(len, more)) < LABEL_CHARS:
                more.append(after.strip())
                n += 1
                after = lines.get((s.doc, n))
            text += " " + " ".join(more or [lines[(s.doc, s.line + 1)].strip()])
        elif after and ends and not s.text.rstrip().endswith((".", "!", "?")) and after.strip()[:1].islower():
            text += " " + re.split(r"(?<=[.!?])\s+", after.strip())[0]
        return text

    def _coverage(self, s: Sentence) -> int:
        return sum(prefix(stem(k), s.context) for k in self.profile.keywords)

    def _best_coverage(self) -> int:
        """With only keywords to go by, an answer must come from the shown sentences that carry the most of
        them among those that hold a value or a name: a weaker match elsewhere does not count."""
        key = len(self.log.pieces)
        if getattr(self, "_best", (None,))[0] != key:
            valued = [self._coverage(s) for s in self.log.sentences()
                      if NUMBER.search(s.text) or distinguishing_terms(s.text, [], whole=True)]
            self._best = (key, max(valued, default=0))
        return self._best[1]

    def entities(self, s: Sentence) -> set[str]:
        def compute():
            asked = {t.lower() for t in self.profile.terms}
            return {e.lower() for e in distinguishing_terms(s.text, []) if e.lower() not in asked and len(e) >= 3
                    and not NUMBER.fullmatch(e)}
        return self._memo(("entities", s), compute)

    def own_names(self, s: Sentence) -> set[str]:
        """The names a sentence states besides values (a path or a number is what it says, not what it is
        about): "The default value is ~/.bash_history." names nothing of its own."""
        paths = " ".join(m.group(0).lower() for m in PATH.finditer(s.text))
        return {e for e in self.entities(s) if not NUMBER.fullmatch(e) and e.lower() not in paths}

    def uses(self, entity: str) -> int:
        """In how many shown sentences a name appears (a name in many is boilerplate, not a link)."""
        def count():
            from collections import Counter

            return Counter(e.lower() for s in self.log.sentences() for e in set(distinguishing_terms(s.text, [])))
        return self._memo("uses", count).get(entity.lower(), 0)

    def unlinked(self, atom: str, found) -> Verdict:
        p = self.profile
        term = next((t for t in p.terms if not any(has(s.context, t) for s in found.get(atom, []))), None)
        if term is None:
            return Verdict(False, missing=f"no shown line ties {atom!r} to {', '.join(p.keywords[:3])!r}",
                           step=self.term_step())
        if self.log.searched(term) is None:
            return Verdict(False, missing=f"no shown line mentions {term!r} together with {atom!r}", step=grep_step(term))
        # the term's lines are shown but hold no answer: follow what they name (a chain)
        for s in self.log.sentences():
            if has(s.context, term):
                for entity in sorted(self.entities(s), key=len, reverse=True):
                    if self.log.searched(entity) is None and self.uses(entity) <= MAX_BRIDGE_USES:
                        return Verdict(False, missing=f"the lines about {term!r} do not give {atom!r}; they name "
                                       f"{entity!r}: what do the documents say about it?", step=grep_step(entity))
        return Verdict(False, missing=f"no shown line mentions {term!r} together with {atom!r}")

    def main_atoms(self, atoms: list[str]) -> list[str]:
        kind = self.profile.answer_type
        if kind == "number":
            return [a for a in atoms if re.fullmatch(r"[\d.]+", a)] or atoms
        if kind == "date":
            return [a for a in atoms if DATE.search(a)] or atoms
        return atoms

    def values(self, text: str) -> list[str]:
        if self.profile.answer_type == "date":
            return [m.group(0) for m in DATE.finditer(text)]
        if self.profile.answer_type == "path":
            return [path_key(v) for v in self.raw_values(text)]
        return [str(NUMBER_WORDS[v.lower()]) if v.lower() in NUMBER_WORDS else thousands(v)
                for v in self.raw_values(text)]

    def raw_values(self, text: str) -> list[str]:
        """Values of the asked kind (dates, else numbers, small ones also spelled out) as the text writes them,
        once the question's own terms are taken out (a number inside a name such as quiet-harbor-42 is not a
        value)."""
        for term in sorted(self.profile.terms, key=len, reverse=True):  # whole: /opt is not cut out of /var/opt
            text = re.sub(rf"(?<![\w/.~]){re.escape(term)}(?![\w/])", " ", text, flags=re.I)
        if self.profile.answer_type == "date":
            return [m.group(0) for m in DATE.finditer(text)]
        if self.profile.answer_type == "path":
            return [m.group(0).rstrip(".,;:") for m in PATH.finditer(text)]
        return [m.group(0) for m in VALUE.finditer(text)]

    def unlisted(self, items: list[str], linked: list[Sentence]) -> str | None:
        """A name shaped like the answer's items, in the linked sentences but not in the answer (names found
        in every linked sentence, or in every one that holds an item, are the text's boilerplate, not items:
        the `VAR` of `VAR B = VAR A`)."""
        spelled = next((m.group(0) for s in linked for m in [re.search(re.escape(items[0]), s.text, re.I)] if m),
                       items[0])
        shape = _shape(spelled)
        asked = {t.lower() for t in self.profile.terms} | {i.lower() for i in items}
        counts: dict[str, int] = {}
        for s in linked:
            for token in set(re.findall(r"[A-Za-z_][\w-]*", s.text)):
                if _shape(token) == shape and token.lower() not in asked and token.lower() not in STOPWORDS:
                    counts[token] = counts.get(token, 0) + 1
        holding = [s for s in linked if any(re.search(re.escape(i), s.text, re.I) for i in items)]
        every = {t for t in counts if len(holding) > 1
                 and all(re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", s.text) for s in holding)}
        extra = [t for t, n in counts.items() if n < len(linked) and t not in every]
        return extra[0] if extra and len(linked) > 1 else None

    def main_term(self) -> str | None:
        terms = [t for t in self.profile.terms if not re.fullmatch(r"[\d,.]+", t)] or self.profile.terms
        return terms[0] if terms else None

    def term_step(self) -> str:
        term = self.main_term() or self._rarest_keyword()
        return grep_step(term) if term else "ls"

    def _rarest_keyword(self) -> str | None:
        """The keyword with the fewest matches (but some), not searched yet: the most telling one."""
        words = [k for k in self.profile.keywords if self.log.searched(k) is None] or self.profile.keywords
        if not words or self.counter is None:
            return words[0] if words else None
        counts = {k: self.counter(k) for k in words}
        found = [k for k in words if counts[k]]
        return min(found, key=lambda k: counts[k]) if found else words[0]

    def locate(self, answer: str) -> list[Citation]:
        """Shown sentences holding any part of the answer (for an answer that is not verified)."""
        atoms = self.atoms(LABEL.sub("", answer.strip()).strip().strip('"').rstrip("."))
        return [cite(s) for s in self.log.sentences() if any(holds(s.norm, a) for a in atoms)][:6]


def _rebinds(a: str, b: str, name: str) -> bool:
    """Whether two lines give one name two values: `def iter_content(self, chunk_size=1)` and
    `def iter_lines(self, chunk_size=ITER_CHUNK_SIZE)` are two functions' parameters, not a chain."""
    def bound(text: str) -> str | None:
        m = re.search(rf"(?<![\w.]){re.escape(name)}\s*=(?!=)\s*([^\s,)]+)", text, re.I)
        return m.group(1) if m else None
    one, two = bound(a), bound(b)
    return one is not None and two is not None and one != two


def _shape(token: str) -> str:
    if token.isupper():
        return "upper"
    if token[:1].isupper():
        return "title"
    return "lower"
