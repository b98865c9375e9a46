"""Real documents as text the tools read unchanged: PDF, Word (DOCX), HTML, and compressed files
(gzip, bzip2, xz, zstd, with any of these inside). Formats are detected by their first bytes, not by the
file name. Each conversion writes UTF-8 text plus a map from its lines back to the source (the page of
a PDF, the heading path of a DOCX or HTML file, the compressed file's name), and is cached by the
source's content hash, so a second question about the same 900-page PDF converts nothing.

Where to start: `prepare()` below; the formats are in `formats.py`, the cache in `cache.py`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lcread.convert.cache import ConvertCache, SourceMap
from lcread.convert.formats import CONVERTERS, sniff
from lcread.errors import LcreadError, TooLarge

Progress = Callable[[str, int, int], None]
"""(what, bytes done, bytes in all): called now and then while a conversion runs."""


@dataclass
class Prepared:
    path: Path
    """The text the tools read: the file itself, or its converted text in the cache."""
    source: SourceMap | None = None
    kind: str = "text"
    seconds: float = 0.0
    cached: bool = False
    warning: str | None = None
    """What the user should know about this input (read as text after all, a damaged cache entry rebuilt)."""
    temporary: bool = False
    """The path is this run's own link to the cached text (removed when the run ends)."""


def prepare(path: Path, label: str, cache: ConvertCache, progress: Progress | None = None) -> Prepared:
    """The text for one input: plain text as it is; anything else converted once and cached."""
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except OSError:
        return Prepared(path)  # indexing says what is wrong
    kind = sniff(head, path.name)
    if kind == "text":
        return Prepared(path)
    started = time.monotonic()
    key = cache.key(path)
    hit = cache.get(key)
    if hit is not None:
        return Prepared(cache.hold(hit[0]), hit[1], kind, time.monotonic() - started, cached=True, temporary=True)
    convert = CONVERTERS[kind]
    try:
        with cache.writing(key) as (out, marks):
            marks.limit = cache.max_expanded
            try:
                convert(path, out, marks, label, cache.max_expanded, progress or (lambda *a: None))
            except LcreadError:
                raise
            except Exception as e:  # a library's own error on a damaged file: one line, no traceback
                raise LcreadError(f"{label} could not be read as {kind.upper()}: {_short(e)}") from None
    except TooLarge:
        raise  # past a bound: refused, whatever its first bytes look like
    except LcreadError:
        if looks_like_text(head):  # "%PDF-1.7 is the version we use..." is a text file, not a damaged PDF
            return Prepared(path, warning=f"{label} begins like a {kind.upper()} file but is text: read as text")
        raise
    text, source = cache.get(key)
    rebuilt = f"{label}: its cached conversion was damaged; converted again" if key in cache.damaged else None
    return Prepared(cache.hold(text), source, kind, time.monotonic() - started, warning=rebuilt, temporary=True)


def looks_like_text(head: bytes) -> bool:
    """UTF-8 text without NUL bytes or other control characters (what a real PDF, archive or zip is not)."""
    if b"\x00" in head:
        return False
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:  # not just a character cut by the end of the sample
            return False
        text = head[:e.start].decode("utf-8")
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\t\r\n\f")
    return bool(text) and controls == 0


def _short(e: Exception) -> str:
    return (" ".join(str(e).split()) or type(e).__name__)[:200]


__all__ = ["ConvertCache", "Prepared", "SourceMap", "prepare"]
