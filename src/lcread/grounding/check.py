"""Sufficiency predicates (seed 002, "Early Exit"): whether an answer is backed by what the tools showed.

The answer's content (numbers, names, dates; the whole text when short) is located in the shown
sentences by lcread, never taken from the model; then the predicate for the question's kind is checked
on those sentences. A failed check says what is missing and names the command that would find it.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass, field, replace

from lcread.grounding.candidates import GroundedValues
from lcread.grounding.evidence import ENTRY_LINES, Citation, EvidenceLog, Sentence, cite, has, norm
from lcread.grounding.patterns import DATE, LABEL, MAX_BRIDGE_USES, NUMBER, PATH, entry_name, holds_value, path_key, prefix
from lcread.grounding.question import DEFAULT_STATED, NAME_ASK, NUMBER_WORDS, STOPWORDS, Profile, distinguishing_terms, stem
from lcread.tools.evidence import Shown



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


COMPETING_SHARE = 0.85
"""Another sentence competes with the cited one when it matches the question at least this well, relative to it."""
LEAD_SHARE, LEAD_CHARS = 0.5, 400
"""A sentence matches the question by its own words and, at half weight, by the 400 characters before it in its
paragraph or entry."""
DEFAULT_BONUS = 1.5
DEFAULT_COMPETING_SHARE = 0.7
"""For a question about a default, another sentence stating a default competes when it matches the question
this well (two defaults of one thing, one of them in a mode or case the question does not name, are not
told apart by lcread: neither is verified)."""
"""When the question asks for a default, a sentence that states one matches it this much better."""
MAX_NAME_USES = 12
"""A name written as code (`DEFAULT_REDIRECT_LIMIT`) still links sentences when this many shown lines use it."""
BRIDGE_HOPS = 3
"""A chain links the answer's sentence to the question's names through at most this many sentences."""
BEST_PASSAGES, BEST_SHARE, VALUED_SHARE = 3, 0.7, 0.5
"""An answer to a question without names must sit in one of the 3 best passages, in a sentence scoring at least
70% of the best one there (50% for a number, a date or a path, which must also match about as well as the best
sentence there stating one), and the passage at least 70% of the best passage."""


class Verifier(GroundedValues):
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
        if p.kind == "summary":
            return Verdict(True, applies=False, missing="an open question: no sufficiency check applies")
        if p.comparison and self._option_text(answer.strip()) is not None:
            return Verdict(True, self.locate(self._option_text(answer.strip())), applies=False,
                           missing="a comparison: the lines show each side, not which one wins")
        answer = LABEL.sub("", answer.strip()).strip().strip('"').rstrip(".")
        if p.kind == "choice":
            answer = self._option_text(answer)
            if answer is None:
                return Verdict(False, missing="the answer names none of the options",
                               step=self._term_step())
        wrong = self._wrong_kind(answer)
        if wrong:
            return wrong
        atoms = self.atoms(answer)
        if not atoms:
            return Verdict(False, missing=f"the answer {answer!r} holds nothing lcread can look for in the documents",
                           step=self._term_step(), kind_ok=False)
        found = {a: [s for s in self.log.sentences() if _holds(s.context if p.kind == "where" else s.norm, a)
                     and (p.kind == "page" or not _only_a_reference(s.norm, a))] for a in atoms}
        absent = [a for a, where in found.items() if not where]
        if absent and p.kind not in ("where", "count", "page", "yesno"):
            unsearched = [t for t in p.parts or p.terms if self.log.searched(t) is None]
            return Verdict(False, missing=f"no output shown so far contains {absent[0]!r}",
                           step=_grep(unsearched[0] if unsearched else absent[0]))
        if p.kind == "lookup" and p.answer_type == "text" and not p.terms and not p.quote and not _distinctive(answer):
            return Verdict(False, self.locate(answer), settled=True,
                           missing="the question names nothing the answer can be tied to, and lcread cannot tell "
                                   "what kind of answer it asks for: the answer is not verified")
        route = getattr(self, f"_{p.kind}", self._lookup)
        verdict = route(answer, atoms, found)
        if verdict.ok and verdict.applies and p.answer_type in ("number", "date", "path") and \
                p.kind in ("lookup", "parts"):
            return self._competing(atoms, verdict)
        shape = value_shape(answer)
        if verdict.ok and verdict.applies and p.answer_type == "text" and p.kind == "lookup" and shape:
            # an open question ("the default value of HISTFILE") answered with a path or a number: other values
            # of that shape in sentences matching the question as well compete all the same
            return self._as_kind(shape)._competing(self._as_kind(shape).atoms(answer), verdict)
        return verdict

    def _as_kind(self, kind: str) -> "Verifier":
        """This verifier, reading answers and evidence as values of `kind`."""
        other = copy.copy(self)
        other.profile = replace(self.profile, answer_type=kind)
        other._memo_version = None
        return other

    def _competing(self, atoms: list[str], verdict: Verdict) -> Verdict:
        """Competing evidence, whatever the question's words: lcread searches the whole input for
        the sentences that carry the question's words the cited sentence carries, and collects the values of the
        asked kind in them. A sentence that matches the question as well as the cited one (or names a word of
        the question the cited one lacks: "spring and autumn") and holds a value the answer leaves out means the
        answer is not established: that value is what lcread shows next. Sentences are read whole, with their
        paragraph, as the cited one is."""
        if self.occurrences is None or not verdict.citations:
            return verdict
        cited = set().union(*(self._question_words(c.quote + " " + (c.place or "")) for c in verdict.citations))
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
        best = max((view._sentence_score(x) for x in cited_sentences), default=0.0)
        have = {path_key(a) for a in atoms} if self.profile.answer_type == "path" else set(self._main_atoms(atoms))
        quoted = {(c.doc, c.line, c.quote) for c in verdict.citations}
        asked = set(self._values(self.profile.question)) | {path_key(m.group(0)) for m in PATH.finditer(
            self.profile.question)}  # the question's own values (/opt in "installed in /opt") answer nothing
        for s in found.sentences():
            if (s.doc, s.line, s.text) in quoted:
                continue
            others = [v for v in self._values(s.text) if v not in have and v not in asked
                      and not _only_a_reference(s.norm, v)]
            if not others:
                continue
            words = view._words_read(s)
            if words < cited or not words:
                continue  # it lacks a word of the question the cited sentence has: the question tells them apart
            states = self.profile.default and DEFAULT_STATED.search(view.whole_sentence(s))
            if view._sentence_score(s) < (DEFAULT_COMPETING_SHARE if states else COMPETING_SHARE) * best:
                continue  # it shares the words but matches the question clearly worse (a common word or two)
            self.log.add([Shown(s.doc, s.line, s.start, s.text, kind="match")])
            why = "matches the question as well" if words == cited else \
                f"also matches the question ({', '.join(sorted(words - cited))})"
            return Verdict(False, verdict.citations + [cite(s)],
                           missing=f"another line {why} and holds {others[0]!r}, which the answer leaves out: "
                                   f"{s.doc}:{s.line}: {s.text[:160]}", step=f"read {s.doc} {s.line} {s.line}")
        return verdict

    def _words_read(self, s: Sentence) -> frozenset[str]:
        """The question's words a sentence carries, read whole (across a line break), and with its paragraph
        when it names nothing of its own."""
        lead = self.lead(s) if not self._own_names(s) else ""
        return self._question_words(" ".join([s.context, self.whole_sentence(s), lead]))

    def _question_words(self, text: str) -> frozenset[str]:
        """The question's terms and keywords that a text carries."""
        low = norm(text)
        return frozenset([t for t in self.profile.terms if has(low, t)] +
                         [k for k in self.profile.keywords if prefix(stem(k), low)])

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
        numbers = [n for n in (_THOUSANDS(m) for m in NUMBER.findall(answer)) if n not in question_terms]
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
        if p.kind == "yesno":
            return None if re.match(r"\s*(yes|no)\b", low) else Verdict(False, missing="the question asks yes or no",
                                                                          kind_ok=False)
        own = [w for w in re.split(r"[^a-z0-9]+", low) if w and w not in STOPWORDS]
        asked = set(re.split(r"[^a-z0-9]+", p.question.lower()))
        # a compound token (~/.bash_history, HTTPStatus.OK) is a word of its own unless the question writes it
        compounds = [t.strip(".,;:!?()\"'").rstrip("/") for t in low.split()
                     if re.search(r"\w[_./~-]\w|^[~/.]", t.strip(".,;:!?()\"'"))]
        # ... and an identifier made only of the question's words (default_user_agent for "the default User-Agent")
        # repeats the question; a path (~/.bash_history) is a place of its own
        new_compound = any(c and c not in p.question.lower() and
                           ("/" in c or "~" in c or not set(re.split(r"[_.-]+", c.strip("_."))) <= asked)
                           for c in compounds)
        if own and all(w in asked for w in own) and p.kind != "choice" and not new_compound:
            return Verdict(False, missing=f"the answer {answer!r} only repeats words of the question",
                           step=self._term_step(), kind_ok=False)
        kind = p.answer_type
        ok = {"number": lambda: bool(re.search(r"\d", answer)) or any(w in NUMBER_WORDS for w in own),
              "date": lambda: bool(DATE.search(answer)),
              "path": lambda: bool(re.search(r"(^|\s)[~.]?/\S|\S/\S|(^|\s)~|\w\.\w{1,5}\b", answer))}.get(kind, lambda: True)()
        if ok and kind == "text" and NAME_ASK.search(p.question) and NUMBER.fullmatch(answer.strip()):
            return Verdict(False, missing=f"the question asks for a name; {answer!r} is a number", kind_ok=False,
                           step=self._term_step())
        if ok:
            return None
        shown = answer if len(answer) <= 60 else answer[:57] + "..."
        return Verdict(False, missing=f"the question asks for a {kind}; {shown!r} is not one",
                       step=_grep(answer) if len(answer) <= 60 else self._term_step(), kind_ok=False)

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

    def _lookup(self, answer, atoms, found) -> Verdict:
        main = self._main_atoms(atoms)
        together = main if self.profile.values > 1 else []  # a range or a size: both numbers in one sentence
        if together and len(set(main)) < self.profile.values:
            return Verdict(False, missing=f"a range or a size has {self.profile.values} different values; the answer "
                                          f"gives {len(set(main))}", step=self._term_step())
        for atom in main:
            for s in sorted(found[atom], key=self._sentence_score, reverse=True):  # the best-matching line first
                links = self._carries(s)
                if links is not None and self._relates(atom, s, links) and all(_holds(s.norm, a) for a in together) \
                        and self._best_valued(s) and self._default_kept(s, links):
                    return Verdict(True, [cite(x) for x in [s, *links]])
        return self._unlinked(main[0] if main else atoms[0], found)

    def _best_valued(self, s: Sentence) -> bool:
        """For a number, a date or a path: the sentence matches the question about as well as the best shown
        sentence that carries the question's names and states such a value ("/etc/opt" in a sentence on
        configuration files does not answer where variable files go, when a sentence on variable files says)."""
        kind = self.profile.answer_type
        if self.default_after(s) is not None:
            return False
        if kind not in ("number", "date", "path") or not self.profile.terms:
            return True  # questions naming nothing are held to it in _in_best_passage
        best = self._memo("best_carrying", lambda: max(
            (self._sentence_score(x) for x in self.log.sentences()
             if holds_value(x.text, kind) and self._carries(x, bridges=False) is not None
             and self.default_after(x) is None), default=0.0))
        return self._sentence_score(s) >= COMPETING_SHARE * best

    def _relates(self, atom: str, s: Sentence, links: list[Sentence]) -> bool:
        """Beyond naming the same things, the sentence speaks of what is asked: one of the question's other
        words is there (or in a linking sentence); and a number answering "how many beds" is a number of
        beds, not of something else on the same line."""
        p = self.profile
        if p.terms and p.keywords and not any(prefix(stem(k), x.context) for k in p.keywords for x in [s, *links]):
            return False
        if p.answer_type == "number" and p.count_words:
            nouns = [stem(w) for w in p.count_words]
            near = re.search(rf"(?<![\d.]){re.escape(atom)}(?!\.?\d)(?:\s+\S+){{0,3}}", s.norm)
            before = s.norm[:near.start()][-40:] if near else ""
            if near is not None and any(prefix(n, near.group(0) + " " + before) for n in nouns):
                return True
            # a sentence with one value and no name of its own takes its unit from its paragraph ("The value is
            # specified in milliseconds ... The default value is 500.")
            lead = norm(self.lead(s))
            return near is not None and not self._own_names(s) and len(set(self._values(s.text))) == 1 and \
                any(prefix(n, lead) for n in nouns)
        return True

    _choice = _lookup

    def _yesno(self, answer, atoms, found) -> Verdict:
        """Yes or no, as the shown sentence that carries the question's terms and matches it best says: a
        sentence with a negation ("There must be no subdirectories in /bin") says no, one without says yes."""
        carrying = [(s, links) for s in self.log.sentences() if (links := self._carries(s)) is not None]
        if not carrying or not (self.profile.terms or self.profile.keywords):
            return Verdict(False, missing="no shown line carries the question's terms", step=self._term_step())
        s, links = max(carrying, key=lambda x: self._sentence_score(x[0]))
        says = "no" if _NEGATION.search(self.whole_sentence(s)) else "yes"
        if re.match(r"\s*(yes|no)\b", answer, re.I).group(1).lower() != says:
            return Verdict(False, [cite(s)], missing=f"the line that matches the question best reads as {says!r}: "
                                                     f"{s.doc}:{s.line}: {self.whole_sentence(s)[:160]}")
        return Verdict(True, [cite(x) for x in [s, *links]])

    def _parts(self, answer, atoms, found) -> Verdict:
        values = self._main_atoms(atoms)
        cited, missing = [], []
        for part in self.profile.parts:
            hit = next((s for v in values for s in found.get(v, []) if has(s.context, part)), None)
            if hit is None:
                missing.append(part)
            else:
                cited.append(cite(hit))
        if missing:
            have = [p for p in self.profile.parts if p not in missing]
            return Verdict(False, cited, missing=f"{len(self.profile.parts)} values are asked for "
                           f"({', '.join(self.profile.parts)}); none cited for {missing[0]!r}"
                           + (f" (you have {', '.join(have)})" if have else ""), step=_grep(missing[0]))
        return Verdict(True, cited)

    def _all(self, answer, atoms, found) -> Verdict:
        term = self._main_term()
        if term is None:
            return self._lookup(answer, atoms, found)
        if self.log.searched(term) is None:
            return Verdict(False, missing=f"every value for {term!r} is asked for, and no complete search for it "
                           "has been shown", step=_grep(term))
        values = set(self._main_atoms(atoms))
        with_term = [s for s in self.log.sentences() if has(s.context, term)]
        expected = {v for s in with_term for v in self._values(s.text)}
        lacking = sorted(expected - values)
        if lacking or not expected:
            return Verdict(False, [cite(s) for s in with_term], missing=f"lines with {term!r} also give "
                           f"{', '.join(lacking) or 'no value'}, which the answer lacks" if lacking
                           else f"no shown line gives a value for {term!r}", step=_grep(term))
        return Verdict(True, [cite(s) for s in with_term if any(has(s.norm, v) for v in values)])

    def _list(self, answer, atoms, found) -> Verdict:
        items = [a for a in atoms if found.get(a)]
        if not items:
            return self._unlinked(atoms[0], found)
        component = self._component()
        unlinked = [i for i in items if not any(has(s.norm, i) for s in component)]
        cited = [cite(s) for s in component if any(has(s.norm, i) for i in items)]
        if unlinked:
            return Verdict(False, cited, missing=f"no chain of shown lines links {unlinked[0]!r} to the "
                           "question's terms", step=_grep(unlinked[0]))
        for item in items:  # completeness: each item's own lines searched, nothing linked left out
            if self.log.searched(item) is None:
                return Verdict(False, cited, missing=f"lines that mention {item!r} have not all been searched; "
                               "more items may link to it", step=_grep(item, word=True))
        more = self._unlisted(items, component)
        if more:
            return Verdict(False, cited, missing=f"shown lines link {more!r} to the answer's items, and the "
                           "answer lacks it", step=_grep(more, word=True))
        return Verdict(True, cited)

    def _component(self) -> list[Sentence]:
        """The shown sentences that carry the question's terms, and every sentence linked to them through a
        shared name (not boilerplate), transitively: the chain a list answer is drawn from."""
        sentences = self.log.sentences()
        inside = [s for s in sentences if self._carries(s, bridges=False) is not None]
        names = set().union(*(self._entities(s) for s in inside)) if inside else set()
        names = {n for n in names if self._uses(n) <= MAX_BRIDGE_USES}
        grew = True
        while grew:
            grew = False
            for s in sentences:
                if s in inside:
                    continue
                mine = {e for e in self._entities(s) if self._uses(e) <= MAX_BRIDGE_USES}
                if mine & names:
                    inside.append(s)
                    names |= mine
                    grew = True
        return inside

    def _count(self, answer, atoms, found) -> Verdict:
        """Counts count occurrences, never lines: the sentences that hold the counted thing and the question's
        terms (four on one 217,000-character line are four), counted by lcread over the whole input itself; or
        a count the documents state outright ("logged 5 gale warnings")."""
        numbers = [int(a) for a in atoms if a.isdigit()]
        term = self._main_term() or (self.profile.count_words[0] if self.profile.count_words else None)
        if term is None or not numbers:
            return self._lookup(answer, atoms, found)
        needs = [t for t in self.profile.terms if t != term] + self.profile.count_words
        nouns = [stem(w) for w in self.profile.count_words] or ["time", "occurr", "entr"]
        for n in numbers:  # a count the documents state outright: "logged 5 gale warnings"
            for s in found.get(str(n), []):
                follows = re.search(rf"(?<![\d.,]){n}\s+([a-z-]+)", s.norm)
                if follows and any(follows.group(1).startswith(x) for x in nouns) and self._carries(s) is not None:
                    return Verdict(True, [cite(s)])

        def counted(sentences) -> dict:
            return {(s.doc, s.line, s.start): s for s in sentences if has(s.context, term) and all(
                has(s.context, t) or prefix(stem(t), s.context) for t in needs if t.lower() != term.lower())}

        if self.occurrences is not None:  # lcread counts over the whole input, whatever the model was shown
            whole = EvidenceLog()
            whole.add(self.occurrences(term))
            events = counted(whole.sentences())
            self.log.add([Shown(s.doc, s.line, s.start, s.text, kind="match") for s in events.values()])
        else:
            search = self.log.searched(term)
            if search is None:
                return Verdict(False, missing=f"a count needs every line with {term!r} shown", step=_grep(term))
            events = counted(s for s in self.log.sentences() if (s.doc, s.line) in set(search.lines))
        cited = [cite(s) for s in events.values()][:12]
        if len(events) in numbers:
            return Verdict(True, cited)
        return Verdict(False, cited, missing=f"lcread finds {len(events)} sentences with {term!r}"
                       + (f" and {', '.join(needs)}" if needs else "") + f" in the documents, not {numbers[0]}",
                       step=_grep(term))

    def _page(self, answer, atoms, found) -> Verdict:
        numbers = [a for a in atoms if a.isdigit()]
        pages = self._pages()
        for s in [s for s in self.log.sentences() if self._carries(s) is not None]:
            if pages.get((s.doc, s.line)) in numbers:
                return Verdict(True, [cite(s)])
        if not pages:
            return Verdict(False, missing="no shown line carries the question's terms on a known page",
                           step=self._term_step().replace("grep ", "grep -p ", 1))
        return Verdict(False, missing=f"the shown lines with the question's terms are on page "
                       f"{', '.join(sorted(set(pages.values()), key=int)[:5])}, not {numbers[0] if numbers else answer!r}")

    def _pages(self) -> dict[tuple[str, int], str]:
        """The page of each shown sentence that carries the question's terms (from the document's page map,
        or a [page N] heading grep -p showed)."""
        out = {}
        for s in self.log.sentences():
            if self._carries(s) is None:
                continue
            place = (self.place_of(s.doc, s.line) if self.place_of else None) or s.section or ""
            m = re.search(r"\bpage (\d+)", place)
            if m:
                out[(s.doc, s.line)] = m.group(1)
        return out

    def _where(self, answer, atoms, found) -> Verdict:
        fragment = norm(self.profile.quote or "")[:40]
        hits = [p for p in self.log.pieces if p.kind != "heading" and fragment and fragment in norm(p.text)]
        placed = [p for p in hits if p.section]
        quoted = [Citation(p.doc, p.line, p.start, p.start + len(p.text), p.text) for p in hits]
        if not placed:
            return Verdict(False, quoted, missing="the section holding the quoted text has not been shown",
                           step=_grep(self.profile.quote[:60], with_section=True))
        want = norm(answer)
        for p in placed:
            section = norm(p.section[1])
            if want and (has(section, want) or atoms and all(has(section, a) for a in atoms)):
                heading = Citation(p.doc, p.section[0], 0, len(p.section[1]), p.section[1])
                return Verdict(True, [heading, *[q for q in quoted if q.line == p.line]])
        return Verdict(False, quoted, missing=f"the quoted text sits under {placed[0].section[1]!r}, "
                       "which the answer does not name")

    # --- helpers --------------------------------------------------------------------------------------

    def _carries(self, s: Sentence, bridges: bool = True) -> list[Sentence] | None:
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
            if has(s.context, term):
                continue
            if lead is None:  # a sentence that names nothing of its own is about what its paragraph is about
                lead = norm(self.lead(s)) if not self._own_names(s) else ""
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
                for e in self._entities(x):
                    if self._uses(e) <= (MAX_NAME_USES if "_" in e else MAX_BRIDGE_USES):  # a code name links
                        out.setdefault(e, []).append(x)
            return out

        by_name = self._memo("by_name", index)
        paths, visited = [[s]], {id(s)}
        for _ in range(BRIDGE_HOPS):
            following = []
            for path in paths:
                for e in self._entities(path[-1]):
                    for other in by_name.get(e, []):
                        if id(other) in visited:
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
        score = self._sentence_score
        top = self._memo("best_sentence", lambda: max(
            (score(x) for x in self.log.sentences() for p in inside
             if p.doc.name == x.doc and p.start <= x.line <= p.end), default=0.0))
        kind = self.profile.answer_type
        share = VALUED_SHARE if kind in ("number", "date", "path") else BEST_SHARE  # a value: held to the valued best
        if not (score(s) >= share * top > 0 and len(re.findall(r"[A-Za-z]{3,}", self.whole_sentence(s))) >= 3):
            return False
        if self.default_after(s) is not None:
            return False
        if kind not in ("number", "date", "path"):
            return True
        # a value must come from the sentence stating such a value that matches the question best (or one about
        # as good): "/etc/opt" in a sentence on configuration does not answer where variable files go
        valued = self._memo("best_valued", lambda: max(
            (score(x) for x in self.log.sentences() for p in inside
             if p.doc.name == x.doc and p.start <= x.line <= p.end and holds_value(x.text, kind)
             and self.default_after(x) is None), default=0.0))
        return score(s) >= COMPETING_SHARE * valued

    def _default_kept(self, s: Sentence, links: list[Sentence]) -> bool:
        """A question about a default, when a shown line that carries the question states one, is answered from
        a line (or a chain) that states a default: `self.max_redirects = DEFAULT_REDIRECT_LIMIT`, not a line that
        merely uses the value (`if len(resp.history) >= self.max_redirects`)."""
        if not self.profile.default:
            return True
        stated = self._memo("default_stated", lambda: any(
            DEFAULT_STATED.search(self.whole_sentence(x)) and self._carries(x, bridges=False) is not None
            for x in self.log.sentences()))
        return not stated or any(DEFAULT_STATED.search(self.whole_sentence(x)) for x in [s, *links])

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
                    (kind not in ("number", "date", "path") or holds_value(x.text, kind)) and mine in norm(self.lead(x)):
                return x
        return None

    def _best_search(self):
        if not hasattr(self, "_best_found"):  # one ranked search per run: it depends on the question alone
            self._best_found = self.best_passages() if self.best_passages is not None else None
        return self._best_found

    def _sentence_score(self, s: Sentence) -> float:
        """How well a shown sentence (whole, across a PDF's line breaks) matches the question, by the ranked
        search's weighted terms; a sentence that quotes the question itself echoes it, it does not answer."""
        from lcread.tools.search import Ranker

        found = self._best_search()
        if found is None:
            return float(self._coverage(s))
        ranker = self._memo("ranker", lambda: Ranker(found.terms))
        whole = self.whole_sentence(s)
        asked = norm(self.profile.question).rstrip("?")
        if asked and asked in norm(whole):
            return 0.0
        score = ranker.score(whole) + LEAD_SHARE * ranker.score(" ".join(filter(None, [s.title, self.lead(s)])))
        return score * DEFAULT_BONUS if self.profile.default and DEFAULT_STATED.search(whole) else score

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
            if text is None or not text.strip() or entry_name(text) or \
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
            if kind in ("number", "date", "path") and not holds_value(s.text, kind):
                continue
            values = {norm(v) for v in self._raw_values(s.text)} if kind in ("number", "date") else set()
            if values and values <= refused:
                continue
            score = self._sentence_score(s)
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
        if before and s.start == 0 and s.text[:1].islower() and not before.rstrip().endswith((".", "!", "?", ":")):
            text = re.split(r"(?<=[.!?])\s+", before.strip())[-1] + " " + text
        ends = own.rstrip().endswith(s.text.rstrip())
        if after and ends and s.text.rstrip().endswith(":"):  # a label ("65534:"): the next line describes it
            text += " " + after.strip()
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

    def _entities(self, s: Sentence) -> set[str]:
        def compute():
            asked = {t.lower() for t in self.profile.terms}
            return {e.lower() for e in distinguishing_terms(s.text, []) if e.lower() not in asked and len(e) >= 3
                    and not NUMBER.fullmatch(e)}
        return self._memo(("entities", s), compute)

    def _own_names(self, s: Sentence) -> set[str]:
        """The names a sentence states besides values (a path or a number is what it says, not what it is
        about): "The default value is ~/.bash_history." names nothing of its own."""
        paths = " ".join(m.group(0).lower() for m in PATH.finditer(s.text))
        return {e for e in self._entities(s) if not NUMBER.fullmatch(e) and e.lower() not in paths}

    def _uses(self, entity: str) -> int:
        """In how many shown sentences a name appears (a name in many is boilerplate, not a link)."""
        def count():
            from collections import Counter

            return Counter(e.lower() for s in self.log.sentences() for e in set(distinguishing_terms(s.text, [])))
        return self._memo("uses", count).get(entity.lower(), 0)

    def _unlinked(self, atom: str, found) -> Verdict:
        p = self.profile
        term = next((t for t in p.terms if not any(has(s.context, t) for s in found.get(atom, []))), None)
        if term is None:
            return Verdict(False, missing=f"no shown line ties {atom!r} to {', '.join(p.keywords[:3])!r}",
                           step=self._term_step())
        if self.log.searched(term) is None:
            return Verdict(False, missing=f"no shown line mentions {term!r} together with {atom!r}", step=_grep(term))
        # the term's lines are shown but hold no answer: follow what they name (a chain)
        for s in self.log.sentences():
            if has(s.context, term):
                for entity in sorted(self._entities(s), key=len, reverse=True):
                    if self.log.searched(entity) is None and self._uses(entity) <= MAX_BRIDGE_USES:
                        return Verdict(False, missing=f"the lines about {term!r} do not give {atom!r}; they name "
                                       f"{entity!r}: what do the documents say about it?", step=_grep(entity))
        return Verdict(False, missing=f"no shown line mentions {term!r} together with {atom!r}")

    def _main_atoms(self, atoms: list[str]) -> list[str]:
        kind = self.profile.answer_type
        if kind == "number":
            return [a for a in atoms if re.fullmatch(r"[\d.]+", a)] or atoms
        if kind == "date":
            return [a for a in atoms if DATE.search(a)] or atoms
        return atoms

    def _values(self, text: str) -> list[str]:
        if self.profile.answer_type == "date":
            return [m.group(0) for m in DATE.finditer(text)]
        if self.profile.answer_type == "path":
            return [path_key(v) for v in self._raw_values(text)]
        return [str(NUMBER_WORDS[v.lower()]) if v.lower() in NUMBER_WORDS else _THOUSANDS(v)
                for v in self._raw_values(text)]

    def _raw_values(self, text: str) -> list[str]:
        """Values of the asked kind (dates, else numbers, small ones also spelled out) as the text writes them,
        once the question's own terms are taken out (a number inside a name such as quiet-harbor-42 is not a
        value)."""
        for term in sorted(self.profile.terms, key=len, reverse=True):  # whole: /opt is not cut out of /var/opt
            text = re.sub(rf"(?<![\w/.~]){re.escape(term)}(?![\w/])", " ", text, flags=re.I)
        if self.profile.answer_type == "date":
            return [m.group(0) for m in DATE.finditer(text)]
        if self.profile.answer_type == "path":
            return [m.group(0).rstrip(".,;:") for m in PATH.finditer(text)]
        return [m.group(0) for m in _VALUE.finditer(text)]

    def _unlisted(self, items: list[str], linked: list[Sentence]) -> str | None:
        """A name shaped like the answer's items, in the linked sentences but not in the answer (names found
        in every linked sentence are the text's boilerplate, not items)."""
        spelled = next((m.group(0) for s in linked for m in [re.search(re.escape(items[0]), s.text, re.I)] if m),
                       items[0])
        shape = _shape(spelled)
        asked = {t.lower() for t in self.profile.terms} | {i.lower() for i in items}
        counts: dict[str, int] = {}
        for s in linked:
            for token in set(re.findall(r"[A-Za-z_][\w-]*", s.text)):
                if _shape(token) == shape and token.lower() not in asked and token.lower() not in STOPWORDS:
                    counts[token] = counts.get(token, 0) + 1
        extra = [t for t, n in counts.items() if n < len(linked)]
        return extra[0] if extra and len(linked) > 1 else None

    def _main_term(self) -> str | None:
        terms = [t for t in self.profile.terms if not re.fullmatch(r"[\d,.]+", t)] or self.profile.terms
        return terms[0] if terms else None

    def _term_step(self) -> str:
        term = self._main_term() or self._rarest_keyword()
        return _grep(term) if term else "ls"

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
        return [cite(s) for s in self.log.sentences() if any(has(s.norm, a) for a in atoms)][:6]

