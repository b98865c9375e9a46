"""The bash-style tool language: parse a command, run it over the document store, cap the output."""

from __future__ import annotations

from dataclasses import dataclass

from lcread.config import ToolConfig
from lcread.documents import Document, DocumentStore
from lcread.tools.grep import grep
from lcread.tools.parse import USAGE, Command, ParseError, parse

__all__ = ["Command", "Observation", "ParseError", "ToolRunner", "USAGE", "parse"]


@dataclass
class Observation:
    """What one command returned to the model."""

    text: str
    truncated: bool = False
    error: bool = False

    @property
    def chars(self) -> int:
        return len(self.text)


class ToolRunner:
    """Runs parsed commands over the documents; every limit is enforced here, in code."""

    def __init__(self, store: DocumentStore, config: ToolConfig | None = None):
        self.store = store
        self.config = config or ToolConfig()

    def run(self, cmd: Command) -> Observation:
        try:
            docs = [self._doc(name) for name in cmd.docs]
        except KeyError as e:
            return _error(f"no document named {e.args[0]!r}. Documents:\n{self.store.listing()}")
        return getattr(self, f"_{cmd.name}")(cmd, docs)

    def _doc(self, name: str) -> Document:
        return self.store.get(name)

    @property
    def cap(self) -> int:
        return min(self.config.read_chars, self.config.max_chars)

    def _grep(self, cmd: Command, docs: list[Document]) -> Observation:
        docs = docs or self.store.docs
        result = grep(cmd, docs, self.cap, self.config.match_window, self.config.grep_timeout)
        if result.error:
            return _error(result.error)
        where = docs[0].name if len(docs) == 1 else f"{len(docs)} documents"
        if not result.text.strip() or (result.matches == 0 and "-c" not in cmd.flags):
            return Observation(f"no matches for {' or '.join(map(repr, cmd.patterns))} in {where}. "
                               "Try -i, a shorter pattern, or another word for it.")
        if result.cut:
            return Observation(result.text + f"\n[output cut at {self.cap:,} characters after {result.matches} "
                               "matching lines; narrow the pattern, grep one document, or add -m N]", truncated=True)
        return Observation(result.text)

    def _read(self, cmd: Command, docs: list[Document]) -> Observation:
        doc = docs[0]
        if cmd.start > doc.lines:
            return _error(f"{doc.name} has {doc.lines:,} lines; line {cmd.start} does not exist")
        budget = min(cmd.chars or self.cap, self.config.max_chars)
        end = min(cmd.end or cmd.start, doc.lines)
        if cmd.from_byte:
            return self._read_long_line(doc, cmd.start, cmd.from_byte, budget)
        out: list[str] = []
        size = 0
        for line in doc.read_lines(cmd.start, end, max_bytes=budget * 4):
            row = f"{line.number}: {line.text}"
            if size + len(row) + 1 > budget:
                if not out:  # one line longer than the whole budget: show its start, say how to go on
                    return self._read_long_line(doc, line.number, 0, budget)
                out.append(f"[cut at {budget:,} characters; continue with: read {doc.name} {line.number} {end}]")
                return Observation("\n".join(out), truncated=True)
            out.append(row)
            size += len(row) + 1
        return Observation("\n".join(out) if out else f"{doc.name}: lines {cmd.start}-{end} are empty")

    def _read_long_line(self, doc: Document, number: int, start: int, budget: int) -> Observation:
        text, length, end = doc.read_span(number, start, budget)
        if start >= length:
            return _error(f"line {number} of {doc.name} has only {length:,} characters")
        note = ""
        if end < length:
            note = f"\n[line {number} has {length:,} characters; shown {start:,}-{end:,}; " \
                   f"continue with: read {doc.name} {number} {number} --from {end}]"
        return Observation(f"{number}: {text}{note}", truncated=bool(note))

    def _head(self, cmd: Command, docs: list[Document]) -> Observation:
        return self._read(Command("read", cmd.text, docs=cmd.docs, start=1, end=max(cmd.count, 1)), docs)

    def _tail(self, cmd: Command, docs: list[Document]) -> Observation:
        doc = docs[0]
        start = max(1, doc.lines - max(cmd.count, 1) + 1)
        return self._read(Command("read", cmd.text, docs=cmd.docs, start=start, end=doc.lines), docs)

    def _wc(self, cmd: Command, docs: list[Document]) -> Observation:
        docs = docs or self.store.docs
        rows = [f"{d.lines:>10,} lines {d.size:>14,} characters  {d.name}" for d in docs]
        return Observation("\n".join(rows))

    def _ls(self, cmd: Command, docs: list[Document]) -> Observation:
        return Observation(self.store.listing())

    def _answer(self, cmd: Command, docs: list[Document]) -> Observation:
        return Observation(cmd.answer)


def _error(message: str) -> Observation:
    return Observation(f"error: {message}", error=True)
