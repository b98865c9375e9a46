"""Each format's converter: bytes in, UTF-8 text out (with page markers or markdown headings), and the
places its lines came from. Libraries do the parsing: pypdfium2 (PDFium) for PDF, python-docx for Word,
lxml for HTML, the standard library and zstandard for compressed files."""

from __future__ import annotations

import re
import tempfile
import unicodedata
from pathlib import Path

from lcread.errors import LcreadError, TooLarge

EXTRA = "pip install 'lcread[docs]'"
BLOCK = 1 << 20


_INVISIBLE = dict.fromkeys(map(ord, "\ufffe\u00ad\u200b\u2060\ufeff"), None)
_HYPHENATED = re.compile(r"[\ufffe\u00ad]\r?\n")


def searchable(text: str) -> str:
    """Text as people search it: PDFium's line-end hyphenation mark (U+FFFE) and soft hyphens joined, zero-width
    characters dropped, and NFKC (ligatures such as "ﬁ", full-width forms, non-breaking spaces). Line ends are
    kept, so line numbers and the source map still hold."""
    return unicodedata.normalize("NFKC", _HYPHENATED.sub("", text).translate(_INVISIBLE))


NEEDS_NORMALISING = re.compile("[\ufffe\u00ad\u200b\u2060\ufb00-\ufb06\uff01-\uff5e\u00a0\u2000-\u200a\u202f]")
"""Characters that stop a search from finding text by its own words (checked in plain text's first block)."""


def sniff(head: bytes, name: str = "") -> str:
    """The format of a file from its first bytes (and, for HTML without a doctype, its name)."""
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh") and len(head) > 3 and head[3:4].isdigit():
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    if head.startswith(b"PK\x03\x04"):
        return "docx" if b"word/" in head or b"[Content_Types].xml" in head else "zip"
    if INFO_HEAD.match(head):
        return "info"
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html", b"<?xml")) and (b"<html" in head.lower()):
        return "html"
    if name.lower().endswith((".html", ".htm", ".xhtml")) and b"<" in head and b"\x00" not in head:
        return "html"
    return "text"


INFO_HEAD = re.compile(rb"This is [^\n]{1,300}produced by [Mm]akeinfo")
"""The first line of a GNU info manual (what `info` reads: every GNU manual in /usr/share/info)."""
_INFO_MARK = re.compile("\x00\x08\\[[^\x00\n]{0,40}\x00\x08\\]")
_INFO_NODE = re.compile(r"File: [^,\n]+,\s+Node: ([^,\t\n]+)")


def _need(module: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise LcreadError(f"reading this file needs {module.split('.')[0]}: {EXTRA}") from None


def pdf(path: Path, out, marks, label: str, limit: int, progress) -> None:
    pdfium = _need("pypdfium2")
    try:
        doc = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as e:
        if "password" in str(e).lower():
            raise LcreadError(f"{label} is an encrypted PDF: decrypt it first (e.g. qpdf --decrypt "
                              f"--password=... {label} plain.pdf)") from None
        raise LcreadError(f"{label} is not a readable PDF ({e})") from None
    marks.kind, marks.source = "pdf", label
    chars = 0
    try:
        for number in range(1, len(doc) + 1):
            page = doc[number - 1]
            textpage = page.get_textpage()
            text = textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
            text = searchable(text.replace("\x0c", "\n").replace("\x00", ""))
            textpage.close()
            page.close()
            marks.here(f"page {number}")
            marks.write(out, f"[page {number}]\n" + (text.rstrip() + "\n" if text.strip() else ""))
            chars += len(text.strip())
            progress(label, number, len(doc))
    finally:
        doc.close()
    if not chars:
        raise LcreadError(f"{label} has no text layer (a scanned PDF?): OCR it first, e.g. ocrmypdf {label} "
                          "with-text.pdf")


MAX_MARKUP = 256 << 20
"""Bytes of XML or HTML parsed into memory at most (a parser's tree is many times larger): past it, refused."""


def docx(path: Path, out, marks, label: str, limit: int, progress) -> None:
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            inflated = sum(i.file_size for i in z.infolist() if i.filename.startswith("word/"))
    except (zipfile.BadZipFile, OSError):
        inflated = 0
    if inflated > min(MAX_MARKUP, limit):
        raise TooLarge(f"{label} holds {inflated:,} bytes of Word XML (a bomb?): refused")
    document_module = _need("docx")
    try:
        document = document_module.Document(str(path))
    except Exception:  # noqa: BLE001 - python-docx raises several kinds for a file that is not Word
        raise LcreadError(f"{label} is not a Word document (DOCX) that can be read") from None
    marks.kind, marks.source = "docx", label
    path_of: list[str] = []
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):  # a table: one line per row
            for row in block.rows:
                cells = [" ".join(searchable(c.text).split()) for c in row.cells]
                marks.write(out, " | ".join(dict.fromkeys(cells)) + "\n")
            continue
        text = " ".join(searchable(block.text).split())
        style = (block.style.name if block.style is not None else "") or ""
        level = _heading_level(style)
        if level and text:
            path_of[:] = path_of[:level - 1] + [text]
            marks.here(" > ".join(path_of))
            marks.write(out, "#" * level + " " + text + "\n")
        elif text:
            marks.write(out, text + "\n")