def _THOUSANDS(number: str) -> str:
    return number.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", number) else number.rstrip(",")


_REFERENCE = re.compile(r"\b(?:page|pages|p\.|pp\.|section|sec\.|chapter|figure|table|footnote|line|lines)\s+$")
_NUMBERED_HEADING = re.compile(r"^\s*(\d+(?:\.\d+)*)\.?\s+[A-Z\"'/(]|^\s*(\d+(?:\.\d+)+\.?|\d+\.)\s*$")
_LEADER = re.compile(r"(?:\.\s?){4,}\s*(\d+)\s*$")


def _distinctive(answer: str) -> bool:
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
_VALUE = re.compile(NUMBER.pattern + r"|\b(?:" + "|".join(w for w in NUMBER_WORDS if w not in ("zero", "one")) + r")\b",
                    re.I)  # "one" is mostly a pronoun ("the one that"), "zero" an adjective


_NEGATION = re.compile(r"\b(?:no|not|never|none|cannot|neither|nor|nothing|forbidden|prohibited|disallowed)\b|n't\b",
                       re.I)


def value_shape(answer: str) -> str | None:
    """What an answer is when it is one value: a path (~/.sh_history, /var/opt), a number (30, 2.28.1), or None."""
    a = answer.strip().strip("\"'`").rstrip(".")
    if PATH.fullmatch(a) and ("/" in a) and re.search(r"[a-z]", a, re.I):
        return "path"
    return "number" if NUMBER.fullmatch(a) else None


