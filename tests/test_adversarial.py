"""The adversarial matrix (reliability round 3): hostile inputs, damaged caches, wrong arguments, hostile model
replies, broken task files and names that try to mislead, each case asserting the documented behaviour: a right
result, or a one-line error that says what to do; never another exception, nothing left in the temp dir.

Cases are counted per category (the first word of each test's name after `test_`):
    pytest --collect-only -q tests/test_adversarial.py | sed -E 's/.*::test_([a-z]+).*/\\1/' | sort | uniq -c
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import tempfile
import zipfile
from pathlib import Path

import pytest

import lcread
from lcread import batch
from lcread.documents import DocumentStore, default_cache
from lcread.errors import LcreadError
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner, parse

QUESTION = "What is the refund limit?"
TEXT = "Terms of sale.\nThe refund limit is 40 euros.\nShipping takes three days.\n"
STOPS = {"answered", "no answer", "step limit", "sufficiency limit", "grounding limit", "repeat limit", "format limit",
         "token limit", "context limit", "time limit"}


def leftovers() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("lcread-")}


def settle(call):
    """The outcome of a call: ("ok", value) or ("error", message); an LcreadError must be one line that says
    something, any other exception fails the case, and no temporary file of lcread's may outlive the call."""
    before = leftovers()
    try:
        outcome = ("ok", call())
    except LcreadError as e:
        message = str(e)
        assert message.strip() and "\n" not in message.strip() and "Traceback" not in message, message
        outcome = ("error", message)
    assert leftovers() <= before, leftovers() - before
    return outcome


def answering(*extra: str) -> ScriptedModel:
    """A model that searches, then answers 40 (and keeps answering, whatever it is told)."""
    return ScriptedModel(["grep -i refund", *extra] + ['answer "40 euros"'] * 12)


def ask(inputs, question=QUESTION, model=None, **kw):
    return lcread.ask(inputs, question, model=model or answering(), **kw)


def stop_of(result) -> str:
    return result.reason.split(" (")[0]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LCREAD_CONVERT_DIR", str(tmp_path / "converted"))


# --- inputs: formats, bombs, encodings, folders, stdin ---------------------------------------------------------

_TYPES = ('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
          '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
          'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
_RELS = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
         'officeDocument" Target="word/document.xml"/></Relationships>')


