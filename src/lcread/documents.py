"""The document store: files, folders and stdin, indexed by streaming and read by seeking.

Nothing here reads a whole input into memory. Each document gets a sparse line index built in one
streaming pass (a checkpoint at a line start every block), so any line is reached by one seek and a
short forward scan, and a line of any length is read in bounded pieces.
"""

from __future__ import annotations

import bisect
import codecs
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from lcread.errors import LcreadError

BLOCK = 1 << 20  # bytes per indexing block; one checkpoint per block


@dataclass
class Line:
    """One line as read: its number, its (possibly cut) text, and its full length in bytes."""

    number: int
    text: str
    length: int
    cut: bool = False


@dataclass
class Document:
    """A text file the model can search and read, under a short unique name."""

    name: str
    path: Path
    size: int = 0
    lines: int = 0
    replaced: bool = False
    _checkpoints: list[tuple[int, int]] = field(default_factory=list, repr=False)

    @classmethod
    def index(cls, name: str, path: Path, label: str | None = None) -> "Document":
        """Stream the file once: count lines, place checkpoints, reject binary, note bad UTF-8."""
        label = label or str(path)
        doc = cls(name=name, path=path)
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        checkpoints = [(1, 0)]
        offset, line, last_nl = 0, 1, -1
        try:
            with open(path, "rb") as f:
                while block := f.read(BLOCK):
                    if b"\x00" in block:
                        raise LcreadError(f"{label} looks binary (it contains NUL bytes); give lcread text files")
                    if not doc.replaced:
                        try:
                            decoder.decode(block)
                        except UnicodeDecodeError:
                            doc.replaced = True
                    count = block.count(b"\n")
                    if count:
                        last_nl = offset + block.rfind(b"\n")
                        line += count
                        checkpoints.append((line, last_nl + 1))
                    offset += len(block)
        except PermissionError:
            raise LcreadError(f"cannot read {label}: permission denied") from None
        except IsADirectoryError:
            raise LcreadError(f"{label} is a folder where a file was expected") from None
        if not doc.replaced:
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                doc.replaced = True
        doc.size = offset
        doc.lines = line - 1 if last_nl == offset - 1 else line
        doc._checkpoints = [c for c in checkpoints if c[1] < offset] or [(1, 0)]
        return doc

    def _seek_line(self, f: BinaryIO, number: int) -> None:
        """Position f at the start of line `number` (1-based)."""
        keys = [c[0] for c in self._checkpoints]
        i = bisect.bisect_right(keys, number) - 1
        line, offset = self._checkpoints[max(i, 0)]
        f.seek(offset)
        while line < number:
            _skip_line(f)
            line += 1

    def read_lines(self, start: int, end: int, max_bytes: int = 32768) -> Iterator[Line]:
        """Lines start..end (1-based, inclusive); each line's text is cut at max_bytes."""
        start, end = max(start, 1), min(end, self.lines)
        if start > end:
            return
        with open(self.path, "rb") as f:
            self._seek_line(f, start)
            for number in range(start, end + 1):
                head = f.readline(max_bytes)
                if not head:
                    return
                length, cut = len(head), False
                if not head.endswith(b"\n") and len(head) == max_bytes:
                    rest = _skip_line(f)
                    length += rest
                    cut = rest > 0
                text = _decode(head.rstrip(b"\n").rstrip(b"\r"))
                yield Line(number, text, length - (1 if head.endswith(b"\n") or cut else 0), cut)

    def line_start(self, number: int) -> int:
        """Byte offset where line `number` starts."""
        with open(self.path, "rb") as f:
            self._seek_line(f, number)
            return f.tell()

    def read_bytes(self, start: int, end: int) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(start)
            return f.read(max(0, end - start))

    def chars_in(self, start: int, end: int) -> int:
        """How many characters the bytes start..end hold (streamed, so any length is fine)."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        count = 0
        with open(self.path, "rb") as f:
            f.seek(start)
            left = end - start
            while left > 0 and (block := f.read(min(BLOCK, left))):
                left -= len(block)
                count += len(decoder.decode(block, final=left <= 0))
        return count

    def read_span(self, number: int, start: int, max_chars: int) -> tuple[str, int, int]:
        """Characters start..start+max_chars of line `number`: the text, the line's length in characters,
        and the character offset where the text ends. Streamed in blocks, so a line of any length is fine."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pieces: list[str] = []
        position = taken = 0
        with open(self.path, "rb") as f:
            self._seek_line(f, number)
            while True:
                block = f.readline(BLOCK)
                ended = not block or block.endswith(b"\n")
                text = decoder.decode(block.rstrip(b"\n").rstrip(b"\r") if ended else block, final=ended)
                lo, hi = max(start - position, 0), min(start + max_chars - position, len(text))
                if hi > lo and taken < max_chars:
                    pieces.append(text[lo:hi])
                    taken += hi - lo
                position += len(text)
                if ended:
                    break
        return "".join(pieces), position, min(start, position) + taken


