"""Real documents: PDF, Word, HTML and compressed files become text with a map back to their source;
each is converted once; bad and hostile files are one-line errors that leave nothing in the cache."""

import bz2
import os
import gzip
import lzma
import zipfile

import pytest

from conftest import run_cli, write_pdf
from lcread.convert import ConvertCache
from lcread.documents import DocumentStore
from lcread.errors import LcreadError
from lcread.tools import ToolRunner, parse


@pytest.fixture
def cache(tmp_path):
    return ConvertCache(tmp_path / "cache", max_bytes=50 << 20, max_expanded=5 << 20)


def make_pdf(path, pages: dict[int, str], count: int, password: str | None = None):
    return write_pdf(path, count, lambda n: pages.get(n, f"Filler text of page {n} about nothing in particular."),
                     password)


def open_store(path, cache):
    return DocumentStore.open([str(path)], cache=cache)


def test_a_pdf_becomes_text_with_page_markers_and_a_page_map(tmp_path, cache):
    pdf = make_pdf(tmp_path / "manual.pdf", {3: "The refund is capped at 40 euros."}, 5)
    with open_store(pdf, cache) as store:
        doc = store.docs[0]
        tools = ToolRunner(store)
        hit = tools.run(parse("grep -p refund")).text.splitlines()
        assert hit[0] == "manual.pdf=5=[page 3]" and hit[1].startswith("manual.pdf:6:The refund is capped")
        assert doc.source.locate(6) == "page 3" and doc.source.locate(1) == "page 1"
        assert "converted from PDF" in store.warnings[0]


def test_a_second_open_converts_nothing(tmp_path, cache):
    pdf = make_pdf(tmp_path / "m.pdf", {}, 3)
    with open_store(pdf, cache) as first:
        assert "in " in first.warnings[0]
    with open_store(pdf, cache) as second:
        assert "from the cache" in second.warnings[0] and second.docs[0].lines == first.docs[0].lines
    assert cache.info()["entries"] == 1


def test_a_new_converter_version_converts_again(tmp_path, cache, monkeypatch):
    from lcread.convert import cache as module

    pdf = make_pdf(tmp_path / "m.pdf", {}, 2)
    with open_store(pdf, cache):
        pass
    monkeypatch.setattr(module, "VERSION", module.VERSION + ".next")  # lcread upgraded: formats convert otherwise
    with open_store(pdf, cache) as again:
        assert "from the cache" not in again.warnings[0]
    assert cache.info()["entries"] == 2


def test_the_cache_is_bounded_and_can_be_cleared(tmp_path):
    small = ConvertCache(tmp_path / "c", max_bytes=260, max_expanded=1 << 20)  # one entry of about 200 bytes
    for i in range(3):
        with open_store(make_pdf(tmp_path / f"{i}.pdf", {1: f"document {i}"}, 1), small):
            pass
    assert small.info()["entries"] == 1  # only the newest is kept over the bound
    assert small.clear() == 1 and small.info()["entries"] == 0


def test_converting_a_folder_scans_the_cache_and_writes_its_index_once(tmp_path):
    class Counted(ConvertCache):
        scans = saves = 0

        def entries(self):
            Counted.scans += 1
            return super().entries()

        def _save_index(self, index):
            Counted.saves += 1
            super()._save_index(index)

    folder = tmp_path / "manuals"
    folder.mkdir()
    for i in range(6):
        make_pdf(folder / f"{i}.pdf", {1: f"document {i}"}, 1)
    big = Counted(tmp_path / "c", max_bytes=1 << 20, max_expanded=1 << 20)
    with open_store(folder, big) as store:
        assert len(store.docs) == 6
    assert big.info()["entries"] == 6 and Counted.scans == 1 + 1  # the first write's sweep, and info's own
    assert Counted.saves == 1
    with open_store(folder, Counted(tmp_path / "c", max_bytes=1 << 20, max_expanded=1 << 20)) as again:
        assert "6 files read as text converted from PDF (6 from the cache" in again.warnings[0]
    assert Counted.saves == 1  # every file was known by the saved index: none hashed again, nothing to save