def _holds(text: str, atom: str) -> bool:
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


def _only_a_reference(sentence: str, atom: str) -> bool:
    """Whether a number stands in the sentence only as a reference to a place ("Section B.3.1 [Setting paper
    size], page 57"), a heading's number ("12.5. Copyright") or a table of contents' page ("Purpose ..... 3"),
    never as a value: such a number answers "which page" or "which section", nothing else."""
    if not re.fullmatch(r"[\d.]+", atom):
        return False
    heading = _NUMBERED_HEADING.match(sentence)
    leader = _LEADER.search(sentence)
    places = [m.start() for m in re.finditer(rf"(?<![\w.]){re.escape(atom)}(?![\w])", sentence)]
    return bool(places) and all(_REFERENCE.search(sentence[max(0, at - 12):at])
                                or sentence[at - 1:at] == "[" and sentence[at + len(atom):at + len(atom) + 1] == "]"
                                or heading and at == (heading.start(1) if heading.group(1) else heading.start(2))
                                or leader and at == leader.start(1)
                                for at in places)


def _shape(token: str) -> str:
    if token.isupper():
        return "upper"
    if token[:1].isupper():
        return "title"
    return "lower"


def _grep(term: str, word: bool = False, with_section: bool = False) -> str:
    flags = "-i -F" + (" -w" if word else "") + (" -p" if with_section else "")
    return f"grep {flags} {shlex.quote(term)}"