def info(path: Path, out, marks, label: str, limit: int, progress) -> None:
    """A GNU info manual: its text as written, less the index markers (NUL and backspace around `[index]`) and
    the node separators (US) that make it look binary, and less the tag table at its end (byte offsets of the
    nodes); each node's name is the place of its lines."""
    marks.kind, marks.source = "info", label
    size, done, tags = max(path.stat().st_size, 1), 0, False
    with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
        for line in f:
            done += len(line)
            text = _INFO_MARK.sub("", line).replace("\x1f", "").replace("\x7f", " ")
            if text.startswith("Tag Table:"):
                tags = True
            if tags:
                tags = not text.startswith("End Tag Table")
                continue
            node = _INFO_NODE.match(text)
            if node:
                marks.here(node.group(1).strip())
            marks.write(out, text if text.endswith("\n") else text + "\n")
            if done & 0xFFFF < len(line):
                progress(label, done, size)


def _heading_level(style: str) -> int:
    if style == "Title":
        return 1
    m = re.match(r"Heading (\d)", style)
    return int(m.group(1)) if m else 0


_SKIP = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object"}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_BLOCKS = {"p", "div", "li", "ul", "ol", "pre", "blockquote", "table", "tr", "td", "th", "dt", "dd", "dl",
           "section", "article", "header", "footer", "main", "nav", "aside", "figure", "figcaption", "caption",
           "form", "fieldset", "address", "hr", "br", "body", "html", "details", "summary"}


def html(path: Path, out, marks, label: str, limit: int, progress) -> None:
    lxml_html = _need("lxml.html")
    if path.stat().st_size > min(MAX_MARKUP, limit):
        raise TooLarge(f"{label} is {path.stat().st_size:,} bytes of HTML (a bomb?): too large to convert; refused")
    try:
        parser = lxml_html.HTMLParser(huge_tree=True)  # deep nesting is kept, not cut off at 256 levels
        root = lxml_html.parse(str(path), parser).getroot()
    except Exception as e:  # noqa: BLE001 - lxml's parse errors
        raise LcreadError(f"{label} is not readable HTML ({e})") from None
    if root is None:
        raise LcreadError(f"{label} holds no HTML")
    marks.kind, marks.source = "html", label
    writer = _HtmlText(out, marks)
    if len(root.text_content()) < len(_raw_text(path)) // 2:  # nested past libxml2's depth: its tree lost text
        _StreamedHtml(writer).read(path)
        return
    title = root.findtext(".//title")
    if title and title.strip():
        writer.heading(1, " ".join(title.split()))
    writer.walk(root.find("body") if root.find("body") is not None else root)
    writer.flush()


def _raw_text(path: Path) -> str:
    """The text between a page's tags, roughly (scripts and styles aside): what a parsed tree should hold."""
    raw = path.read_bytes().decode("utf-8", "replace")
    raw = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>|<!--.*?-->", " ", raw)
    return "".join(re.sub(r"(?s)<[^>]*>", " ", raw).split())