def test_word_documents_keep_their_heading_path(tmp_path, cache):
    import docx

    document = docx.Document()
    document.add_heading("Terms", 1)
    document.add_paragraph("General terms.")
    document.add_heading("Refunds", 2)
    document.add_paragraph("The refund is capped at 40 euros.")
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "fee", "12 euros"
    path = tmp_path / "contract.docx"
    document.save(str(path))
    with open_store(path, cache) as store:
        tools = ToolRunner(store)
        assert tools.run(parse("grep -p capped")).text.splitlines()[0] == "contract.docx=3=# Terms > ## Refunds"
        line = int(tools.run(parse("grep capped")).text.split(":")[1])
        assert store.docs[0].source.locate(line) == "Terms > Refunds"
        assert "fee | 12 euros" in tools.run(parse("grep fee")).text


def test_html_becomes_text_with_headings_and_no_script(tmp_path, cache):
    page = tmp_path / "page.xhtml"
    page.write_text("<?xml version='1.0'?><html><head><title>Guide</title><script>var x = 'SECRET';</script></head>"
                    "<body><h1>Install</h1><p>Run <b>pip</b> install.</p><h2>Offline</h2><div>Set the "
                    "<i>cache</i> folder.<p>Then go.</p></div></body></html>")
    with open_store(page, cache) as store:
        text = ToolRunner(store).run(parse("read page.xhtml 1 20")).text
        assert "SECRET" not in text and "Run pip install." in text and "Set the cache folder." in text
        assert store.docs[0].source.locate(store.docs[0].lines) == "Install > Offline"


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_compressed_logs_are_read_and_cited_by_file(tmp_path, cache, suffix, opener):
    path = tmp_path / f"app.log.1{suffix}"
    with opener(path, "wt") as f:
        f.write("".join(f"10:{i:02d} INFO ok\n" for i in range(60)) + "10:61 ERROR disk full\n")
    with open_store(path, cache) as store:
        assert ToolRunner(store).run(parse("grep ERROR")).text.endswith(":61:10:61 ERROR disk full")
        assert store.docs[0].source.locate(61) == str(path)


def info_manual() -> bytes:
    """A GNU info manual as makeinfo writes one: node separators (US), an index whose entries are marked with NUL
    and backspace, and a tag table of byte offsets."""
    return ("This is tool.info, produced by makeinfo version 6.8 from tool.texi.\n\n"
            "\x1f\nFile: tool.info,  Node: Top,  Next: Retries,  Up: (dir)\n\nThe tool fetches files.\n\n"
            "\x1f\nFile: tool.info,  Node: Retries,  Prev: Top,  Up: Top\n\n1 Retries\n*********\n\n"
            "The default is to retry 20 times.\n\n"
            "\x1f\nFile: tool.info,  Node: Index,  Prev: Retries,  Up: Top\n\nIndex\n*****\n\n"
            "\x00\x08[index\x00\x08]\n* Menu:\n\n* retries:   Retries.   (line 6)\n\n"
            "\x1f\nTag Table:\nNode: Top\x7f70\nNode: Retries\x7f160\n\x1f\nEnd Tag Table\n").encode()


@pytest.mark.parametrize("packed", [False, True])
def test_an_info_manual_is_read_without_its_markers_and_cited_by_node(tmp_path, cache, packed):
    path = tmp_path / ("tool.info.gz" if packed else "tool.info")
    path.write_bytes(gzip.compress(info_manual()) if packed else info_manual())
    with open_store(path, cache) as store:
        tools, doc = ToolRunner(store), store.docs[0]
        hit = tools.run(parse("grep retry")).text
        assert hit.endswith("The default is to retry 20 times.")
        assert doc.source.locate(int(hit.split(":")[1])) == "Retries"
        text = tools.run(parse(f"read {doc.name} 1 {doc.lines}")).text
        assert "* retries:" in text and "\x00" not in text and "\x08" not in text and "Tag Table" not in text
    folder = tmp_path / "info"
    folder.mkdir()
    (folder / path.name).write_bytes(path.read_bytes())
    with DocumentStore.open([str(folder)], cache=cache) as store:  # in a folder it is read, not skipped as binary
        assert [d.name for d in store.docs] == [f"info/{path.name}"]


