"""Reliability round 4: the crashes real questions hit, and the classes of the adversarial probe."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import lcread
from lcread.documents import DocumentStore
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner, parse

WORDS = ["crate", "crates", "tally", "customs", "house", "unclaimed", "harbour", "the", "of", "was", "kept", "at",
         "Dunmere", "recent", "most", "12", "40", "ledger"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.lists(st.sampled_from(WORDS + ["lorem ipsum dolor sit amet " * 30]), min_size=1,
                               max_size=200).map(" ".join), min_size=1, max_size=30),
       repeat=st.integers(1, 4),
       query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join))
def test_ranked_search_of_any_document_and_query_never_fails(tmp_path_factory, lines, repeat, query):
    """Equal scores (the windows of one long line repeating itself) never leave the ranking to compare passages."""
    path = tmp_path_factory.mktemp("doc") / "doc.txt"
    path.write_text("\n".join(lines * repeat) + "\n")
    out = ToolRunner(DocumentStore.open([str(path)])).run(parse(f"search {query}"))
    assert out.text and all(line.startswith(("[", " ", "  ")) or line for line in out.text.splitlines())
    assert out.error or out.shown  # passages, or a message saying none matched


def test_windows_of_one_long_line_that_score_alike_are_all_ranked(write):
    filler = "lorem ipsum dolor sit amet " * 30  # more than two windows apart: each match its own window
    line = "".join([filler + "the most recent tally of unclaimed crates kept by the customs house at Dunmere "] * 20)
    doc = write("log.txt", "header\n" + line + "\n" + line + "\n")
    out = ToolRunner(DocumentStore.open([str(doc)])).run(
        parse("search most recent tally of unclaimed crates customs house Dunmere"))
    assert not out.error and "log.txt:2" in out.text


HOSTILE_ANSWERS = ["--log-file=<path>", "-o pipefail", "--quiet-mode", "-x nowhere", "--regexp", "-e", "--", "-", "-i -F", "--regexp=x", "'", '"',
                   "a\nb", "line one\n--two", "$(rm -rf /)", "x | y", "-C 5", "\\", "--from 3"]


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS)
def test_no_answer_text_makes_ask_raise(write, answer):
    doc = write("manual.txt", "".join(f"Option {i} sets the level of detail.\n" for i in range(40))
                + "Use --log-file=<path> to write the log to a file; set -o pipefail in scripts.\n")
    model = ScriptedModel([f"answer {answer!r}"] * 12 + ['answer "none"'] * 12)
    for question in ("Which option writes the log to a file?", "What does --quiet-mode do?", "How many options?"):
        result = lcread.ask(str(doc), question, model=model, first_step=True)  # never raises
        assert result.answer is None and not result.verified or isinstance(result.answer, str) and result.answer


# --- confinement that holds at the moment of the read (MCP and the CLI's stores) -----------------------------------

CANARY = "CANARY-91c2-outside-the-root"


def _flipper(path, outside, stop):
    """Swap a file for a link to an outside file and back, as fast as it goes, until told to stop."""
    import os

    inside = path.with_name(path.name + ".real")
    os.link(path, inside)
    while not stop.is_set():
        tmp = path.with_name(path.name + ".tmp")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(outside)
        os.replace(tmp, path)
        tmp.unlink(missing_ok=True)
        os.link(inside, tmp)
        os.replace(tmp, path)


@pytest.mark.parametrize("reads", ["store", "mcp"])
def test_a_file_flipped_to_a_link_outside_is_never_read(tmp_path, reads):
    import threading

    root = tmp_path / "docs"
    root.mkdir()
    doc = root / "a.txt"
    doc.write_text("".join(f"harbour line {i}\n" for i in range(50)))
    (tmp_path / "secret.txt").write_text("".join(f"{CANARY} harbour line {i}\n" for i in range(50)))
    stop = threading.Event()
    texts = []
    if reads == "store":
        runner = ToolRunner(DocumentStore.open([str(root)]))
        do = [lambda: runner.run(parse("read docs/a.txt 1 5")).text, lambda: runner.run(parse("grep harbour")).text,
              lambda: runner.run(parse("search harbour line")).text]
    else:
        pytest.importorskip("mcp")
        from test_mcp import call, text
        from lcread.mcpserver import build_server

        server = build_server([str(root)], model=ScriptedModel([]))
        do = [lambda: text(call(server, "read", {"path": "a.txt", "start": 1, "end": 5})),
              lambda: text(call(server, "grep", {"inputs": ["a.txt"], "pattern": "harbour"}))]
    flipper = threading.Thread(target=_flipper, args=(doc, tmp_path / "secret.txt", stop))
    flipper.start()
    try:
        for i in range(60 if reads == "store" else 24):
            texts.append(do[i % len(do)]())
    finally:
        stop.set()
        flipper.join()
    assert not any(CANARY in t for t in texts)


def test_mcp_names_nothing_outside_and_answers_the_same_whether_it_exists_or_not(tmp_path):
    pytest.importorskip("mcp")
    from test_mcp import call, text
    from lcread.mcpserver import build_server

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("harbour\n")
    (tmp_path / "real-secret.txt").write_text("x\n")
    server = build_server([str(root)], model=ScriptedModel([]))
    there = text(call(server, "read", {"path": str(tmp_path / "real-secret.txt")}))
    nowhere = text(call(server, "read", {"path": str(tmp_path / "no-such-secret.txt")}))
    assert there == nowhere and "secret" not in there


@pytest.mark.parametrize("arguments, says", [
    ({"model": "local:/etc/passwd"}, "the server's choice"), ({"model": ""}, "model is empty"),
    ({"model": "   "}, "model is empty"), ({"question": "   "}, "the question is empty"),
    ({"question": "x" * 30_000}, "ask in at most")])
def test_mcp_ask_refuses_what_a_client_must_not_choose_in_one_line(tmp_path, arguments, says):
    pytest.importorskip("mcp")
    from test_mcp import call, text
    from lcread.mcpserver import build_server

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("harbour\n")
    server = build_server([str(root)], model=ScriptedModel([]))
    result = call(server, "ask", {"inputs": ["a.txt"], "question": "Where?", **arguments})
    message = text(result)
    assert result.is_error and says in message and "passwd" not in message and "\n" not in message


@pytest.mark.parametrize("tool, arguments", [
    ("read", {"path": "a.txt", "start": -3}), ("read", {"path": "a.txt", "start": 5, "end": 2}),
    ("read", {"path": "a.txt", "from_char": -1}), ("grep", {"inputs": ["a.txt"], "pattern": "("}),
    ("grep", {"inputs": ["a.txt"], "pattern": ""}), ("search", {"inputs": ["a.txt"], "words": "  "})])
def test_mcp_reading_tools_refuse_bad_arguments_as_tool_errors(tmp_path, tool, arguments):
    pytest.importorskip("mcp")
    from test_mcp import call, text
    from lcread.mcpserver import build_server

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("harbour\n" * 10)
    result = call(build_server([str(root)], model=ScriptedModel([])), tool, arguments)
    assert result.is_error and "\n" not in text(result).strip()


# --- batch: a task file is never written to, a full disk is one line, bounds before the work -----------------------

def _tasks(write, question="Where?"):
    import json

    doc = write("d.txt", "harbour\n")
    return write("tasks.jsonl", json.dumps({"id": "a", "documents": [str(doc)], "question": question}) + "\n")


@pytest.mark.parametrize("resume", [False, True])
def test_a_batch_never_writes_into_its_task_file(write, tmp_path, resume):
    import os

    from conftest import run_cli

    tasks = _tasks(write)
    before = tasks.read_bytes()
    os.link(tasks, tmp_path / "same.jsonl")
    for out in (tasks, tmp_path / "same.jsonl"):
        proc = run_cli("batch", str(tasks), "--out", str(out), *(["--resume"] if resume else []), timeout=60)
        assert proc.returncode == 1 and b"is the task file" in proc.stderr and tasks.read_bytes() == before


def test_a_batch_out_that_is_a_pipe_is_refused_at_once(write, tmp_path):
    import os

    from conftest import run_cli

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    proc = run_cli("batch", str(_tasks(write)), "--out", str(fifo), timeout=30)
    assert proc.returncode == 1 and b"not a regular file" in proc.stderr


def test_a_full_disk_mid_batch_is_one_line_and_keeps_the_exit_status(write):
    from conftest import run_cli

    proc = run_cli("batch", str(_tasks(write)), "--out", "/dev/full", "--model", "openai/nowhere",
                   "--api-base", "http://127.0.0.1:9/v1", "-q", env={"OPENAI_API_KEY": "x", "LCREAD_RETRIES": "0"},
                   timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "no space left on device" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("lcread: error")]) == 1


def test_a_question_over_the_bound_is_refused_before_any_work(write):
    from lcread.errors import LcreadError

    big = "Where is the harbour? " * 2000
    with pytest.raises(LcreadError, match="ask in at most 20,000"):
        lcread.ask(str(write("d.txt", "harbour\n")), big, model=ScriptedModel([]))
    from lcread.batch import load_tasks

    with pytest.raises(LcreadError, match="tasks.jsonl:1: question: .* ask in at most 20,000"):
        load_tasks(_tasks(write, big))


# --- a hostile server: bounded, one line, the documented status --------------------------------------------------

REPORT = "intro line\nThe Marlow Street hospital reported 12,310 beds in its last survey.\n"
BEDS = "How many beds did the Marlow Street hospital report?"


def _ask_server(write, steps, *extra, default=None, env=None, timeout=90):
    import json as _json
    import time

    from conftest import run_cli
    from fault_server import FaultServer

    doc = write("report.txt", REPORT)
    with FaultServer(steps, default=default) as server:
        started = time.monotonic()
        proc = run_cli("ask", str(doc), BEDS, "--model", "openai/fake", "--api-base", server.base, "--json", *extra,
                       env={"OPENAI_API_KEY": "sk-test", **(env or {})}, timeout=timeout)
        took = time.monotonic() - started
    out = proc.stdout.decode().strip().splitlines()
    return proc, _json.loads(out[-1]) if out else None, took


def _one_line(proc):
    err = proc.stderr.decode()
    assert "Traceback" not in err and "MarkupError" not in err, err[-800:]
    assert len([ln for ln in err.splitlines() if ln.startswith("lcread: error")]) <= 1, err[-800:]


def test_a_huge_error_body_is_cut_and_the_run_ends_in_its_time(write):
    from fault_server import Step

    steps = [Step(status=500, body="x" * 50_000_000)]
    proc, out, took = _ask_server(write, steps, "--max-seconds", "20", default=Step(status=500, body="y" * 1000),
                                  env={"LCREAD_RETRIES": "1"}, timeout=120)
    _one_line(proc)
    assert took < 40 and proc.returncode in (3, 5) and out is not None


def test_a_retry_after_far_in_the_future_is_bounded_by_the_run_s_time_limit(write):
    from fault_server import Step, error_body

    date = "Wed, 21 Oct 2099 07:28:00 GMT"
    steps = [Step(status=429, body=error_body(429, "busy"), headers={"Retry-After": date})] * 8
    proc, out, took = _ask_server(write, steps, "--max-seconds", "5", timeout=120)
    _one_line(proc)
    assert took < 30 and proc.returncode == 3 and out["stop_reason"].startswith("time limit")


def test_a_retry_after_beyond_the_time_left_is_the_time_limit_not_a_model_error(write):
    from fault_server import Step, error_body

    steps = [Step(status=429, body=error_body(429, "busy"), headers={"Retry-After": "50"})] * 4
    proc, out, took = _ask_server(write, steps, "--max-seconds", "4", timeout=120)
    _one_line(proc)
    assert proc.returncode == 3 and out["stop_reason"].startswith("time limit") and took < 30


def test_a_megabyte_answer_from_the_model_ends_in_time(write):
    from fault_server import Step

    steps = [Step(text='answer "' + "12,310 beds " * 90_000 + '"')]
    proc, out, took = _ask_server(write, steps, "--max-seconds", "20", default=Step(text='answer "12,310"'),
                                  timeout=120)
    _one_line(proc)
    assert took < 45 and out is not None


@pytest.mark.parametrize("body", [
    '{"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": [{"index": 0, '
    '"message": null, "finish_reason": "stop"}]}',
    '{"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": [{"index": 0, '
    '"message": {"role": "assistant", "content": "answer \\"12,310\\""}, "finish_reason": "stop"}], '
    '"usage": {"prompt_tokens": "fifty", "completion_tokens": "5", "total_tokens": "x"}}'])
def test_odd_replies_are_one_line_never_a_traceback(write, body):
    from fault_server import Step

    proc, out, _ = _ask_server(write, [Step(body=body)], env={"LCREAD_RETRIES": "1"},
                               default=Step(text='answer "12,310"'))
    _one_line(proc)
    assert out is not None and isinstance(out.get("total_tokens", 0), int)


def test_a_server_error_holding_markup_is_shown_as_text(write):
    from fault_server import Step, error_body

    steps = [Step(status=400, body=error_body(400, "bad [/bold] request [red]x[/red]"))]
    proc, out, _ = _ask_server(write, steps)
    _one_line(proc)
    assert proc.returncode == 5 and "[/bold]" in proc.stderr.decode()


# --- the library checks its arguments up front ----------------------------------------------------------------------

class _Minimal:
    def query(self, *a, **k):
        raise AssertionError("never called")


@pytest.mark.parametrize("call, says", [
    (lambda d: lcread.ask(1, "Where?", model=ScriptedModel([])), "inputs must be a path"),
    (lambda d: lcread.ask(d, 1, model=ScriptedModel([])), "question must be text"),
    (lambda d: lcread.ask(d, "Where?", model=_Minimal()), "has no name, context_window"),
    (lambda d: lcread.ask(d, "Which? A) x B) y", model=ScriptedModel([]), options=[1, 2]), "options must be a list"),
    (lambda d: lcread.ask(d, "Which?", model=ScriptedModel([]), options="A) x"), "options must be a list"),
    (lambda d: lcread.api.ask_with(d, "Where?", ScriptedModel([]), None), "settings must be built"),
    (lambda d: lcread.api.ask_with(d, "Where?", ScriptedModel([]), {"max_steps": 3}), "settings must be built"),
    (lambda d: lcread.api.ask_with(d, "Where?", "local", lcread.api.settings_from("select", None, {})),
     "for a model string use"),
    (lambda d: lcread.api.ask_with(d, "Where?", _Minimal(), lcread.api.settings_from("select", None, {})),
     "has no name"),
])
def test_library_arguments_are_one_line_errors_up_front(write, call, says):
    from lcread.errors import LcreadError

    doc = str(write("d.txt", "harbour\n"))
    with pytest.raises(LcreadError) as e:
        call(doc)
    assert says in str(e.value) and "\n" not in str(e.value)


# --- the conversion cache: leftovers swept, an index that points elsewhere, a changed middle, an unwritable folder

def _gz(write, name, text):
    import gzip

    return write(name, gzip.compress(text.encode()))


def test_a_killed_conversion_s_leftover_is_counted_then_swept(tmp_path, monkeypatch, write):
    from lcread.documents import DocumentStore, default_cache

    monkeypatch.setenv("LCREAD_CONVERT_DIR", str(tmp_path / "conv"))
    DocumentStore.open([str(_gz(write, "a.txt.gz", "harbour\n" * 10))]).close()
    left = tmp_path / "conv" / ".converting-999999-abc.txt"  # no such process
    left.write_bytes(b"x" * 1000)
    assert default_cache().info()["leftovers"] == 1 and default_cache().info()["leftover_bytes"] == 1000
    DocumentStore.open([str(_gz(write, "b.txt.gz", "ferry\n" * 10))]).close()  # a conversion sweeps them
    assert not left.exists()


def test_an_index_pointed_at_another_entry_serves_the_right_text(tmp_path, monkeypatch, write):
    import json as _json

    from lcread.documents import DocumentStore

    monkeypatch.setenv("LCREAD_CONVERT_DIR", str(tmp_path / "conv"))
    a, b = _gz(write, "a.txt.gz", "alpha harbour\n" * 10), _gz(write, "b.txt.gz", "beta ferry\n" * 10)
    for p in (a, b):
        DocumentStore.open([str(p)]).close()
    index_file = tmp_path / "conv" / "index.json"
    index = _json.loads(index_file.read_text())
    keys = list(index.values())
    index = {stamp: keys[1] for stamp in index}  # every file now said to be b's entry
    index_file.write_text(_json.dumps(index))
    with DocumentStore.open([str(a)]) as store:
        assert "alpha harbour" in next(store.docs[0].read_lines(1, 1)).text


def test_a_cached_text_changed_in_its_middle_is_converted_again(tmp_path, monkeypatch, write):
    from lcread.documents import DocumentStore

    monkeypatch.setenv("LCREAD_CONVERT_DIR", str(tmp_path / "conv"))
    source = _gz(write, "a.txt.gz", "".join(f"line {i} harbour\n" for i in range(200_000)))
    DocumentStore.open([str(source)]).close()
    text = next(p for p in (tmp_path / "conv").glob("*.txt") if not p.name.startswith("."))
    data = bytearray(text.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 7] = b"FORGED!"
    text.write_bytes(bytes(data))  # the same size, the same first and last 64 KB
    with DocumentStore.open([str(source)]) as store:
        assert any("converted again" in w for w in store.warnings)
        assert not any("FORGED" in line.text for line in store.docs[0].read_lines(1, store.docs[0].lines))


@pytest.mark.parametrize("how", ["read-only", "a file"])
def test_an_unwritable_conversion_cache_is_one_line_saying_what_to_do(tmp_path, write, how):
    import os

    from conftest import run_cli, unprivileged

    folder = tmp_path / "conv"
    if how == "read-only":
        folder.mkdir()
        os.chmod(folder, 0o555)
    else:
        folder.write_text("x")
    gz = _gz(write, "a.txt.gz", "harbour\n" * 10)
    import subprocess
    import sys

    proc = subprocess.run(unprivileged([sys.executable, "-m", "lcread", "ask", str(gz), "Where?", "--model",
                                        "openai/x", "--api-base", "http://127.0.0.1:9/v1"]),
                          capture_output=True, env={**os.environ, "LCREAD_CONVERT_DIR": str(folder)}, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "LCREAD_CONVERT_DIR" in err and "Traceback" not in err and "OSError" not in err


def test_unique_names_of_fifty_thousand_colliding_inputs_take_linear_time():
    import time

    from lcread.documents import _unique_names

    started = time.monotonic()
    names = _unique_names(["index.html"] * 50_000)
    assert len(set(names)) == 50_000 and names[:3] == ["index.html", "index-2.html", "index-3.html"]
    assert time.monotonic() - started < 2


def test_names_that_are_not_utf8_or_hold_escapes_are_inert(tmp_path):
    import json as _json
    import os

    from lcread.documents import DocumentStore

    folder = tmp_path / "docs"
    folder.mkdir()
    raw = os.fsencode(str(folder)) + b"/caf\xe9\x1b]0;title\x07.txt"
    with open(raw, "wb") as f:
        f.write(b"harbour\n")
    with DocumentStore.open([str(folder)]) as store:
        name = store.docs[0].name
        _json.dumps({"content": store.listing()}).encode("utf-8")  # a request to a remote model can be built
        assert "\x1b" not in name and "\x07" not in name and "?" in name
        assert "harbour" in ToolRunner(store).run(parse(f"read {name} 1 1")).text


def test_cache_info_shows_a_folder_s_escape_sequences_as_text(tmp_path):
    from conftest import run_cli

    folder = tmp_path / "c\x1b]0;owned\x07\u202eevil"
    folder.mkdir()
    proc = run_cli("cache", "info", env={"LCREAD_CONVERT_DIR": str(folder)}, timeout=60)
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\\x1b" in out


# --- the word index under stress ------------------------------------------------------------------------------------

def _big_log(tmp_path, n=20_000):
    path = tmp_path / "big.log"
    path.write_text("".join(f"2026-01-01 worker {i % 7} served request {i} ok\n" for i in range(n)))
    return path


def test_two_builds_of_one_index_at_once_both_succeed(tmp_path, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("LCREAD_INDEX_DIR", str(tmp_path / "index"))
    path = _big_log(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-m", "lcread", "index", str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]


@pytest.mark.parametrize("how", ["read-only", "a file"])
def test_an_unwritable_index_folder_means_searching_without_an_index(tmp_path, monkeypatch, how):
    import os

    from lcread.tools import wordindex

    root = tmp_path / "index"
    if how == "read-only":
        root.mkdir()
        os.chmod(root, 0o555)
    else:
        root.write_text("x")
    monkeypatch.setenv("LCREAD_INDEX_DIR", str(root))
    monkeypatch.setenv("LCREAD_INDEX_BYTES", "1000")
    path = _big_log(tmp_path)
    out = ToolRunner(DocumentStore.open([str(path)])).run(parse("search which worker served request 12345"))
    assert not out.error and "request 12345" in out.text
    assert wordindex.start_build(path) is False or how == "read-only" and os.geteuid() == 0


def test_a_same_size_rewrite_with_its_time_set_back_is_not_searched_through_the_old_index(tmp_path, monkeypatch):
    import os

    from lcread.tools import wordindex

    monkeypatch.setenv("LCREAD_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("LCREAD_INDEX_BYTES", "1000")
    path = _big_log(tmp_path)
    wordindex.build(path)
    st = os.stat(path)
    data = path.read_bytes().replace(b"served request 4242 ok", b"served request QQQQ ok")
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert wordindex.open_index(path) is None  # the old index is not this file's
    out = ToolRunner(DocumentStore.open([str(path)])).run(parse("search which worker served request QQQQ"))
    assert "request QQQQ" in out.text


def test_cache_clear_clears_every_redirected_folder(tmp_path, monkeypatch):
    from conftest import run_cli
    from lcread.tools import wordindex

    env = {"LCREAD_CONVERT_DIR": str(tmp_path / "conv"), "LCREAD_INDEX_DIR": str(tmp_path / "index")}
    monkeypatch.setenv("LCREAD_INDEX_DIR", env["LCREAD_INDEX_DIR"])
    wordindex.build(_big_log(tmp_path))
    assert wordindex.entries()
    out = run_cli("cache", "clear", env=env, timeout=60).stdout.decode()
    assert not wordindex.entries() and "1 word indexes" in out


# --- the prompt-state cache's own I/O: drop the entry or go without saving, with one line, and go on ---------------

class _FakeCpp:
    """The two llama.cpp calls the prompt cache makes, writing and reading a small file."""

    import ctypes as _ct

    llama_token = _ct.c_int32

    @staticmethod
    def llama_state_seq_save_file(ctx, path, seq, array, n):
        open(path.decode(), "wb").write(b"state" * 10)
        return True

    @staticmethod
    def llama_state_seq_load_file(ctx, path, seq, array, n, count):
        raise AssertionError("a damaged entry must never reach llama.cpp")


def _cache(tmp_path, folder):
    from lcread.models.promptcache import PromptCache

    model = tmp_path / "m.gguf"
    model.write_bytes(b"gguf")
    return PromptCache(folder, model)


@pytest.mark.parametrize("how", ["a file in its place", "under a file"])
def test_a_prompt_cache_that_cannot_be_written_is_one_warning_and_no_saving(tmp_path, capsys, how):
    folder = tmp_path / "kv"
    folder.write_text("x")
    cache = _cache(tmp_path, folder if how == "a file in its place" else folder / "deeper")
    cache.save(None, _FakeCpp, [1, 2, 3])
    cache.save(None, _FakeCpp, [1, 2, 3, 4])
    err = capsys.readouterr().err
    assert err.count("lcread: warning: the prompt cache") == 1 and cache.longest([1, 2, 3]) == (None, 0)


@pytest.mark.parametrize("damage", ["kv-folder", "empty-npy", "two-d-npy", "text-npy"])
def test_a_damaged_prompt_state_is_dropped_never_loaded(tmp_path, damage):
    import numpy as np

    cache = _cache(tmp_path, tmp_path / "kv")
    cache.save(None, _FakeCpp, [5, 6, 7, 8])
    key = next(iter(cache._tokens))
    cache._tokens.clear()
    cache._seen_mtime = -1
    if damage == "kv-folder":
        (cache.folder / f"{key}.kv").unlink()
        (cache.folder / f"{key}.kv").mkdir()
    elif damage == "empty-npy":
        (cache.folder / f"{key}.npy").write_bytes(b"")
    elif damage == "two-d-npy":
        np.save(cache.folder / f"{key}.npy", np.array([[5, 6], [7, 8]], dtype=np.int32))
    else:
        (cache.folder / f"{key}.npy").write_text("not an array")
    best, length = cache.longest([5, 6, 7, 8, 9])
    assert cache.load(None, _FakeCpp, best) is None if best else length == 0


def test_an_mcp_stdio_server_whose_client_goes_away_mid_ask_exits(tmp_path):
    pytest.importorskip("mcp")
    import json as _json
    import subprocess
    import sys
    import time

    from fault_server import FaultServer, Step

    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text("harbour\n" * 50)
    with FaultServer([], default=Step(delay=120)) as server:
        proc = subprocess.Popen([sys.executable, "-m", "lcread", "mcp", "--root", str(root), "--model", "openai/fake",
                                 "--api-base", server.base], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env={**__import__("os").environ, "OPENAI_API_KEY": "x"})
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "ask", "arguments": {"inputs": ["a.txt"], "question": "Where is the harbour?"}}}]
        for m in messages:
            proc.stdin.write((_json.dumps(m) + "\n").encode())
            proc.stdin.flush()
        assert proc.stdout.readline()  # the initialize reply: the server is up
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:  # the ask's model call is in flight
            time.sleep(0.1)
        proc.stdin.close()
        closed = time.monotonic()
        proc.wait(timeout=60)
    assert time.monotonic() - closed < 15


def test_html_past_the_markup_bound_is_refused_not_read_as_markup(write, monkeypatch):
    from lcread.convert import formats
    from lcread.documents import DocumentStore
    from lcread.errors import LcreadError

    monkeypatch.setattr(formats, "MAX_MARKUP", 10_000)
    page = write("big.html", "<html><body>" + "<p>harbour</p>" * 2_000 + "</body></html>")
    with pytest.raises(LcreadError, match="too large to convert"):
        DocumentStore.open([str(page)])


def test_a_path_that_looks_like_markup_is_converted_and_named_as_it_is(tmp_path):
    import gzip

    from conftest import run_cli

    folder = tmp_path / "a[" / "b]"
    folder.mkdir(parents=True)
    path = tmp_path / "a[/b].gz"
    path.write_bytes(gzip.compress(b"".join(b"line %d of the harbour log\n" % i for i in range(400_000))))
    proc = run_cli("ask", str(path), "Where?", "--model", "openai/x", "--api-base", "http://127.0.0.1:9/v1",
                   env={"OPENAI_API_KEY": "x", "LCREAD_RETRIES": "0"}, timeout=120)
    err = proc.stderr.decode()
    assert "closing tag" not in err and "MarkupError" not in err and proc.returncode == 5, err[-400:]


def test_a_trace_on_a_full_disk_is_one_line(write):
    from conftest import run_cli

    proc = run_cli("ask", str(write("d.txt", "harbour\n")), "Where?", "--trace", "/dev/full", "--model", "openai/x",
                   "--api-base", "http://127.0.0.1:9/v1", env={"OPENAI_API_KEY": "x"}, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "cannot write the trace" in err and "Traceback" not in err


def test_a_document_removed_before_lcread_s_own_search_is_an_error_result_not_a_crash(write):
    doc = write("gone.txt", "".join(f"harbour line {i}\n" for i in range(3000)))
    runner = ToolRunner(DocumentStore.open([str(doc)]))
    doc.unlink()
    found = runner.ranked("harbour line")
    assert found.text.startswith("error:") and not found.shown
