"""The document store: files, folders and stdin, indexed by streaming and read by seeking.

Nothing here reads a whole input into memory. Each document gets a sparse line index built in one
streaming pass (a checkpoint at a line start every block), so any line is reached by one seek and a
short forward scan, and a line of any length is read in bounded pieces.
"""

from __future__ import annotations

import bisect
import codecs
import contextlib
import re
import os
import stat
import sys
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from lcread.convert import ConvertCache, prepare
from lcread.errors import LcreadError

BLOCK = 1 << 20  # bytes per indexing block; one checkpoint per block


@dataclass
class Line:
    """One line as read: its number, its (possibly cut) text, and its full length in bytes."""

    number: int
    text: str
    length: int
    cut: bool = False


class Changed(OSError):
    """The path of a listed document now names another file (replaced, or a link to one elsewhere)."""

    def __init__(self, name: str):
        super().__init__(f"{name} changed during the run (replaced, or now a link to another file): lcread does not "
                         "read it; ask again to read the files as they are now")
        self.name = name


@dataclass
class Document:
    """A text file the model can search and read, under a short unique name."""

    name: str
    path: Path
    size: int = 0
    lines: int = 0
    replaced: bool = False
    source: object = None
    """For a converted document (PDF, Word, HTML, compressed): where its lines came from (a SourceMap)."""
    _checkpoints: list[tuple[int, int]] = field(default_factory=list, repr=False)
    identity: tuple[int, int] | None = None
    """The file lcread indexed (device, inode): a path replaced after listing (by a link to a file outside a
    listed folder, or another file) is refused, not read."""

    def unchanged(self) -> bool:
        """Whether the path still names the file lcread indexed."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return self.identity is None or (st.st_dev, st.st_ino) == self.identity

    def open(self) -> BinaryIO:
        """The file lcread indexed, opened: the path is opened first and what it opened is checked after, so a
        path swapped for a link to another file (outside a served folder) is refused before a byte is read."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
        if self.identity is not None and (st.st_dev, st.st_ino) != self.identity:
            os.close(fd)
            raise Changed(self.name)
        return os.fdopen(fd, "rb")

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
                st = os.fstat(f.fileno())
                doc.identity = (st.st_dev, st.st_ino)
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
        except OSError as e:
            raise LcreadError(f"cannot read {label}: {(e.strerror or str(e)).lower()}") from None
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
        with self.open() as f:
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

    def read_bytes(self, start: int, end: int) -> bytes:
        with self.open() as f:
            f.seek(start)
            return f.read(max(0, end - start))

    def chars_in(self, start: int, end: int) -> int:
        """How many characters the bytes start..end hold (streamed, so any length is fine)."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        count = 0
        with self.open() as f:
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
        with self.open() as f:
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


def _skip_line(f: BinaryIO) -> int:
    """Read past the rest of the current line in bounded pieces; return its length in bytes."""
    total = 0
    while True:
        piece = f.readline(BLOCK)
        if not piece:
            return total
        if piece.endswith(b"\n"):
            return total + len(piece)
        total += len(piece)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class DocumentStore:
    """The documents of one run; the only paths the model can see."""

    def __init__(self, docs: list[Document], spooled: list[Path] | None = None, warnings: list[str] | None = None):
        self.docs = docs
        self.by_name = {d.name: d for d in docs}
        self._spooled = spooled if spooled is not None else []
        self.warnings = warnings or []
        """What the user should know about the inputs (skipped files, replaced bytes, converted encodings)."""
        self._cleanup = weakref.finalize(self, _remove, self._spooled)  # a store never closed still leaves no files

    @classmethod
    def open(cls, inputs: list[str], stdin: BinaryIO | None = None, cache=None, progress=None,
             confine=None) -> "DocumentStore":
        """Index the given files, folders and `-` (stdin); pipes are spooled to temporary files first;
        PDF, Word, HTML and compressed files are converted to text (once: `cache`, a ConvertCache), and
        UTF-16/32 or CR-only text is converted to UTF-8 with LF line ends. With `confine` (real path -> allowed),
        each file is opened first and what was opened is checked, then read from that opening: a path swapped
        meanwhile for a link elsewhere is refused (LcreadError from `confine`'s own message)."""
        if not inputs:
            raise LcreadError("no input given: name a file, a folder, or - for stdin")
        found: list[tuple[Path, str, str, bool]] = []  # (path, display label, name hint, inside a folder)
        spooled: list[Path] = []
        warnings: list[str] = []
        try:
            for item in inputs:
                if item == "-":
                    stream = stdin if stdin is not None else sys.stdin.buffer
                    if stdin is None and sys.stdin.isatty():
                        raise LcreadError('stdin is a terminal: pipe text in, e.g. cat app.log | lcread ask - "..."')
                    found.append((_keep(spooled, _spool(stream)), "stdin", "stdin", False))
                else:
                    found.extend(_expand(Path(item), spooled, warnings))
            names = _unique_names([hint for _, _, hint, _ in found])
            docs, converted, unusable = [], [], []
            caches = [cache] if cache is not None else []

            def the_cache() -> ConvertCache:  # one for every file of this opening, made when a file needs it
                if not caches:
                    caches.append(default_cache())
                return caches[0]

            for (path, label, _, inside), name in zip(found, names):
                try:
                    doc, prepared = _document(path, label, name, the_cache, progress, spooled, warnings, confine)
                except LcreadError as e:
                    if not inside:
                        raise
                    unusable.append(str(e))  # one bad file in a folder does not stop the others
                    continue
                if prepared.kind != "text":
                    converted.append((label, prepared))
                if prepared.warning:
                    warnings.append(prepared.warning)
                docs.append(doc)
            if caches:
                caches[0].save_index()
            warnings[:0] = _conversions(converted)
            if unusable:
                warnings.append(f"skipped {len(unusable)} files that could not be read: " + "; ".join(unusable[:3])
                                + ("; ..." if len(unusable) > 3 else ""))
            if not docs:
                raise LcreadError("no readable text in " + ", ".join(inputs) + (f": {unusable[0]}" if unusable else ""))
        except BaseException:
            for p in spooled:
                p.unlink(missing_ok=True)
            raise
        return cls(docs, spooled, warnings)

    def get(self, name: str) -> Document:
        doc = self.by_name.get(name) or self.by_name.get(name.strip("'\"").removeprefix("./"))
        if doc is None:
            raise KeyError(name)
        return doc

    LISTED = 60
    """Documents listed one by one; more are summarised (ls pages through them)."""

    def listing(self) -> str:
        """One line per document (name, lines, characters); a long list is summarised."""
        if len(self.docs) <= self.LISTED:
            return "\n".join(_row(d) for d in self.docs)
        folders: dict[str, int] = {}
        for d in self.docs:
            top = d.name.split("/")[1] if d.name.count("/") >= 2 else d.name.split("/")[0]
            folders[top] = folders.get(top, 0) + 1
        biggest = sorted(self.docs, key=lambda d: -d.size)[:10]
        lines = [f"{len(self.docs):,} documents, {sum(d.size for d in self.docs):,} characters; "
                 f"list them with: ls PAGE (1 to {self.pages()})",
                 "by folder: " + ", ".join(f"{k} ({v:,})" for k, v in
                                           sorted(folders.items(), key=lambda kv: -kv[1])[:12]),
                 "largest:"] + [f"  {_row(d)}" for d in biggest]
        return "\n".join(lines)

    def pages(self, size: int = 200) -> int:
        return max(1, -(-len(self.docs) // size))

    def page(self, number: int, size: int = 200) -> str:
        chosen = self.docs[(number - 1) * size: number * size]
        head = f"documents {(number - 1) * size + 1:,}-{(number - 1) * size + len(chosen):,} of {len(self.docs):,}"
        return "\n".join([head] + [_row(d) for d in chosen]) if chosen else f"no page {number}: 1 to {self.pages()}"

    def close(self) -> None:
        self._cleanup()

    def __enter__(self) -> "DocumentStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _document(path: Path, label: str, name: str, cache, progress, spooled: list[Path], warnings: list[str],
              confine=None):
    """One input as a Document: converted if need be (`cache()`: the conversion cache), normalised for search,
    indexed; LcreadError if it cannot be."""
    if confine is not None and path not in spooled:
        with _pinned(path, confine) as at:
            doc, prepared = _document(at, label, name, cache, progress, spooled, warnings)
        if doc.path == at:  # read in place: later reads open the path and check it is still the file indexed
            doc.path = path
        return doc, prepared
    prepared = prepare(path, label, cache(), progress)
    if prepared.temporary:
        spooled.append(prepared.path)
    path = _normalise_text(prepared.path, label, spooled, warnings)
    doc = Document.index(name, path, label)
    doc.source = prepared.source
    if doc.size == 0:
        if label == "stdin":
            raise LcreadError('stdin is empty: pipe text in, e.g. cat app.log | lcread ask - "..."')
        raise LcreadError(f"{label} is empty: there is nothing to read")
    if doc.replaced:
        warnings.append(f"{name}: bytes that are not valid UTF-8 were replaced with U+FFFD")
    return doc, prepared


@contextlib.contextmanager
def _pinned(path: Path, confine):
    """The file a path names, opened, as /proc/self/fd/N while it is read, once `confine` accepts the real path of
    what was opened (not of what the path named a moment before)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield path  # indexing says what is wrong with it
        return
    try:
        confine(os.readlink(f"/proc/self/fd/{fd}"))
        yield Path(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


def _conversions(converted: list) -> list[str]:
    """What was read as converted text: one line per file, or one per kind when there are many."""
    if len(converted) <= 5:
        return [f"{label}: read as text converted from {p.kind.upper()} "
                f"({'from the cache' if p.cached else f'in {p.seconds:.1f} s'})" for label, p in converted]
    kinds: dict[str, list] = {}
    for _, p in converted:
        kinds.setdefault(p.kind, []).append(p)
    return [f"{len(ps)} files read as text converted from {kind.upper()} ({sum(p.cached for p in ps)} from the cache, "
            f"{sum(p.seconds for p in ps):.1f} s)" for kind, ps in kinds.items()]


def default_cache() -> ConvertCache:
    from lcread.config import ConvertConfig, cache_dir

    config = ConvertConfig()
    folder = Path(os.environ.get("LCREAD_CONVERT_DIR") or cache_dir() / "converted")
    if folder.exists() and not folder.is_dir():
        raise LcreadError(f"the conversion cache {folder} is a file, not a folder: point LCREAD_CONVERT_DIR at a "
                          "folder")
    return ConvertCache(folder, config.cache_bytes, config.max_expanded)


def _remove(paths: list[Path]) -> None:
    for p in paths:
        p.unlink(missing_ok=True)
    paths.clear()


def _row(d: Document) -> str:
    return f"{d.name}  ({d.lines:,} lines, {d.size:,} characters)"


def _keep(spooled: list[Path], path: Path) -> Path:
    spooled.append(path)
    return path


def _spool(stream: BinaryIO, transform=None, label: str = "stdin") -> Path:
    """The stream in a temporary file, refused as soon as it shows NUL bytes (binary: a pipe from /dev/zero) or
    grows past the expansion bound (LCREAD_MAX_EXPANDED), the file removed whatever happens."""
    from lcread.config import ConvertConfig

    limit = ConvertConfig().max_expanded
    fd, name = tempfile.mkstemp(prefix="lcread-stdin-", suffix=".txt")
    try:
        with os.fdopen(fd, "wb") as out:
            pieces = iter(lambda: stream.read(BLOCK), b"") if transform is None else transform(stream)
            written, wide = 0, False
            for piece in pieces:
                if written == 0:
                    wide = piece.startswith(tuple(bom for bom, _ in _BOMS))  # UTF-16/32 text holds NUL bytes
                if transform is None and not wide and b"\x00" in piece:
                    raise LcreadError(f"{label} looks binary (it contains NUL bytes); give lcread text")
                written += len(piece)
                if written > limit:
                    raise LcreadError(f"{label} is larger than {limit:,} bytes: refused; raise LCREAD_MAX_EXPANDED "
                                      "if you mean it")
                out.write(piece)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


def _normalise_text(path: Path, label: str, spooled: list[Path], warnings: list[str]) -> Path:
    """UTF-16/32 text (with a byte-order mark) and text whose lines end in a lone CR, as UTF-8 with LF; text
    holding characters that stop a search from finding its own words (soft hyphens, ligatures, full-width forms,
    non-breaking spaces) as searchable text, line for line."""
    from lcread.convert.formats import NEEDS_NORMALISING, searchable

    try:
        with open(path, "rb") as f:
            head = f.read(BLOCK)
    except OSError:
        return path  # indexing says what is wrong
    encoding = next((enc for bom, enc in _BOMS if head.startswith(bom)), None)
    lone_cr = b"\r" in head and b"\n" not in head
    odd = encoding is None and NEEDS_NORMALISING.search(head.decode("utf-8", "ignore")) is not None
    if encoding is None and not lone_cr and not odd:
        return path

    def convert(stream):
        decoder = codecs.getincrementaldecoder(encoding or "utf-8")("replace")
        while block := stream.read(BLOCK):
            text = decoder.decode(block)
            if lone_cr or "\r" in text:
                text = text.replace("\r\n", "\n").replace("\r", "\n")
            yield searchable(text).encode("utf-8")
        yield searchable(decoder.decode(b"", final=True)).encode("utf-8")

    with open(path, "rb") as f:
        out = _keep(spooled, _spool(f, convert))
    if encoding or lone_cr:
        warnings.append(f"{label}: read as {encoding.upper()} text" if encoding
                        else f"{label}: lines end in CR; read as LF")
    return out


def _expand(path: Path, spooled: list[Path], warnings: list[str]) -> list[tuple[Path, str, str, bool]]:
    """A file as itself (a pipe spooled first); a folder as every text file under it. Inside a folder,
    hidden entries, links, binary and unreadable files are skipped, and the user is told what was."""
    if not os.path.lexists(path):
        raise LcreadError(f"no such file or folder: {path}" + (" (a pattern that matched nothing?)"
                                                               if any(c in str(path) for c in "*?[") else ""))
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise LcreadError(f"cannot read {path}: {e.strerror.lower()}") from None
    if stat.S_ISFIFO(mode):
        return [(_keep(spooled, _read_pipe(path)), str(path), path.name if path.name.isalnum() else "pipe", False)]
    if stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise LcreadError(f"{path} is {kind}, not a file: give lcread files, folders, or - for stdin")
    if not os.access(path, os.R_OK):
        raise LcreadError(f"cannot read {path}: permission denied")
    if not path.is_dir():
        return [(path, str(path), path.name, False)]
    out, skipped = [], {}
    for root, dirs, files in os.walk(path, onerror=lambda e: _skip(skipped, "unreadable", e.filename)):
        for d in [d for d in dirs if not d.startswith(".") and os.path.islink(os.path.join(root, d))]:
            _skip(skipped, "links", os.path.join(root, d))
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(root, d)))
        for fname in sorted(files):
            p = Path(root) / fname
            reason = _why_skip(p) if not fname.startswith(".") else "hidden"
            if reason:
                _skip(skipped, reason, str(p))
                continue
            out.append((p, str(p), str(Path(path.resolve().name) / p.relative_to(path)), True))
    told = {k: v for k, v in skipped.items() if k != "hidden"}
    if told:
        warnings.append(f"{path}: skipped " + "; ".join(
            f"{len(v)} {k} ({', '.join(v[:3])}{', ...' if len(v) > 3 else ''})" for k, v in told.items()))
    if not out:
        raise LcreadError(f"folder {path} holds no readable text files (binary, empty, hidden and linked files "
                          "are skipped)")
    return out


def _skip(skipped: dict, reason: str, name: str) -> None:
    skipped.setdefault(reason, []).append(name)


def _why_skip(p: Path) -> str | None:
    """Why a file inside a folder is not read: a link (it may lead outside the folder), not a regular
    file, unreadable, empty or binary; None to read it."""
    if p.is_symlink():
        return "links"
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):
            return "special files"
        with open(p, "rb") as f:
            head = f.read(8192)
    except OSError:
        return "unreadable"
    if not head:
        return "empty"
    from lcread.convert.formats import sniff

    if b"\x00" in head and not any(head.startswith(bom) for bom, _ in _BOMS) and \
            sniff(head, p.name) in ("text", "zip"):  # compressed logs, PDF and Word files are converted, not skipped
        return "binary"
    return None


PIPE_WAIT = 10.0
"""Seconds to wait for a writer on a named pipe before saying nobody writes to it."""


def _read_pipe(path: Path) -> Path:
    """A named pipe or process substitution, spooled; a pipe nobody writes to is an error, not a hang."""
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([fd], [], [], PIPE_WAIT)
    except BaseException:
        os.close(fd)
        raise
    if not ready:
        os.close(fd)
        raise LcreadError(f"{path} is a pipe nobody wrote to in {PIPE_WAIT:.0f} s: start the writer first, "
                          "or pipe the text to lcread ask -")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as stream:
        return _spool(stream, label=str(path))


def _unique_names(hints: list[str]) -> list[str]:
    """Short names, each unique: where two collide, the later ones get the first numeric suffix before the
    extension that no other document has. Control characters (a newline in a file name), bytes that are not UTF-8
    and the shell's characters (; | & < > quotes $) become "?", so a name can neither forge a line of a listing nor
    fail to be written in a command or a request. Linear in the names, however many collide."""
    clean = [_UNWRITABLE_IN_NAME.sub("?", _CONTROL_IN_NAME.sub("?", hint.replace(" ", "_"))) for hint in hints]
    wanted, taken, next_n = set(clean), set(), {}
    names = []
    for name in clean:
        if name in taken:
            stem, dot, ext = name.rpartition(".")
            n = next_n.get(name, 2)
            while (candidate := f"{stem}-{n}.{ext}" if dot and stem else f"{name}-{n}") in taken or candidate in wanted:
                n += 1
            next_n[name] = n + 1
            name = candidate
        taken.add(name)
        names.append(name)
    return names


_UNWRITABLE_IN_NAME = re.compile(r"""[;|&<>'"\\$`]""")
"""Characters a command line would read as the shell's (lcread parses commands with shlex): a name holds none."""
_CONTROL_IN_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
