"""Bad and unusual inputs: each gets a one-line error or is read correctly; nothing hangs or leaks."""

import codecs
import os
import socket
import subprocess
import sys
import threading

import pytest

from conftest import run_cli, unprivileged
from lcread.documents import DocumentStore
from lcread.errors import LcreadError
from lcread.tools import ToolRunner, parse


def test_a_link_inside_a_folder_is_not_followed_out_of_it(tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0 CANARY\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("hello\n")
    (docs / "link.txt").symlink_to(secret)
    (docs / "linkdir").symlink_to(secret.parent)
    with DocumentStore.open([str(docs)]) as store:
        assert [d.name for d in store.docs] == ["docs/a.txt"]
        assert "skipped 2 links" in store.warnings[0]
        tools = ToolRunner(store)
        assert "root:x" not in tools.run(parse("grep -r CANARY")).text
        assert tools.run(parse("read docs/link.txt 1 1")).error
    with DocumentStore.open([str(docs / "link.txt")]) as store:  # named by the user: read
        assert store.docs[0].lines == 1


def test_unreadable_files_in_a_folder_are_reported(tmp_path):
    docs = tmp_path / "d"
    docs.mkdir()
    (docs / "ok.txt").write_text("fine\n")
    bad = docs / "no.txt"
    bad.write_text("x\n")
    bad.chmod(0)
    script = "from lcread.documents import DocumentStore as S; import sys; print(S.open(sys.argv[1:]).warnings)"
    cmd = unprivileged([sys.executable, "-c", script, str(docs)])
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    finally:
        bad.chmod(0o600)
    assert out.returncode == 0, out.stderr
    assert "skipped 1 unreadable" in out.stdout and "no.txt" in out.stdout


def test_a_named_pipe_without_a_writer_is_an_error_not_a_hang(tmp_path, monkeypatch):
    import lcread.documents

    monkeypatch.setattr(lcread.documents, "PIPE_WAIT", 0.2)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(LcreadError, match="is a pipe nobody wrote to"):
        DocumentStore.open([str(fifo)])


def test_a_named_pipe_with_a_writer_is_spooled_and_removed_after(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "w") as f:
            f.write("first\nThe answer is 42.\n")

    thread = threading.Thread(target=writer)
    thread.start()
    store = DocumentStore.open([str(fifo)])
    thread.join()
    spool = store.docs[0].path
    assert spool != fifo and store.docs[0].lines == 2
    store.close()
    assert not spool.exists()


def test_process_substitution_is_read(tmp_path):
    script = f"{sys.executable} -c \"import sys; from lcread.documents import DocumentStore as S; " \
             "s=S.open(sys.argv[1:]); print(s.docs[0].lines); s.close()\""
    out = subprocess.run(["bash", "-c", f"{script} <(printf 'a\\nb\\nc\\n')"], capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "3", out.stderr


def test_devices_and_sockets_are_refused(tmp_path):
    with pytest.raises(LcreadError, match="is a device, not a file"):
        DocumentStore.open(["/dev/zero"])
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(LcreadError, match="is a socket"):
            DocumentStore.open([str(path)])
    finally:
        server.close()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_text_with_a_byte_order_mark_is_read(write, encoding):
    text = "première ligne\nla réponse est 42\n"
    data = text.encode(encoding)
    if not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE)):
        data = codecs.BOM_UTF16_BE + data
    with DocumentStore.open([str(write("u.txt", data))]) as store:
        tools = ToolRunner(store)
        assert tools.run(parse("grep réponse")).text.endswith(":2:la réponse est 42")
        assert "read as UTF-" in store.warnings[0]


def test_lone_cr_line_ends_are_lines(write):
    with DocumentStore.open([str(write("mac.txt", b"one\rtwo\rthree 42\r"))]) as store:
        assert store.docs[0].lines == 3
        assert ToolRunner(store).run(parse("grep 42")).text.endswith(":3:three 42")


def test_a_file_that_shrinks_while_read_does_not_crash(write):
    path = write("g.txt", "".join(f"line {i}\n" for i in range(1000)))
    with DocumentStore.open([str(path)]) as store:
        path.write_text("short\n")
        out = ToolRunner(store).run(parse("read g.txt 500 510"))
        assert not out.text.startswith("Traceback")


def test_a_long_document_list_is_summarised_and_paged(tmp_path):
    docs = tmp_path / "many"
    for i in range(500):
        sub = docs / f"pkg{i % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"m{i}.py").write_text(f"VALUE_{i} = {i}\n" * (1 + i % 5))
    with DocumentStore.open([str(docs)]) as store:
        listing = store.listing()
        assert len(listing.splitlines()) < 20 and "500 documents" in listing and "ls PAGE (1 to 3)" in listing
        page = ToolRunner(store).run(parse("ls 3")).text
        assert page.startswith("documents 401-500 of 500") and len(page.splitlines()) == 101


def test_bad_inputs_are_one_line_errors_with_an_exit_status(tmp_path, write):
    doc = write("a.txt", "hello\n")
    cases = [
        (["ask", str(tmp_path / "nope*.txt"), "q"], "a pattern that matched nothing"),
        (["ask", str(doc), "   "], "the question is empty"),
        (["ask", str(doc), "q", "--read-chars", "0"], "--read-chars"),
        (["ask", str(doc), "q", "--read-chars", "9000"], "--read-chars"),
        (["ask", str(doc), "q", "--max-tokens", "abc"], "--max-tokens"),
        (["ask", str(doc), "q", "--max-steps", "0"], "--max-steps"),
        (["ask", str(doc), "q", "--compact-at", "20000"], "--compact-at"),
        (["ask", "/dev/zero", "q"], "is a device"),
    ]
    for args, message in cases:
        proc = run_cli(*args, env={"LCREAD_MODEL": "local:/nonexistent.gguf"}, timeout=60)
        err = proc.stderr.decode()
        assert proc.returncode in (1, 2) and message in err and "Traceback" not in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
