import gc
import io
import random

import pytest

from lcread import documents
from lcread.documents import Document, DocumentStore
from lcread.errors import LcreadError


def _all_lines(doc: Document) -> list[str]:
    return [line.text for line in doc.read_lines(1, doc.lines)]


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_index_matches_splitlines_across_many_blocks(write, monkeypatch, trailing_newline):
    monkeypatch.setattr(documents, "BLOCK", 64)  # many checkpoints, lines straddling block ends
    rng = random.Random(7)
    lines = ["".join(rng.choice("abc xyz") for _ in range(rng.randint(0, 150))) for _ in range(300)]
    text = "\n".join(lines) + ("\n" if trailing_newline else "")
    doc = Document.index("d.txt", write("d.txt", text))
    assert doc.lines == 300
    assert doc.size == len(text.encode())
    assert _all_lines(doc) == lines
    for start in (1, 2, 57, 150, 299, 300):
        got = [line.text for line in doc.read_lines(start, start + 3)]
        assert got == lines[start - 1:start + 3]


def test_crlf_and_length(write):
    doc = Document.index("d", write("d", b"one\r\ntwo\r\n"))
    rows = list(doc.read_lines(1, 2))
    assert [r.text for r in rows] == ["one", "two"]
    assert rows[0].length == len("one\r")


def test_a_line_longer_than_the_cap_is_cut_and_read_by_range(write):
    long = "x" * 50_000 + "NEEDLE" + "y" * 50_000
    doc = Document.index("d", write("d", f"short\n{long}\nafter\n"))
    row = list(doc.read_lines(2, 2, max_bytes=1000))[0]
    assert row.cut and len(row.text) == 1000 and row.length == len(long)
    assert [r.text for r in doc.read_lines(3, 3)] == ["after"]  # the rest of the long line was skipped
    assert doc.read_span(2, 50_000, 6) == ("NEEDLE", len(long), 50_006)


def test_read_span_counts_characters_not_bytes(write):
    doc = Document.index("d", write("d", "é" * 100 + "\n"))
    assert doc.read_span(1, 1, 10) == ("é" * 10, 100, 11)
    assert doc.read_span(1, 95, 10) == ("é" * 5, 100, 100)
    assert doc.chars_in(0, 200) == 100


def test_undecodable_bytes_are_replaced_and_flagged(write):
    doc = Document.index("d", write("d", b"caf\xe9 ok\nnext\n"))
    assert doc.replaced
    assert list(doc.read_lines(1, 1))[0].text == "caf\ufffd ok"
    assert not Document.index("e", write("e", "café\n")).replaced


@pytest.mark.parametrize("content, message", [
    (b"\x7fELF\x00\x01binary", "looks binary"),
    (b"", "is empty"),
])
def test_bad_files(write, content, message):
    with pytest.raises(LcreadError, match=message):
        DocumentStore.open([str(write("f.bin", content))])


def test_missing_path_and_empty_folder(tmp_path, write):
    with pytest.raises(LcreadError, match="no such file or folder"):
        DocumentStore.open([str(tmp_path / "nope.txt")])
    write("only/image.png", b"\x89PNG\x00\x00")
    with pytest.raises(LcreadError, match="holds no readable text files"):
        DocumentStore.open([str(tmp_path / "only")])


def test_folder_expands_to_text_files_with_unique_names(tmp_path, write):
    write("docs/a.txt", "alpha\n")
    write("docs/sub/a.txt", "beta\n")
    write("docs/.hidden/c.txt", "hidden\n")
    write("docs/logo.png", b"\x89PNG\x00")
    write("other/a.txt", "gamma\n")
    store = DocumentStore.open([str(tmp_path / "docs"), str(tmp_path / "other" / "a.txt")])
    assert [d.name for d in store.docs] == ["docs/a.txt", "docs/sub/a.txt", "a.txt"]
    same = DocumentStore.open([str(tmp_path / "docs" / "a.txt"), str(tmp_path / "other" / "a.txt")])
    assert [d.name for d in same.docs] == ["a.txt", "a-2.txt"]
    assert same.get("./a-2.txt").path.name == "a.txt"


def test_a_store_never_closed_leaves_no_spooled_file():
    store = DocumentStore.open(["-"], stdin=io.BytesIO(b"line one\n"))
    spooled = store.get("stdin").path
    assert spooled.exists()
    del store
    gc.collect()
    assert not spooled.exists()


def test_stdin_is_spooled_and_removed_on_close():
    store = DocumentStore.open(["-"], stdin=io.BytesIO(b"line one\nline two\n"))
    doc = store.get("stdin")
    assert doc.lines == 2 and doc.path.exists()
    store.close()
    assert not doc.path.exists()
    with pytest.raises(LcreadError, match="stdin is empty"):
        DocumentStore.open(["-"], stdin=io.BytesIO(b""))
