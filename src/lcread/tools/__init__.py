"""The bash-style tool language: parse a command, run it over the document store, cap the output."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from lcread.config import ToolConfig
from lcread.documents import Changed, Document, DocumentStore
from lcread.tools.evidence import Search, Shown
from lcread.tools.grep import Grep, count_matches
from lcread.tools.headings import Sections
from lcread.tools.search import forms_of, whole_words
from lcread.tools.parse import COMMANDS, USAGE, Command, ParseError, parse
from lcread.language import load as load_language


__all__ = ["Command", "Observation", "ParseError", "Search", "Shown", "ToolRunner", "USAGE", "parse"]


@dataclass
class Observation:
    """What one command returned to the model, and the document pieces it showed."""

    text: str
    truncated: bool = False
    error: bool = False
    shown: list[Shown] = field(default_factory=list)
    search: Search | None = None
    next: Command | None = None
    """For an output that was cut: the command that shows what follows (a repeat runs it instead)."""

    @property
    def chars(self) -> int:
        return len(self.text)


class ToolRunner:
    """Runs parsed commands over the documents; every limit is enforced here, in code."""

    def __init__(self, store: DocumentStore, config: ToolConfig | None = None):
        self.store = store
        self.config = config or ToolConfig()
        self._sections: dict[str, Sections] = {}
        self._counts: dict[str, int] = {}

    def count(self, term: str) -> int:
        """Matches of a literal term, case aside, over every document (0 if the count runs too long); counted
        once per runner (the checks ask for the same terms again, and each count of a 2 GB log costs a second)."""
        key = term.lower()
        if key not in self._counts:
            self._counts[key] = count_matches(Command("grep", "", patterns=[term], flags={"-i", "-F"}),
                                              self.store.docs, self.config.grep_timeout) or 0
        return self._counts[key]

    COUNTED_CHARS = 120_000
    """Characters of matching lines lcread reads for itself when it counts lines (never shown to the model)."""

    def count_lines(self, words: list[str]):
        """How many lines of the documents hold every one of the words (each in any of its forms, case aside, as
        a whole word), and the first of them to cite: lcread's own count, read from a grep of the rarest word
        (at most COUNTED_CHARS of its matching lines are read)."""
        forms = {w: sorted({w.lower(), *forms_of(w)}) for w in words}
        rarest = min(words, key=lambda w: sum(self.count(f) for f in forms[w][:6]))
        cmd = Command("grep", "", patterns=forms[rarest], flags={"-i", "-F", "-w"})
        result = Grep(cmd, self.store.docs, self.COUNTED_CHARS, self.config.match_window,
                      self.config.grep_timeout).run()
        patterns = [whole_words(forms[w], re.I) for w in words]
        hits = [s for s in result.shown if s.kind == "match" and all(p.search(s.text) for p in patterns)]
        lines = list(dict.fromkeys((s.doc, s.line) for s in hits))
        return len(lines), hits[:3]

    def count_entries(self, words: list[str]):
        """How many release or log entries of the documents searched so far have a header (a dated heading:
        `Sections.release`) that holds every one of the words any header holds (each in any of its forms, case
        aside, as a whole word; a word no header holds, "entries", is not what they are counted by): "how many
        releases came out in 2021", "how many entries by A. Name in 2019" count entries, not lines. Returns the
        count, the words it counted by, and the first headers to cite."""
        heads = self._entries()
        patterns = {w: whole_words({w.lower(), *forms_of(w)}, re.I) for w in words}
        held = tuple(w for w in words if any(patterns[w].search(text) for _, _, text in heads))
        hits = [(doc, n, text) for doc, n, text in heads if all(patterns[w].search(text) for w in held)] if held else []
        return len(hits), held, [Shown(doc.name, n, 0, text, kind="match") for doc, n, text in hits[:3]]

    def _entries(self) -> list[tuple[Document, int, str]]:
        return [(s.doc, n, text) for s in self._sections.values() if not s.nearby
                for n, _, text in s.items if n in s.dated]

    def sections(self, doc: Document) -> Sections:
        """The document's headings, scanned once per run when grep -p first needs them."""
        if doc.name not in self._sections:
            self._sections[doc.name] = Sections(doc, self.config.grep_timeout)
        return self._sections[doc.name]

    def run(self, cmd: Command) -> Observation:
        try:
            docs = [self._doc(name) for name in cmd.docs]
        except KeyError as e:
            return _error(f"no document named {e.args[0]!r}. Documents:\n{self.store.listing()}")
        method = COMMANDS[cmd.name].run  # the method the command table names (none for the gate's answer)
        if method is None:
            return _error(f"{cmd.name} is not a tool: the command loop takes it")
        try:
            observation = getattr(self, method)(cmd, docs)
        except Changed as e:  # a path that names another file than the one listed: never read
            return _error(str(e))
        except OSError as e:  # a file removed or replaced while the run reads it: the run goes on
            return _error(f"cannot read {', '.join(d.name for d in docs) or 'the documents'} any more "
                          f"({(e.strerror or type(e).__name__).lower()}): it was moved or removed during the run")
        changed = self.changed(observation.shown)
        return _error(changed) if changed else observation

    def changed(self, shown: list[Shown]) -> str | None:
        """Why pieces cannot be shown: a file they come from is no longer the one lcread listed (replaced during
        the run, or now a link to a file outside). Never show what such a path names now."""
        changed = [d for d in dict.fromkeys(p.doc for p in shown)
                   if d in self.store.by_name and not self.store.by_name[d].unchanged()]
        return f"{', '.join(changed[:3])} changed during the run (replaced, or now a link to another file): " \
               "lcread does not read it; ask again to read the files as they are now" if changed else None

    def _doc(self, name: str) -> Document:
        return self.store.get(name)

    @property
    def cap(self) -> int:
        return min(self.config.read_chars, self.config.max_chars)

    def _grep(self, cmd: Command, docs: list[Document]) -> Observation:
        docs = docs or self.store.docs
        result = Grep(cmd, docs, self.cap, self.config.match_window, self.config.grep_timeout, self.sections).run()
        shown_from = cmd.skip
        if result.error:
            return _error(result.error)
        where = docs[0].name if len(docs) == 1 else f"{len(docs)} documents"
        search = Search(list(cmd.patterns), set(cmd.flags), [d.name for d in docs], result.matches,
                        complete=not result.cut and not cmd.max_count and not cmd.skip, counted="-c" in cmd.flags,
                        lines=sorted({(s.doc, s.line) for s in result.shown if s.kind == "match"}))
        if "-c" in cmd.flags:
            return Observation(result.text, search=search)
        if not result.text.strip():
            return Observation(f"no matches for {' or '.join(map(repr, cmd.patterns))} in {where}. "
                               "Try -i, a shorter pattern, or another word for it.", search=search)
        if result.cut:
            total = count_matches(cmd, docs, self.config.grep_timeout)
            more = f"{total - result.matches:,} more matches not shown" if total is not None else "more matches"
            first_doc = docs[0].name
            return Observation(result.text + f"\n[output cut at {self.cap:,} characters: {result.matches:,} matches "
                               f"shown, {more}; narrow the pattern, grep one document, add -m N, or read "
                               f"{first_doc} N M around a hit; the same grep again shows the next ones]",
                               truncated=True, shown=result.shown, search=search,
                               next=replace(cmd, skip=shown_from + result.hits))
        return Observation(result.text, shown=result.shown, search=search)

    def _search(self, cmd: Command, docs: list[Document]) -> Observation:
        found = self.ranked(cmd.query, docs or self.store.docs, top=cmd.count, kind=cmd.kind)
        return Observation(found.text, shown=found.shown, error=not found.passages and not found.candidates)

    def ranked(self, query: str, docs: list[Document] | None = None, top: int = 5, cap: int | None = None,
               kind: str | None = None):
        """The passages that best match `query` (lcread's own first step uses this too). In code, where a value
        often sits behind a name (`limit=_DEFAULT_LIMIT`), the definitions of the constants the best passages use
        are looked up and shown after them, so the chain is in one output and both lines can be cited."""
        cap = cap or self.cap
        try:
            found = self._ranked(query, docs, top, cap * 3 // 4, kind)
        except OSError as e:  # replaced since it was listed (Changed), or removed: no passage is shown
            from lcread.tools.search import SearchResult

            return SearchResult(f"error: {e}" if isinstance(e, Changed) else
                                "error: a document was moved or removed during the run", [], [])
        extra, shown = self._definitions_used(found.shown, cap - len(found.text) - 1)
        if extra:
            found.text += "\n" + extra
            found.shown += shown
        changed = self.changed(found.shown)
        if changed:
            found.text, found.shown, found.passages, found.candidates = f"error: {changed}", [], [], 0
        return found

    def _definitions_used(self, pieces: list[Shown], room: int) -> tuple[str, list[Shown]]:
        from lcread.tools.definitions import constants_used, is_code

        names: list[str] = []
        for piece in pieces[:24]:
            if is_code(piece.doc):
                names += [n for n in constants_used(piece.text) if n not in names]
        out, shown = [], []
        for name in names[:3]:
            found = self._definition(Command("definition", f"definition {name}", patterns=[name]), [])
            text = f"definition {name} (a name these lines use):\n{found.text}"
            if found.error or not found.shown or len(text) > room:
                continue
            out.append(text)
            shown += found.shown
            room -= len(text) + 1
        return "\n".join(out), shown

    def question_ranker(self, question: str):
        """The question's words weighted over these documents, as the ranked search weighs them: how well any
        text matches the question, and where its words sit in a text."""
        from lcread.tools.search import Ranker, estimate_weights, query_terms

        terms = query_terms(question, set(load_language().stopwords))
        if terms:
            estimate_weights(self.store.docs, terms)
        return Ranker(terms)

    def _ranked(self, query: str, docs: list[Document] | None, top: int, cap: int, kind: str | None = None):
        from lcread.tools.search import search


        def place_of(name: str, line: int) -> str | None:
            source = self.store.by_name[name].source
            return source.locate(line) if source is not None else None

        return search(query, docs or self.store.docs, cap, self.config.grep_timeout, set(load_language().stopwords),
                      self.sections, place_of, top=top, kind=kind)

    def _definition(self, cmd: Command, docs: list[Document]) -> Observation:
        from lcread.tools.definitions import definition_pattern

        name = cmd.patterns[0]
        grep = Command("grep", cmd.text, docs=cmd.docs, patterns=[definition_pattern(name)], flags={"-p"},
                       after=2)
        found = self._grep(grep, docs)
        if found.error:
            return found
        if found.search and found.search.matches == 0:
            short = name.rsplit(".", 1)[-1]
            if short != name:
                return self._definition(Command("definition", cmd.text, docs=cmd.docs, patterns=[short]), docs)
            return Observation(f"no definition of {name!r} found (def, class, {name} = ..., #define, function, "
                               f"...); try: grep -F {name!r}", search=found.search)
        return found

    def _read(self, cmd: Command, docs: list[Document]) -> Observation:
        doc = docs[0]
        if cmd.start > doc.lines:
            return _error(f"{doc.name} has {doc.lines:,} lines; line {cmd.start} does not exist")
        budget = min(cmd.chars or self.cap, self.config.max_chars)
        end = min(cmd.end or cmd.start, doc.lines)
        if cmd.from_char:
            return self._read_long_line(doc, cmd.start, cmd.from_char, budget)
        out: list[str] = []
        shown: list[Shown] = []
        size = 0
        for line in doc.read_lines(cmd.start, end, max_bytes=budget * 4):
            row = f"{line.number}: {line.text}"
            if size + len(row) + 1 > budget:
                if not out:  # one line longer than the whole budget: show its start, say how to go on
                    long = self._read_long_line(doc, line.number, 0, budget)
                    if line.number < end:
                        long.text += f"\n[lines {line.number + 1}-{end} not shown; continue with: " \
                                     f"read {doc.name} {line.number + 1} {end}]"
                        long.next = long.next or _read_command(doc, line.number + 1, end)
                    return long
                out.append(f"[cut at {budget:,} characters; continue with: read {doc.name} {line.number} {end}]")
                return Observation("\n".join(out), truncated=True, shown=shown,
                                   next=_read_command(doc, line.number, end))
            out.append(row)
            shown.append(Shown(doc.name, line.number, 0, line.text))
            size += len(row) + 1
        if not out:
            return Observation(f"{doc.name}: lines {cmd.start}-{end} are empty")
        return Observation("\n".join(out), shown=shown)

    def _read_long_line(self, doc: Document, number: int, start: int, budget: int) -> Observation:
        text, length, end = doc.read_span(number, start, budget)
        if start >= length:
            return _error(f"line {number} of {doc.name} has only {length:,} characters")
        note, more = "", None
        if end < length:
            more = _read_command(doc, number, number, end)
            note = f"\n[line {number} has {length:,} characters; shown {start:,}-{end:,}; continue with: {more.text}]"
        return Observation(f"{number}: {text}{note}", truncated=bool(note), shown=[Shown(doc.name, number, start, text)],
                           next=more)

    def _head(self, cmd: Command, docs: list[Document]) -> Observation:
        return self._read(Command("read", cmd.text, docs=cmd.docs, start=1, end=max(cmd.count, 1)), docs)

    def _tail(self, cmd: Command, docs: list[Document]) -> Observation:
        doc = docs[0]
        start = max(1, doc.lines - max(cmd.count, 1) + 1)
        return self._read(Command("read", cmd.text, docs=cmd.docs, start=start, end=doc.lines), docs)

    def _wc(self, cmd: Command, docs: list[Document]) -> Observation:
        docs = docs or self.store.docs
        rows = [f"{d.lines:>10,} lines {d.size:>14,} characters  {d.name}" for d in docs[:200]]
        if len(docs) > 200:
            rows.append(f"{sum(d.lines for d in docs):>10,} lines {sum(d.size for d in docs):>14,} characters  "
                        f"in all {len(docs):,} documents (first 200 shown)")
        return Observation("\n".join(rows))

    def _ls(self, cmd: Command, docs: list[Document]) -> Observation:
        if len(self.store.docs) <= self.store.LISTED:
            return Observation(self.store.listing())
        return Observation(self.store.page(cmd.start))



def _read_command(doc: Document, start: int, end: int, from_char: int = 0) -> Command:
    text = f"read {doc.name} {start} {end}" + (f" --from {from_char}" if from_char else "")
    return Command("read", text, docs=[doc.name], start=start, end=end, from_char=from_char)


def _error(message: str) -> Observation:
    return Observation(f"error: {message}", error=True)