def test_zstd_and_a_pdf_inside_a_compressed_file(tmp_path, cache):
    import zstandard

    log = tmp_path / "a.log.zst"
    log.write_bytes(zstandard.ZstdCompressor().compress(b"alpha\nbeta 42\n"))
    pdf = make_pdf(tmp_path / "inner.pdf", {2: "Inner page two."}, 2)
    packed = tmp_path / "inner.pdf.gz"
    packed.write_bytes(gzip.compress(pdf.read_bytes()))
    with DocumentStore.open([str(log), str(packed)], cache=cache) as store:
        assert store.docs[0].lines == 2
        line = int(ToolRunner(store).run(parse("grep Inner inner.pdf.gz")).text.split(":")[1])
        assert store.docs[1].source.locate(line) == "page 2"


def no_half_files(cache) -> bool:
    return not list(cache.folder.glob(".converting-*")) if cache.folder.exists() else True


def test_bad_files_are_one_line_errors_that_leave_no_half_written_entry(tmp_path, cache):
    encrypted = make_pdf(tmp_path / "locked.pdf", {1: "secret"}, 1, password="pw")
    with pytest.raises(LcreadError, match="encrypted PDF: decrypt it first"):
        open_store(encrypted, cache)

    from fpdf import FPDF

    scanned = FPDF()
    scanned.add_page()
    scanned.rect(20, 20, 100, 100, style="F")  # a drawing, no text
    scanned.output(str(tmp_path / "scan.pdf"))
    with pytest.raises(LcreadError, match="no text layer .* OCR it first"):
        open_store(tmp_path / "scan.pdf", cache)

    truncated = tmp_path / "cut.log.gz"
    truncated.write_bytes(gzip.compress("".join(f"line {i}\n" for i in range(50_000)).encode())[:3000])
    with pytest.raises(LcreadError, match="is truncated"):
        open_store(truncated, cache)

    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"a" * (20 << 20)))  # 20 MB of one byte, past the 5 MB bound
    with pytest.raises(LcreadError, match="expands past 5,242,880 bytes"):
        open_store(bomb, cache)

    fake = tmp_path / "fake.docx"
    with zipfile.ZipFile(fake, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", "not xml at all <<<")
    with pytest.raises(LcreadError, match="is not a Word document"):
        open_store(fake, cache)

    archive = tmp_path / "stuff.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a.txt", "hello")
    with pytest.raises(LcreadError, match="is a zip archive"):
        open_store(archive, cache)

    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 100)
    with pytest.raises(LcreadError, match="damaged.pdf"):
        open_store(damaged, cache)
    assert no_half_files(cache) and cache.info()["entries"] == 0


def test_cache_commands(tmp_path, monkeypatch):
    monkeypatch.delenv("LCREAD_KV_DIR")  # as a user has it: the prompt states in the default cache folder
    env = {"LCREAD_CONVERT_DIR": str(tmp_path / "c" / "converted")}
    pdf = make_pdf(tmp_path / "x.pdf", {1: "The answer is on page one."}, 2)
    proc = run_cli("ask", str(pdf), "  ", env=env)
    assert proc.returncode == 2  # the question is refused (bad usage) before anything is converted
    from lcread.documents import DocumentStore as Store  # noqa: N813

    with Store.open([str(pdf)], cache=ConvertCache(tmp_path / "c" / "converted", 1 << 30, 1 << 30)):
        pass
    info = run_cli("cache", "info", env=env)
    assert "1 converted documents" in info.stdout.decode()
    home = tmp_path / "home-cache"  # the user's default cache, holding a saved prompt state
    (home / "lcread" / "kv" / "model").mkdir(parents=True)
    (home / "lcread" / "kv" / "model" / "abc.kv").write_bytes(b"state")
    env["XDG_CACHE_HOME"] = str(home)
    cleared = run_cli("cache", "clear", env=env)
    assert "removed 1 converted documents" in cleared.stdout.decode()
    # only the conversion folder was redirected: the states elsewhere are left, and the output says so
    assert (home / "lcread" / "kv" / "model" / "abc.kv").exists() and "left the saved prompt states" in cleared.stdout.decode()
    cleared = run_cli("cache", "clear", env={**env, "LCREAD_KV_DIR": str(home / "lcread" / "kv")})
    assert "1 saved prompt states" in cleared.stdout.decode()
    assert not (home / "lcread" / "kv" / "model" / "abc.kv").exists()