class _StreamedHtml:
    """A page read tag by tag with the standard library's parser, which keeps no tree and so has no depth limit:
    the same lines, headings and blocks as the tree walk."""

    def __init__(self, writer: "_HtmlText"):
        self.writer, self.skipping, self.heading, self.pre = writer, 0, None, False

    def read(self, path: Path) -> None:
        from html.parser import HTMLParser

        parser = HTMLParser(convert_charrefs=True)
        parser.handle_starttag = self.start
        parser.handle_endtag = self.end
        parser.handle_data = self.data
        with open(path, encoding="utf-8", errors="replace") as f:
            while block := f.read(1 << 20):
                parser.feed(block)
        parser.close()
        self.writer.flush()

    def start(self, tag: str, attrs) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag in _HEADINGS:
            self.writer.flush()
            self.heading = (_HEADINGS[tag], [])
        elif tag in _BLOCKS or tag == "pre":
            self.writer.flush()
            self.pre = self.pre or tag == "pre"

    def end(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _HEADINGS and self.heading:
            level, parts = self.heading
            self.heading = None
            text = " ".join(searchable("".join(parts)).split())
            if text:
                self.writer.heading(level, text)
        elif tag == "pre":
            self.pre = False
            for line in searchable("".join(self.writer.buffer)).splitlines():
                self.writer.marks.write(self.writer.out, line.rstrip() + "\n")
            self.writer.buffer = []
        elif tag in _BLOCKS:
            self.writer.flush()

    def data(self, text: str) -> None:
        if self.skipping:
            return
        (self.heading[1] if self.heading else self.writer.buffer).append(text)


class _HtmlText:
    """Text in reading order: inline text gathered into lines, a block ends a line, headings as markdown."""

    def __init__(self, out, marks):
        self.out, self.marks, self.buffer, self.path = out, marks, [], []

    def flush(self) -> None:
        text = " ".join(searchable("".join(self.buffer)).split())
        if text:
            self.marks.write(self.out, text + "\n")
        self.buffer = []

    def heading(self, level: int, text: str) -> None:
        self.flush()
        self.path[:] = self.path[:level - 1] + [text]
        self.marks.here(" > ".join(self.path))
        self.marks.write(self.out, "#" * level + " " + text + "\n")

    def walk(self, root) -> None:
        """Every element in document order, without recursion (a page nested 100,000 deep is still read)."""
        stack: list[tuple[object, bool]] = [(root, False)]
        while stack:
            el, closing = stack.pop()
            tag = el.tag.lower().split("}")[-1] if isinstance(el.tag, str) else ""
            if closing:  # after the children: end the block, then the text that follows the element
                if tag in _BLOCKS:
                    self.flush()
                if el.tail:
                    self.buffer.append(el.tail)
                continue
            if tag in _SKIP or not isinstance(el.tag, str):
                if el.tail:
                    self.buffer.append(el.tail)
                continue
            if tag in _HEADINGS:
                self.heading(_HEADINGS[tag], " ".join(searchable(el.text_content()).split()))
            elif tag == "pre":
                self.flush()
                for line in searchable(el.text_content()).splitlines():
                    self.marks.write(self.out, line.rstrip() + "\n")
            else:
                if tag in _BLOCKS:
                    self.flush()
                if el.text:
                    self.buffer.append(el.text)
                stack.append((el, True))
                stack.extend((child, False) for child in reversed(list(el)))
                continue
            if el.tail:
                self.buffer.append(el.tail)


def _opener(kind: str):
    if kind == "gzip":
        import gzip

        return gzip.open
    if kind == "bz2":
        import bz2

        return bz2.open
    if kind == "xz":
        import lzma

        return lzma.open
    zstandard = _need("zstandard")
    return lambda f: _ZstdStream(zstandard, f)


class _ZstdStream:
    """zstd decompression that knows whether its frame ended (zstandard's stream reader does not say)."""

    def __init__(self, zstandard, raw):
        self.raw, self._lcread_zstd = raw, zstandard.ZstdDecompressor().decompressobj()
        self.pending = b""

    def read(self, size: int) -> bytes:
        while len(self.pending) < size:
            chunk = self.raw.read(1 << 20)
            if not chunk:
                break
            try:
                self.pending += self._lcread_zstd.decompress(chunk)
            except Exception as e:  # zstandard.ZstdError
                raise OSError(str(e)) from None
            if self._lcread_zstd.eof:
                break
        out, self.pending = self.pending[:size], self.pending[size:]
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def compressed(kind: str):
    def convert(path: Path, out, marks, label: str, limit: int, progress) -> None:
        """Decompress in blocks, refusing past `limit` bytes. Text streams straight into the cache; a PDF,
        Word or HTML file inside is unpacked to a temporary file first (removed whatever happens) and converted."""
        size = max(path.stat().st_size, 1)
        inner = None
        try:
            with open(path, "rb") as source, _opener(kind)(source) as stream:
                first = _read(stream, label)
                inside = sniff(first[:8192], path.name.rsplit(".", 1)[0])
                if inside == "text":
                    marks.kind, marks.source, marks.lines = kind, label, -1  # one source for every line
                    _copy(first, stream, out, label, limit, lambda: progress(label, source.tell(), size))
                    _complete(stream, label)
                    return
                with tempfile.NamedTemporaryFile(prefix="lcread-unpack-", delete=False) as raw:
                    inner = Path(raw.name)
                    _copy(first, stream, raw, label, limit, lambda: progress(label, source.tell(), size))
                _complete(stream, label)
            CONVERTERS[inside](inner, out, marks, label, limit, progress)
            marks.source = label
        finally:
            if inner is not None:
                inner.unlink(missing_ok=True)
    return convert


def _complete(stream, label: str) -> None:
    """A zstd stream must end with its frame (truncated .gz, .bz2 and .xz raise on their own)."""
    if getattr(stream, "_lcread_zstd", None) is not None and not stream._lcread_zstd.eof:
        raise LcreadError(f"{label} is truncated: the compressed stream ends early")


def _copy(first: bytes, stream, dest, label: str, limit: int, tick) -> None:
    written, block = 0, first
    while block:
        written += len(block)
        if written > limit:
            raise TooLarge(f"{label} expands past {limit:,} bytes (a decompression bomb?): refused; raise "
                              "the limit with LCREAD_MAX_EXPANDED if you trust it")
        dest.write(block)
        tick()
        block = _read(stream, label)


def _read(stream, label: str) -> bytes:
    try:
        return stream.read(BLOCK)
    except EOFError:
        raise LcreadError(f"{label} is truncated: the compressed stream ends early") from None
    except OSError as e:
        raise LcreadError(f"{label} is damaged ({e})") from None


def zip_archive(path: Path, out, marks, label: str, limit: int, progress) -> None:
    raise LcreadError(f"{label} is a zip archive, not a Word document: unpack it and give lcread its files")


CONVERTERS = {"pdf": pdf, "docx": docx, "html": html, "info": info, "zip": zip_archive,
              **{k: compressed(k) for k in ("gzip", "bz2", "xz", "zstd")}}