def _docx(body: str, extra: dict | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", _TYPES)
        z.writestr("_rels/.rels", _RELS)
        z.writestr("word/document.xml", '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.'
                                        f'org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>')
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buffer.getvalue()


def _para(text: str) -> str:
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"


def _xxe_docx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("[Content_Types].xml", _TYPES)
        z.writestr("_rels/.rels", _RELS)
        z.writestr("word/document.xml", '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                                        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/'
                                        '2006/main"><w:body><w:p><w:r><w:t>&x; The refund limit is 40 euros.</w:t>'
                                        '</w:r></w:p></w:body></w:document>')
    return buffer.getvalue()


def _laughs() -> str:
    defs = '<!ENTITY a0 "lol">' + "".join(f'<!ENTITY a{i} "{("&a" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    return f'<?xml version="1.0"?><!DOCTYPE d [{defs}]><html><body><p>&a9; The refund limit is 40.</p></body></html>'


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


BIG = 3_000_000  # bytes a bomb expands to, past the bound these cases set (LCREAD_MAX_EXPANDED=1,000,000)
INPUTS = {
    # name: (file name, bytes, expected: "ok" (the text is read), "error: <words>", or "either")
    "plain": ("a.txt", TEXT.encode(), "ok"),
    "crlf": ("a.txt", TEXT.replace("\n", "\r\n").encode(), "ok"),
    "cr-only": ("a.txt", TEXT.replace("\n", "\r").encode(), "ok"),
    "utf8-bom": ("a.txt", b"\xef\xbb\xbf" + TEXT.encode(), "ok"),
    "utf16-le": ("a.txt", TEXT.encode("utf-16"), "ok"),
    "utf16-be": ("a.txt", b"\xfe\xff" + TEXT.encode("utf-16-be"), "ok"),
    "utf32": ("a.txt", TEXT.encode("utf-32"), "ok"),
    "latin1": ("a.txt", TEXT.replace("sale", "sal\xe9").encode("latin-1"), "ok"),
    "soft-hyphens": ("a.txt", TEXT.replace("refund", "re\u00adfund").encode(), "ok"),
    "ligatures": ("a.txt", (TEXT + "The \ufb01nal price is \uff14\uff10 euros.\n").encode(), "ok"),
    "nbsp": ("a.txt", TEXT.replace(" ", "\u00a0").encode(), "ok"),
    "nul-inside": ("a.txt", TEXT.encode() + b"\x00\x01\x02" * 100, "error: binary"),
    "empty": ("a.txt", b"", "error: empty"),
    "only-newlines": ("a.txt", b"\n" * 1000, "either"),
    "one-char": ("a.txt", b"x", "either"),
    "no-final-newline": ("a.txt", TEXT.rstrip("\n").encode(), "ok"),
    "long-line": ("a.txt", (b"filler " * 300_000) + TEXT.encode(), "ok"),
    "many-lines": ("a.txt", b"filler line\n" * 200_000 + TEXT.encode(), "ok"),
    "pdf-magic-text": ("a.txt", b"%PDF-1.7 is the version we use.\n" + TEXT.encode(), "ok"),
    "bzip-magic-text": ("a.txt", b"BZh9 is a header.\n" + TEXT.encode(), "ok"),
    "zip-magic-text": ("a.txt", b"PK\x03\x04 a zip header\n" + TEXT.encode(), "either"),
    "escape-codes": ("a.txt", b"\x1b[2J\x1b]0;title\x07" + TEXT.encode(), "ok"),
    "invalid-utf8": ("a.txt", b"\xff\xfe\xfd bytes\n" + TEXT.encode(), "either"),
    "gz": ("a.txt.gz", gzip.compress(TEXT.encode()), "ok"),
    "gz-bomb-zeros": ("a.gz", gzip.compress(b"\x00" * BIG), "error: "),
    "gz-bomb-text": ("a.gz", gzip.compress(b"refund limit\n" * (BIG // 13)), "error: bomb"),
    "gz-truncated": ("a.gz", gzip.compress(TEXT.encode() * 50)[:-30], "error: "),
    "gz-empty": ("a.gz", gzip.compress(b""), "error: "),
    "gz-garbage": ("a.gz", b"\x1f\x8b\x08\x00garbage that is no deflate stream", "error: "),
    "gz-trailing-garbage": ("a.gz", gzip.compress(TEXT.encode()) + b"junk", "either"),
    "gz-in-gz": ("a.gz", gzip.compress(gzip.compress(TEXT.encode())), "either"),
    "gz-of-pdf-bomb": ("a.gz", gzip.compress(b"%PDF-1.4\n" + b"\x00" * BIG), "error: "),
    "gz-named-txt": ("a.txt", gzip.compress(TEXT.encode()), "either"),
    "bz2": ("a.txt.bz2", bz2.compress(TEXT.encode()), "ok"),
    "bz2-bomb": ("a.bz2", bz2.compress(b"refund limit\n" * (BIG // 13)), "error: bomb"),
    "bz2-truncated": ("a.bz2", bz2.compress(TEXT.encode() * 50)[:-20], "error: "),
    "bz2-garbage": ("a.bz2", b"BZh91AY&SYgarbage", "either"),  # text that begins like bzip2: read as text
    "xz": ("a.txt.xz", lzma.compress(TEXT.encode()), "ok"),
    "xz-bomb": ("a.xz", lzma.compress(b"refund limit\n" * (BIG // 13)), "error: bomb"),
    "xz-truncated": ("a.xz", lzma.compress(TEXT.encode() * 50)[:-20], "error: "),
    "xz-garbage": ("a.xz", b"\xfd7zXZ\x00garbage", "error: "),
    "zst": ("a.txt.zst", _zstd(TEXT.encode()), "ok"),
    "zst-bomb": ("a.zst", _zstd(b"refund limit\n" * (BIG // 13)), "error: bomb"),
    "zst-truncated": ("a.zst", _zstd(TEXT.encode() * 50)[:-10], "error: "),
    "zst-garbage": ("a.zst", b"\x28\xb5\x2f\xfdgarbage", "error: "),
    "docx": ("a.docx", _docx(_para("Terms of sale.") + _para("The refund limit is 40 euros.")), "ok"),
    "docx-paragraph-bomb": ("a.docx", _docx(_para("refund limit") * 200_000), "error: bomb"),
    "docx-whitespace-bomb": ("a.docx", _docx(_para(" " * BIG)), "error: "),
    "docx-not-zip": ("a.docx", b"this is not a zip file at all", "either"),
    "docx-no-document": ("a.docx", _docx("", {"other.xml": "<x/>"}).replace(b"word/document.xml", b"word/documenx.xml"),
                         "error: "),
    "docx-xxe": ("a.docx", _xxe_docx(), "either"),
    "docx-bad-xml": ("a.docx", _docx("<w:p><w:r><w:t>unclosed"), "error: "),
    "docx-empty-body": ("a.docx", _docx(""), "error: "),
    "html": ("a.html", f"<html><body><h1>Terms</h1><p>{TEXT}</p></body></html>".encode(), "ok"),
    "html-nested-divs": ("a.html", ("<div>" * 300 + "deep" + "</div>" * 300 + f"<p>{TEXT}</p>").encode(), "ok"),
    "html-very-nested": ("a.html", ("<div>" * 20_000 + f"<p>{TEXT}</p>").encode(), "ok"),
    "html-script-only": ("a.html", b"<html><script>var a = 1;</script><style>p {}</style></html>", "error: "),
    "html-gz-bomb": ("a.html.gz", gzip.compress(b"<p>refund limit</p>\n" * (BIG // 20)), "error: "),
    "html-laughs": ("a.xhtml", _laughs().encode(), "either"),
    "html-xxe": ("a.xhtml", b'<?xml version="1.0"?><!DOCTYPE h [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                            b"<html><body><p>&x; The refund limit is 40 euros.</p></body></html>", "either"),
    "html-malformed": ("a.html", f"<html><body><p>{TEXT}<div><span></p></td></body>".encode(), "ok"),
    "html-latin1": ("a.html", b'<meta charset="latin-1"><p>Sal\xe9. The refund limit is 40 euros.</p>', "ok"),
    "html-huge-attribute": ("a.html", b'<p title="' + b"x" * 2_000_000 + b'">The refund limit is 40 euros.</p>',
                            "either"),
    "pdf-damaged": ("a.pdf", b"%PDF-1.4\nnot really a pdf\n%%EOF\n", "either"),
    "pdf-header-only": ("a.pdf", b"%PDF-", "either"),
    "pdf-binary-damaged": ("a.pdf", b"%PDF-1.4\n" + bytes(range(256)) * 40, "error: "),
    "pdf-gz-garbage": ("a.pdf.gz", gzip.compress(b"%PDF-1.4 garbage"), "error: "),
}


@pytest.mark.parametrize("case", list(INPUTS))
def test_inputs(case, write, monkeypatch):
    monkeypatch.setenv("LCREAD_MAX_EXPANDED", "1000000")
    name, data, expected = INPUTS[case]
    path = write(name, data)
    kind, value = settle(lambda: ask(str(path)))
    if expected == "ok":
        assert kind == "ok" and value.answer == "40 euros" and value.verified, value
    elif expected.startswith("error"):
        assert kind == "error" and expected[7:] in value and str(path.name) in value or kind == "error" and \
            expected[7:] in value, (kind, value)
    if kind == "ok":
        assert "root:x:0:0" not in json.dumps(value.to_dict())


def _folder(root: Path, kind: str) -> Path:
    base = root / "folder"
    base.mkdir()
    if kind == "empty":
        pass
    elif kind == "binaries-only":
        for i in range(5):
            (base / f"b{i}.bin").write_bytes(bytes(range(256)) * 10)
    elif kind == "many-files":
        for i in range(2000):
            (base / f"f{i:04d}.txt").write_text(f"record {i}\n")
        (base / "terms.txt").write_text(TEXT)
    elif kind == "deep":
        deep = base
        for i in range(60):
            deep = deep / f"d{i}"
        deep.mkdir(parents=True)
        (deep / "terms.txt").write_text(TEXT)
    elif kind == "symlink-loop":
        (base / "loop").symlink_to(base)
        (base / "terms.txt").write_text(TEXT)
    elif kind == "dangling-link":
        (base / "gone.txt").symlink_to(root / "nowhere.txt")
        (base / "terms.txt").write_text(TEXT)
    elif kind == "fifo-inside":
        os.mkfifo(base / "pipe.txt")
        (base / "terms.txt").write_text(TEXT)
    elif kind == "mixed-formats":
        (base / "a.txt.gz").write_bytes(gzip.compress(TEXT.encode()))
        (base / "b.html").write_text("<p>Other page.</p>")
        (base / "c.bin").write_bytes(b"\x00\x01" * 100)
    elif kind == "bad-compressed-inside":
        (base / "bomb.gz").write_bytes(gzip.compress(b"refund\n" * 400_000))
        (base / "cut.xz").write_bytes(lzma.compress(TEXT.encode() * 40)[:-30])
        (base / "terms.txt.bz2").write_bytes(bz2.compress(TEXT.encode()))
    elif kind == "hidden-only":
        (base / ".hidden.txt").write_text(TEXT)
    elif kind == "same-names":
        for sub in ("x", "y", "z"):
            (base / sub).mkdir()
            (base / sub / "terms.txt").write_text(TEXT if sub == "y" else "Nothing here.\n")
    return base


FOLDERS = {"empty": "error: ", "binaries-only": "error: ", "many-files": "ok", "deep": "ok", "symlink-loop": "ok",
           "dangling-link": "ok", "fifo-inside": "ok", "mixed-formats": "ok", "hidden-only": "either",
           "same-names": "ok", "bad-compressed-inside": "ok"}


@pytest.mark.parametrize("case", list(FOLDERS))
def test_inputs_folders(case, tmp_path, monkeypatch):
    monkeypatch.setenv("LCREAD_MAX_EXPANDED", "1000000")
    folder = _folder(tmp_path, case)
    kind, value = settle(lambda: ask(str(folder)))
    expected = FOLDERS[case]
    if expected == "ok":
        assert kind == "ok" and value.answer == "40 euros", value
    elif expected.startswith("error"):
        assert kind == "error", value


STDIN = {"text": (TEXT.encode(), "ok"), "empty": (b"", "error: stdin is empty"), "nul": (b"\x00" * 5000, "error: binary"),
         "too-large": (b"refund limit\n" * 200_000, "error: larger than"), "utf16": (TEXT.encode("utf-16"), "ok"),
         "cr-only": (TEXT.replace("\n", "\r").encode(), "ok")}


@pytest.mark.parametrize("case", list(STDIN))
def test_inputs_stdin(case, monkeypatch):
    monkeypatch.setenv("LCREAD_MAX_EXPANDED", "1000000")
    data, expected = STDIN[case]
    kind, value = settle(lambda: DocumentStore.open(["-"], stdin=io.BytesIO(data)).close())
    if expected == "ok":
        assert kind == "ok"
    else:
        assert kind == "error" and expected[7:] in value, value
