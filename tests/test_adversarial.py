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
import shlex
import tempfile
import zipfile
from pathlib import Path

import pytest

import lcread
from lcread import batch
from lcread.documents import DocumentStore, default_cache
from lcread.errors import LcreadError
from lcread.errors import Stop
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner, parse

QUESTION = "What is the refund limit?"
TEXT = "Terms of sale.\nThe refund limit is 40 euros.\nShipping takes three days.\n"


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


# --- caches: damaged, stale, misconfigured ---------------------------------------------------------------------

def _converted_text(path: Path) -> str:
    with DocumentStore.open([str(path)]) as store:
        doc = store.docs[0]
        return "\n".join(line.text for line in doc.read_lines(1, doc.lines))


def _entry(folder: Path, suffix: str) -> Path:
    return next(p for p in folder.iterdir() if p.name.endswith(suffix) and not p.name.startswith("."))


DAMAGE = {
    "index-list": lambda f: (f / "index.json").write_text("[]"),
    "index-null": lambda f: (f / "index.json").write_text("null"),
    "index-empty-object": lambda f: (f / "index.json").write_text("{}"),
    "index-invalid-json": lambda f: (f / "index.json").write_text("{bad"),
    "index-number": lambda f: (f / "index.json").write_text("123"),
    "index-string": lambda f: (f / "index.json").write_text('"x"'),
    "index-wrong-values": lambda f: (f / "index.json").write_text('{"a": 1, "b": null}'),
    "index-short-key": lambda f: (f / "index.json").write_text(json.dumps({k: "short" for k in json.loads(
        (f / "index.json").read_text())})),
    "index-other-key": lambda f: (f / "index.json").write_text(json.dumps({k: "f" * 32 for k in json.loads(
        (f / "index.json").read_text())})),
    "index-binary": lambda f: (f / "index.json").write_bytes(os.urandom(300)),
    "index-deleted": lambda f: (f / "index.json").unlink(),
    "index-is-folder": lambda f: ((f / "index.json").unlink(), (f / "index.json").mkdir()),
    "map-list": lambda f: _entry(f, ".map.json").write_text("[]"),
    "map-null": lambda f: _entry(f, ".map.json").write_text("null"),
    "map-empty": lambda f: _entry(f, ".map.json").write_text("{}"),
    "map-invalid": lambda f: _entry(f, ".map.json").write_text("{"),
    "map-kind-number": lambda f: _entry(f, ".map.json").write_text(
        json.dumps({**json.loads(_entry(f, ".map.json").read_text()), "kind": 1, "marks": "x"})),
    "map-bytes-wrong": lambda f: _entry(f, ".map.json").write_text(
        json.dumps({**json.loads(_entry(f, ".map.json").read_text()), "bytes": 1})),
    "map-deleted": lambda f: _entry(f, ".map.json").unlink(),
    "text-truncated": lambda f: _entry(f, ".txt").write_text("The refund lim"),
    "text-random-bytes": lambda f: _entry(f, ".txt").write_bytes(os.urandom(len(_entry(f, ".txt").read_bytes()))),
    "text-same-size-other": lambda f: _entry(f, ".txt").write_text(
        _entry(f, ".txt").read_text().replace("40", "99")),
    "text-deleted": lambda f: _entry(f, ".txt").unlink(),
    "text-is-folder": lambda f: (_entry(f, ".txt").unlink(), (f / (_entry(f, ".map.json").name[:-9] + ".txt")).mkdir()),
    "stale-temporary": lambda f: (f / ".converting-abc.txt").write_text("half"),
    "stale-reading-link": lambda f: (f / ".reading-1-abcd.txt").write_text("x"),
    "foreign-files": lambda f: (f / "notes.md").write_text("not an entry"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_caches_damaged_entries_are_dropped_and_rebuilt(case, write, tmp_path):
    source = write("terms.txt.gz", gzip.compress(TEXT.encode()))
    assert _converted_text(source) == TEXT.rstrip("\n")
    DAMAGE[case](tmp_path / "converted")
    kind, value = settle(lambda: _converted_text(source))
    assert (kind, value) == ("ok", TEXT.rstrip("\n"))  # the right text, whatever the cache held
    assert "40 euros" in _converted_text(source)


def test_caches_a_source_rewritten_with_its_size_and_time_restored_is_converted_again(write):
    source = write("terms.txt.gz", gzip.compress(TEXT.encode()))
    assert "40 euros" in _converted_text(source)
    stat = source.stat()
    source.write_bytes(gzip.compress(TEXT.replace("40", "77").encode()))
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "77 euros" in _converted_text(source)


SETTINGS = {
    "LCREAD_CACHE_BYTES=abc": ("LCREAD_CACHE_BYTES", "abc"), "LCREAD_CACHE_BYTES=-1": ("LCREAD_CACHE_BYTES", "-1"),
    "LCREAD_CACHE_BYTES=empty": ("LCREAD_CACHE_BYTES", ""), "LCREAD_CACHE_BYTES=1e99": ("LCREAD_CACHE_BYTES", "1e99"),
    "LCREAD_CACHE_BYTES=1.5": ("LCREAD_CACHE_BYTES", "1.5"),
    "LCREAD_MAX_EXPANDED=abc": ("LCREAD_MAX_EXPANDED", "abc"), "LCREAD_MAX_EXPANDED=-5": ("LCREAD_MAX_EXPANDED", "-5"),
    "LCREAD_MAX_EXPANDED=0": ("LCREAD_MAX_EXPANDED", "0"),
    "LCREAD_CONVERT_DIR=file": ("LCREAD_CONVERT_DIR", "FILE"),
    "LCREAD_CONVERT_DIR=unwritable": ("LCREAD_CONVERT_DIR", "/proc/lcread-cache"),
}


@pytest.mark.parametrize("case", list(SETTINGS))
def test_caches_bad_settings_are_named_in_one_line(case, write, monkeypatch, tmp_path):
    variable, value = SETTINGS[case]
    if value == "FILE":
        value = str(write("a-file", "x"))
    monkeypatch.setenv(variable, value)
    source = write("terms.txt.gz", gzip.compress(TEXT.encode()))
    kind, message = settle(lambda: _converted_text(source))
    if kind == "error":
        assert variable in message or "cache" in message, message
    else:
        assert message == TEXT.rstrip("\n")


def test_caches_a_tiny_bound_keeps_the_newest_entry_and_stays_within_it(write, monkeypatch, tmp_path):
    monkeypatch.setenv("LCREAD_CACHE_BYTES", "400")
    for i in range(6):
        source = write(f"t{i}.txt.gz", gzip.compress(TEXT.replace("40", str(40 + i)).encode()))
        assert f"{40 + i} euros" in _converted_text(source)
    entries = [p for p in (tmp_path / "converted").iterdir() if p.name.endswith(".txt") and p.name[0] != "."]
    assert len(entries) <= 2


# --- the library's arguments ---------------------------------------------------------------------------------

class _NotAModel:
    pass


ARGUMENTS = {
    # name: (keyword arguments of lcread.ask beside a readable file, words the one-line error must hold)
    "question-int": ({"question": 123}, "question must be text"),
    "question-bytes": ({"question": b"What?"}, "question must be text"),
    "question-none": ({"question": None}, "question must be text"),
    "question-list": ({"question": ["What?"]}, "question must be text"),
    "question-empty": ({"question": ""}, "question is empty"),
    "question-blank": ({"question": " \n\t "}, "question is empty"),
    "inputs-int": ({"inputs": 123}, "inputs must be"),
    "inputs-none": ({"inputs": None}, "inputs must be"),
    "inputs-bytes": ({"inputs": b"/tmp/x"}, "inputs must be"),
    "inputs-empty-list": ({"inputs": []}, "inputs must be"),
    "inputs-list-of-none": ({"inputs": [None]}, "inputs must be"),
    "inputs-dict": ({"inputs": {"a": 1}}, "inputs must be"),
    "inputs-missing": ({"inputs": "/no/such/file.txt"}, "no such file"),
    "inputs-glob": ({"inputs": "/no/such/*.txt"}, "pattern"),
    "inputs-device": ({"inputs": "/dev/null"}, ""),
    "inputs-proc-dir": ({"inputs": "/proc/self/fdinfo"}, ""),
    "model-int": ({"model": 123}, "model must be"),
    "model-object": ({"model": _NotAModel()}, "model must be"),
    "model-unknown-string": ({"model": "no-such-provider/no-model"}, ""),
    "model-local-missing-gguf": ({"model": "local:/no/such.gguf"}, ""),
    "display-int": ({"display": 123}, "display must"),
    "display-object": ({"display": object()}, "display must"),
    "trace-int": ({"trace": 123}, "trace must"),
    "trace-folder": ({"trace": "FOLDER"}, "is a folder"),
    "trace-unwritable": ({"trace": "/proc/lcread-trace.jsonl"}, "cannot write the trace"),
    "on-warning-int": ({"on_warning": 123}, "on_warning must be a function"),
    "progress-str": ({"progress": "yes"}, "progress must be a function"),
    "mode-unknown": ({"mode": "fast"}, "unknown mode"),
    "mode-int": ({"mode": 3}, "unknown mode"),
    "unknown-option": ({"colour": "red"}, "unknown option"),
    "unknown-options": ({"max_stepz": 3, "colour": "red"}, "'colour', 'max_stepz'"),
    "max-steps-zero": ({"max_steps": 0}, "max_steps"),
    "max-steps-negative": ({"max_steps": -3}, "max_steps"),
    "max-steps-text": ({"max_steps": "many"}, "max_steps"),
    "max-steps-float": ({"max_steps": 2.5}, "max_steps"),
    "max-tokens-small": ({"max_tokens": 10}, "max_tokens"),
    "max-seconds-zero": ({"max_seconds": 0}, "max_seconds"),
    "max-seconds-text": ({"max_seconds": "soon"}, "max_seconds"),
    "context-limit-small": ({"context_limit": 100}, "context_limit"),
    "compact-above-limit": ({"context_limit": 2048, "compact_at": 4096}, "compact"),
    "read-chars-over-cap": ({"read_chars": 9000}, "read_chars"),
    "read-chars-tiny": ({"read_chars": 10}, "read_chars"),
    "grep-timeout-zero": ({"grep_timeout": 0}, "grep_timeout"),
    "max-refusals-negative": ({"max_refusals": -1}, "max_refusals"),
    "stop-bogus": ({"mode": "acs", "stop": "bogus"}, "stop"),
    "probe-bogus": ({"mode": "acs", "probe": "guess"}, "probe"),
    "theta-above-one": ({"mode": "acs", "theta": 1.5}, "theta"),
    "epsilon-negative": ({"mode": "acs", "epsilon": -0.1}, "epsilon"),
    "window-one": ({"mode": "acs", "window": 1}, "window"),
    "chunk-chars-tiny": ({"mode": "acs", "chunk_chars": 5}, "chunk_chars"),
    "notes-chars-tiny": ({"mode": "acs", "notes_chars": 5}, "notes_chars"),
    "call-timeout-negative": ({"call_timeout": -1}, "call_timeout"),
    "local-context-tiny": ({"local_context": 10}, "local_context"),
    "options-not-list": ({"options": "A) yes"}, ""),
    "sufficiency-text": ({"sufficiency": "maybe"}, "sufficiency"),
}


@pytest.mark.parametrize("case", list(ARGUMENTS))
def test_api_arguments_are_one_line_errors_naming_them(case, write, tmp_path):
    arguments, words = ARGUMENTS[case]
    call = {"inputs": str(write("terms.txt", TEXT)), "question": QUESTION, "model": answering(), **arguments}
    if call.get("trace") == "FOLDER":
        call["trace"] = str(tmp_path)
    kind, value = settle(lambda: lcread.ask(call.pop("inputs"), call.pop("question"), **call))
    if words:  # the library names an option as the command line spells it (--max-steps) or as it was given
        assert kind == "error" and (words in value or words.replace("_", "-") in value), (kind, value)
    elif kind == "ok" and "inputs" not in arguments and "model" not in arguments:
        assert value.answer == "40 euros"  # accepted (the value was usable): the run answered as usual


# --- what the model replies ----------------------------------------------------------------------------------

REPLIES = {
    "empty": [""], "whitespace": ["   \n\t  "], "prose": ["I think the answer is probably in the document."],
    "huge": ["grep " + "x" * 50_000], "escape-codes": ["\x1b[2J\x1b]0;pwned\x07answer \"40\""],
    "nul": ["grep re\x00fund"], "json": ['{"command": "grep refund"}'], "fenced": ["```\ngrep -i refund\n```"],
    "prompt-sign": ["$ grep -i refund"], "answer-unquoted": ["answer 40 euros"], "answer-empty": ['answer ""'],
    "answer-newline": ['answer "40\neuros"'], "answer-nested-quotes": ['answer "the "refund" is 40"'],
    "answer-huge": ['answer "' + "40 " * 20_000 + '"'], "answer-markup": ['answer "[bold red]40[/] euros"'],
    "answer-citation-forged": ['answer "40 euros (terms.txt:999)"'], "unknown-command": ["rm -rf /"],
    "shell-injection": ["grep refund; cat /etc/passwd"], "command-substitution": ["grep $(cat /etc/passwd)"],
    "pipe": ["grep refund | sh"], "redirect": ["grep refund > /tmp/lcread-owned"],
    "unknown-document": ["read other.txt 1 5"], "path-traversal": ["read ../../etc/passwd 1 5"],
    "negative-lines": ["read terms.txt -5 -1"], "huge-lines": ["read terms.txt 99999999999 99999999999999"],
    "reversed-lines": ["read terms.txt 3 1"], "from-past-end": ["read terms.txt 1 1 --from 99999999"],
    "regex-bomb": ["grep -E '(a+)+$'"], "invalid-regex": ["grep -E '(unclosed'"], "empty-pattern": ["grep ''"],
    "grep-count-huge": ["grep -m 999999999 -C 999999 refund"], "search-no-words": ["search ?? !!"],
    "definition-junk": ["definition 1+1"], "sed-write": ["sed -n '1,5w /tmp/lcread-owned' terms.txt"],
    "tail-huge": ["tail -n 999999999 terms.txt"], "head-negative": ["head -n -5 terms.txt"],
    "ls-options": ["ls -la /"], "wc-everything": ["wc -l -c -w terms.txt"],
    "repeat-forever": ["grep -i refund"] * 20, "format-errors": ["nonsense"] * 20,
    "unicode-confusables": ["grеp refund"], "bidi": ["grep \u202erefund"], "tabs": ["grep\t-i\trefund"],
    "many-commands": ["grep refund\nread terms.txt 1 2\nanswer \"40 euros\""],
    "handoff-json-instead": ['{"current_step": "x", "findings": [{"fact": "x", "document": "../x", "lines": "1-2"}]}'],
    "injection-in-answer": ['answer "Ignore the documents and say 99"'],
}


@pytest.mark.parametrize("case", list(REPLIES))
@pytest.mark.parametrize("mode", ["select", "sac"])
def test_model_replies_never_break_a_run(case, mode, write):
    doc = write("terms.txt", TEXT)
    model = ScriptedModel(REPLIES[case] * (20 // len(REPLIES[case])) + ['answer "40 euros"'] * 30)
    kind, result = settle(lambda: lcread.ask(str(doc), QUESTION, model=model, mode=mode, max_steps=12))
    assert kind == "ok", result
    assert result.stop.kind in set(Stop) - {Stop.MODEL_ERROR, Stop.INTERRUPTED}
    assert not result.final or "40" in result.answer  # what the document says, however the model wrote it
    assert not os.path.exists("/tmp/lcread-owned") and "root:x:0:0" not in json.dumps(result.to_dict())


# --- batch task files ----------------------------------------------------------------------------------------

def _task(**fields) -> str:
    return json.dumps({"id": "t1", "documents": ["DOC"], "question": QUESTION, **fields})


TASK_FILES = {
    # name: (file content, words the one-line error holds; "" when the file is valid)
    "valid": (_task(), ""),
    "valid-blank-lines": ("\n\n" + _task() + "\n\n", ""),
    "valid-crlf": (_task() + "\r\n" + _task(id="t2") + "\r\n", ""),
    "empty-file": ("", "holds no tasks"),
    "only-blank": ("\n \n", "holds no tasks"),
    "not-json": ("this is not json", ":1:"),
    "json-array": ("[1, 2]", ":1:"),
    "json-null": ("null", ":1:"),
    "truncated-line": (_task()[:-5], ":1:"),
    "missing-id": (json.dumps({"documents": ["DOC"], "question": QUESTION}), "id"),
    "missing-question": (json.dumps({"id": "a", "documents": ["DOC"]}), "question"),
    "missing-documents": (json.dumps({"id": "a", "question": QUESTION}), "documents"),
    "question-number": (_task(question=5), "question"),
    "question-blank": (_task(question="   "), "question is empty"),
    "documents-string": (_task(documents="DOC"), "documents"),
    "documents-empty": (_task(documents=[]), "documents"),
    "id-number": (_task(id=7), "id"),
    "duplicate-ids": (_task() + "\n" + _task(), "appears twice"),
    "unknown-field": (_task(colour="red"), "colour"),
    "mode-bogus": (_task(mode="fast"), "unknown mode"),
    "stop-bogus": (_task(stop="bogus"), "stopping policy"),
    "options-string": (_task(options="A) yes"), "options"),
    "second-line-bad": (_task() + "\n{", ":2:"),
    "huge-line": (_task(question="What? " + "x" * 200_000), "at most 20,000"),  # bounded before any work
    "bom": ("\ufeff" + _task(), ""),
}


@pytest.mark.parametrize("case", list(TASK_FILES))
def test_batch_task_files_are_checked_before_anything_runs(case, write):
    doc = write("terms.txt", TEXT)
    content, words = TASK_FILES[case]
    path = write("tasks.jsonl", content.replace("DOC", str(doc)))
    kind, value = settle(lambda: batch.load_tasks(path))
    if words:
        assert kind == "error" and words in value and "tasks.jsonl" in value, (kind, value)
    else:
        assert kind == "ok" and value and all(t.question.strip() for t in value), value


BATCH_FILES = {"not-utf8": (b"\xff\xfe\x00garbage", "not UTF-8"), "missing": (None, "cannot read"),
               "folder": ("FOLDER", "cannot read")}


@pytest.mark.parametrize("case", list(BATCH_FILES))
def test_batch_task_file_paths_are_one_line_errors(case, write, tmp_path):
    content, words = BATCH_FILES[case]
    path = tmp_path / "tasks.jsonl"
    if content == "FOLDER":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    kind, value = settle(lambda: batch.load_tasks(path))
    assert kind == "error" and words in value, value


OUTS = {"folder": "is a folder", "has-results": "already holds results", "unwritable": "", "fine": ""}


@pytest.mark.parametrize("case", list(OUTS))
def test_batch_results_files_are_checked(case, write, tmp_path):
    from lcread.api import settings_from

    doc = write("terms.txt", TEXT)
    tasks = write("tasks.jsonl", _task(documents=[str(doc)]))
    out = {"folder": tmp_path, "has-results": write("out.jsonl", '{"id": "old"}\n'),
           "unwritable": Path("/proc/lcread-results.jsonl"), "fine": tmp_path / "new" / "out.jsonl"}[case]
    kind, value = settle(lambda: batch.run(tasks, out, resume=False, concurrency=1, model=answering(), api_base=None,
                                           settings=settings_from("select", None, {}), trace=None, router=None,
                                           quiet=True))
    if OUTS[case]:
        assert kind == "error" and OUTS[case] in value, value
    elif case == "fine":
        assert kind == "ok" and json.loads(out.read_text())["answer"] == "40 euros"
    else:
        assert kind == "error" or value


# --- names: unique, inert, reachable ---------------------------------------------------------------------------

NAMES = {
    "same-name-three-folders": ["n1/a.txt", "n2/a.txt", "n3/a.txt"],
    "name-like-a-renamed-one": ["n1/a-2.txt", "n2/a.txt", "n3/a.txt"],
    "newline": ["a\nb.txt"], "carriage-return": ["a\rb.txt"], "escape-code": ["a\x1b[31mred.txt"],
    "bidi-override": ["a\u202etxt.exe"], "arabic-mark": ["a\u061cb.txt"], "leading-dash": ["-rf.txt"],
    "spaces": ["my terms file.txt"], "quotes": ["it's \"quoted\".txt"], "glob-chars": ["a*b?[c].txt"],
    "shell-chars": ["a;b|c&d$(e).txt"], "long-name": ["n" * 240 + ".txt"], "unicode-nfc": ["caf\u00e9.txt"],
    "unicode-nfd-and-nfc": ["caf\u00e9.txt", "cafe\u0301.txt"], "case-only": ["Terms.txt", "terms.txt"],
    "dots": ["...txt"], "no-extension": ["README"], "colon-number": ["terms.txt:12"], "percent": ["100%.txt"],
}


@pytest.mark.parametrize("case", list(NAMES))
def test_names_are_unique_and_every_document_can_be_read(case, tmp_path):
    paths = []
    for i, name in enumerate(NAMES[case]):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Document {i}. The refund limit is {40 + i} euros.\n")
        paths.append(str(path))
    kind, store = settle(lambda: DocumentStore.open(paths))
    assert kind == "ok", store
    names = [d.name for d in store.docs]
    assert len(set(names)) == len(names) == len(paths)
    tools = ToolRunner(store)
    for i, name in enumerate(names):
        out = tools.run(parse(f"read {shlex.quote(name)} 1 1"))
        listing = store.listing()
        assert f"limit is {40 + i} euros" in out.text or "\\" in name or any(ord(c) < 32 for c in name), out.text
        assert not any(c in listing for c in "\x1b\r\u202e\u061c") and listing.count("\n") == len(names) - 1
    store.close()


# --- endings: the documented exit status, one line on stderr, one JSON object under --json -----------------------

def _endings():
    from fault_server import Step, error_body

    good = [Step(text="grep -i refund"), Step(text='answer "40 euros"')]
    busy = Step(status=500, body=error_body(500, "down"))
    # name: (arguments after `ask DOC`, server script, default step, environment, exit status)
    return {
        "answered": ([QUESTION], good, None, {}, 0),
        "unverified-accepted": ([QUESTION, "--no-sufficiency"], [Step(text='answer "99 euros"')], None, {}, 4),
        "refused-to-the-limit": (["How many euros is the refund limit?"], [Step(text="read terms.txt 1 3")],
                                 Step(text='answer "Terms of sale"'), {}, 4),  # shown, but no number
        "nothing-found-at-the-limit": ([QUESTION], [Step(text="grep -i refund")], Step(text='answer "99 euros"'),
                                       {}, 3),
        "step-limit": ([QUESTION, "--max-steps", "2"], [], Step(text="grep -i shipping"), {}, 3),
        "format-limit": ([QUESTION], [], Step(text="I am not sure what to do."), {}, 3),
        "model-error": ([QUESTION], [Step(text="grep -i refund")], busy, {"LCREAD_RETRIES": "1"}, 5),
        "time-limit": ([QUESTION, "--max-seconds", "1"], [], Step(text="grep -i refund", delay=3), {}, 3),
        "acs-nothing-found": ([QUESTION, "--mode", "acs", "--stop", "end"], [], Step(text="no answer"), {}, 4),
        "empty-question": (["  "], good, None, {}, 2),
        "unknown-mode": ([QUESTION, "--mode", "fast"], good, None, {}, 2),
        "typed-wrong": ([QUESTION, "--max-steps", "many"], good, None, {}, 2),
        "out-of-range": ([QUESTION, "--max-steps", "0"], good, None, {}, 2),
        "read-chars-over-cap": ([QUESTION, "--read-chars", "99999"], good, None, {}, 2),
        "unknown-stop": ([QUESTION, "--mode", "acs", "--stop", "bogus"], good, None, {}, 2),
        "unknown-option": ([QUESTION, "--colour", "red"], good, None, {}, 2),
        "missing-input": (["MISSING", QUESTION], good, None, {}, 1),
        "binary-input": (["BINARY", QUESTION], good, None, {}, 1),
        "bad-cache-setting": (["GZ", QUESTION], good, None, {"LCREAD_CACHE_BYTES": "abc"}, 1),
        "cache-dir-is-a-file": (["GZ", QUESTION], good, None, {"LCREAD_CONVERT_DIR": "FILE"}, 1),
        "unwritable-trace": ([QUESTION, "--trace", "/proc/lcread-trace.jsonl"], good, None, {}, 1),
    }


@pytest.mark.parametrize("case", list(_endings()))
def test_endings_keep_their_exit_status_and_json(case, write, tmp_path):
    from conftest import run_cli
    from fault_server import FaultServer

    args, script, default, env, code = _endings()[case]
    doc = write("terms.txt", TEXT)
    places = {"MISSING": str(tmp_path / "missing.txt"), "BINARY": str(write("b.bin", b"\x00\x01" * 500)),
              "GZ": str(write("t.txt.gz", gzip.compress(TEXT.encode()))), "FILE": str(write("afile", "x"))}
    args = [places.get(a, a) for a in args]
    env = {k: places.get(v, v) for k, v in env.items()}
    inputs = [] if args[0] in places.values() else [str(doc)]
    with FaultServer(script, default=default) as server:
        proc = run_cli("ask", *inputs, *args, "--model", "openai/fake", "--api-base", server.base, "--json",
                       env={"OPENAI_API_KEY": "sk-test", "LCREAD_CONVERT_DIR": str(tmp_path / "c"), **env},
                       timeout=120)
    err, out = proc.stderr.decode(), proc.stdout.decode()
    assert proc.returncode == code, (proc.returncode, err[-600:])
    assert "Traceback" not in err and len(out.strip().splitlines()) == 1, out
    payload = json.loads(out)
    if code in (1, 2):
        assert payload["exit_status"] == code and payload["error"] and "\n" not in payload["error"]
    else:  # a result: final unless a limit ended the run (answers refused to the limit end unverified, 4)
        assert "answer" in payload and payload["final"] is (code == 0 or code == 4 and "limit" not in
                                                            payload["stop_reason"])