def test_a_conversion_larger_than_the_cache_is_refused_before_it_is_written(tmp_path):
    import gzip
    import tempfile

    path = tmp_path / "big.log.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"2026-11-30 INFO request served\n" * 100_000)  # 3.1 MB of text
    before = set(os.listdir(tempfile.gettempdir()))
    cache = ConvertCache(tmp_path / "c", max_bytes=1 << 20, max_expanded=64 << 30)
    with pytest.raises(LcreadError, match="expands past 1,048,576 bytes"):
        open_store(path, cache)
    assert not [p for p in (tmp_path / "c").iterdir() if p.name.endswith(".txt")]
    assert set(os.listdir(tempfile.gettempdir())) - before == set()


def test_a_refused_archive_leaves_no_unpacked_file_behind(tmp_path):
    import gzip
    import tempfile

    path = tmp_path / "report.pdf.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + b"\x00" * 3_000_000)
    before = set(os.listdir(tempfile.gettempdir()))
    with pytest.raises(LcreadError):
        open_store(path, ConvertCache(tmp_path / "c", max_bytes=1 << 20, max_expanded=64 << 30))
    assert not [n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("lcread-unpack-")]


def test_a_damaged_cache_entry_is_dropped_and_converted_again(tmp_path, cache):
    path = make_pdf(tmp_path / "m.pdf", {1: "The pump runs for 18 months."}, 1)
    with open_store(path, cache):
        pass
    for damage in (lambda t, m: t.write_text("42"), lambda t, m: m.write_text("[]"), lambda t, m: m.write_text("{"),
                   lambda t, m: t.write_bytes(os.urandom(64))):
        text = next(cache.folder.glob("*.txt"))
        damage(text, text.with_name(text.name.replace(".txt", ".map.json")))
        with open_store(path, cache) as store:
            assert "18 months" in store.docs[0].path.read_text()
            assert any("cached conversion was damaged" in w for w in store.warnings)


def test_a_rewritten_source_with_its_size_and_mtime_restored_is_converted_again(tmp_path, cache):
    import gzip

    path = tmp_path / "count.txt.gz"
    path.write_bytes(gzip.compress(b"the count is 42\n"))
    with open_store(path, cache) as store:
        assert "42" in store.docs[0].path.read_text()
    stat = path.stat()
    path.write_bytes(gzip.compress(b"the count is 77\n"))
    assert path.stat().st_size == stat.st_size
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with open_store(path, cache) as store:
        assert "77" in store.docs[0].path.read_text()


def test_text_that_begins_like_a_pdf_or_bzip2_is_read_as_text(tmp_path, cache):
    for name, head in (("notes.txt", "%PDF-1.7 is the version our printer needs.\n"), ("b.txt", "BZh9 is a header.\n")):
        path = tmp_path / name
        path.write_text(head + "The ferry left at 6:15.\n")
        with open_store(path, cache) as store:
            assert store.docs[0].lines == 2 and any("is text: read as text" in w for w in store.warnings)


def test_another_process_evicting_an_entry_does_not_break_a_running_reader(tmp_path, cache):
    path = make_pdf(tmp_path / "m.pdf", {1: "The pump runs for 18 months."}, 1)
    with open_store(path, cache) as store:
        cache.clear()  # what another process's eviction does
        assert "18 months" in ToolRunner(store).run(parse("grep months")).text
    assert not list(cache.folder.glob(".reading-*"))  # the run's own link went with it