def _skip_line(f: BinaryIO, keep_newline: bool = True) -> int:
    """Read past the rest of the current line in bounded pieces; return its length in bytes."""
    total = 0
    while True:
        piece = f.readline(BLOCK)
        if not piece:
            return total
        if piece.endswith(b"\n"):
            return total + (len(piece) if keep_newline else len(piece) - 1)
        total += len(piece)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class DocumentStore:
    """The documents of one run; the only paths the model can see."""

    def __init__(self, docs: list[Document], spooled: list[Path] | None = None):
        self.docs = docs
        self.by_name = {d.name: d for d in docs}
        self._spooled = spooled or []

    @classmethod
    def open(cls, inputs: list[str], stdin: BinaryIO | None = None) -> "DocumentStore":
        """Index the given files, folders and `-` (stdin, spooled to a temporary file first)."""
        if not inputs:
            raise LcreadError("no input given: name a file, a folder, or - for stdin")
        found: list[tuple[Path, str, str]] = []  # (path, display label, name hint)
        spooled: list[Path] = []
        try:
            for item in inputs:
                if item == "-":
                    path = _spool(stdin if stdin is not None else sys.stdin.buffer)
                    spooled.append(path)
                    found.append((path, "stdin", "stdin"))
                else:
                    found.extend(_expand(Path(item)))
            names = _unique_names([hint for _, _, hint in found])
            docs = []
            for (path, label, _), name in zip(found, names):
                doc = Document.index(name, path, label)
                if doc.size == 0:
                    if label == "stdin":
                        raise LcreadError('stdin is empty: pipe text in, e.g. cat app.log | lcread ask - "..."')
                    raise LcreadError(f"{label} is empty: there is nothing to read")
                docs.append(doc)
        except BaseException:
            for p in spooled:
                p.unlink(missing_ok=True)
            raise
        return cls(docs, spooled)

    def get(self, name: str) -> Document:
        doc = self.by_name.get(name) or self.by_name.get(name.strip("'\"").removeprefix("./"))
        if doc is None:
            raise KeyError(name)
        return doc

    def listing(self) -> str:
        """One line per document: name, lines, bytes."""
        return "\n".join(f"{d.name}  ({d.lines:,} lines, {d.size:,} characters)" for d in self.docs)

    def close(self) -> None:
        for p in self._spooled:
            p.unlink(missing_ok=True)
        self._spooled = []

    def __enter__(self) -> "DocumentStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _spool(stream: BinaryIO) -> Path:
    fd, name = tempfile.mkstemp(prefix="lcread-stdin-", suffix=".txt")
    with os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(stream, out, BLOCK)
    return Path(name)


def _expand(path: Path) -> list[tuple[Path, str, str]]:
    """A file as itself; a folder as every text file under it (hidden entries skipped)."""
    if not os.path.lexists(path):
        raise LcreadError(f"no such file or folder: {path}")
    if not os.access(path, os.R_OK):
        raise LcreadError(f"cannot read {path}: permission denied")
    if not path.is_dir():
        return [(path, str(path), path.name)]
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for fname in sorted(files):
            p = Path(root) / fname
            if fname.startswith(".") or not p.is_file() or not _looks_text(p):
                continue
            out.append((p, str(p), str(Path(path.resolve().name) / p.relative_to(path))))
    if not out:
        raise LcreadError(f"folder {path} holds no readable text files (binary, empty and hidden files are skipped)")
    return out


def _looks_text(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except OSError:
        return False
    return bool(head) and b"\x00" not in head


def _unique_names(hints: list[str]) -> list[str]:
    """Short names; where two collide, the later ones get a numeric suffix before the extension."""
    seen: dict[str, int] = {}
    names = []
    for hint in hints:
        name = hint.replace(" ", "_")
        if name in seen:
            seen[name] += 1
            stem, dot, ext = name.rpartition(".")
            name = f"{stem}-{seen[name]}.{ext}" if dot and stem else f"{name}-{seen[name]}"
        seen.setdefault(name, 1)
        names.append(name)
    return names
