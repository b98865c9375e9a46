import json
import threading

import pytest

from lcread.batch import BatchTask, ResultWriter, completed_ids, load_tasks, run_batch
from lcread.errors import LcreadError
from lcread.models.scripted import ScriptedModel
from lcread.run import Settings
from lcread.trace import MemoryTrace


def tasks_file(tmp_path, rows):
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("rows, message", [
    (["{not json"], "tasks.jsonl:1"),
    ([{"id": "a", "question": "q"}], "tasks.jsonl:1: documents: Field required"),
    ([{"id": "a", "documents": ["d"], "question": "q"}, {"id": "a", "documents": ["d"], "question": "q"}],
     "task id 'a' appears twice"),
    ([{"id": "a", "documents": ["d"], "question": "q", "colour": "red"}], "colour: Extra inputs"),
    ([], "holds no tasks"),
])
def test_bad_task_files_are_refused_before_anything_runs(tmp_path, rows, message):
    with pytest.raises(LcreadError, match=message):
        load_tasks(tasks_file(tmp_path, rows))


def test_completed_ids_drops_a_line_cut_by_a_kill(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "a", "answer": "1"}\n{"id": "b", "answer": "2"}\n{"id": "c", "ans')
    assert completed_ids(out) == {"a", "b"}
    assert out.read_text().endswith('"2"}\n')  # appending after this stays valid JSONL
    assert completed_ids(tmp_path / "none.jsonl") == set()


def test_a_failing_task_is_recorded_and_the_batch_goes_on(tmp_path, write):
    doc = write("d.txt", "The vault code is 7261.\nfiller\n")
    tasks = [BatchTask(id="ok", documents=[str(doc)], question="What is the vault code?", expected="7261"),
             BatchTask(id="missing", documents=[str(tmp_path / "gone.txt")], question="q"),
             BatchTask(id="wrong", documents=[str(doc)], question="What is the vault code?", expected="9999")]
    outputs = ['grep -i "vault code"', 'answer "7261"', 'grep -i "vault code"', 'answer "7261"']
    model = ScriptedModel(outputs)
    out = tmp_path / "out.jsonl"
    writer, seen = ResultWriter(out), []
    rows = run_batch(tasks, writer, lambda name: model, Settings(), MemoryTrace(), 1, seen.append)
    writer.close()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in lines] == [r["id"] for r in rows] == [r["id"] for r in seen]
    by_id = {r["id"]: r for r in lines}
    assert by_id["ok"]["answer"] == "7261" and by_id["ok"]["correct"] is True and by_id["ok"]["error"] is None
    assert by_id["ok"]["total_tokens"] > 0 and by_id["ok"]["steps"] == 2
    assert by_id["missing"]["answer"] is None and "no such file or folder" in by_id["missing"]["error"]
    assert by_id["wrong"]["correct"] is False


def test_remote_style_models_run_tasks_concurrently(tmp_path, write):
    doc = write("d.txt", "The vault code is 7261.\n")
    inside, peak, lock = [0], [0], threading.Lock()
    gate = threading.Barrier(3, timeout=10)

    def slow(messages):
        with lock:
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
        if messages[-1]["content"].startswith("Question"):
            gate.wait()  # all three first calls must be in flight together
        with lock:
            inside[0] -= 1
        return 'grep vault' if messages[-1]["content"].startswith("Question") else 'answer "7261"'

    model = ScriptedModel([slow] * 6)
    tasks = [BatchTask(id=str(i), documents=[str(doc)], question="What is the vault code?") for i in range(3)]
    writer = ResultWriter(tmp_path / "out.jsonl")
    rows = run_batch(tasks, writer, lambda name: model, Settings(), MemoryTrace(), 3, lambda row: None)
    writer.close()
    assert peak[0] == 3 and sorted(r["answer"] for r in rows) == ["7261"] * 3


def test_ctrl_c_stops_a_concurrent_batch_keeping_what_finished(tmp_path, write):
    import signal
    import time

    doc = write("d.txt", "".join(f"line {i} of the ledger\n" for i in range(3000)) + "The vault code is 7261.\n")
    calls = []

    def brain(messages):
        calls.append(time.monotonic())
        if len(calls) == 1:  # Ctrl-C a second after the first call: the quick tasks have answered by then
            threading.Timer(1.0, signal.raise_signal, (signal.SIGINT,)).start()
        time.sleep(0.2)
        question = messages[1]["content"]
        return 'answer "7261"' if "quick" in question else 'grep -i "ledger line"'

    model = ScriptedModel([brain] * 400)
    tasks = [BatchTask(id=f"t{i}", documents=[str(doc)], question=f"What is the {'quick ' if i < 2 else ''}vault "
                       "code?") for i in range(8)]
    out = tmp_path / "out.jsonl"
    writer = ResultWriter(out)
    started = time.monotonic()
    # Python's own Ctrl-C handler, whatever the runner inherited (a job started in the background ignores SIGINT)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_batch(tasks, writer, lambda name: model, Settings(), MemoryTrace(), 2, lambda row: None)
    finally:
        signal.signal(signal.SIGINT, previous)
    stopped = time.monotonic()
    writer.close()
    assert stopped - started < 5
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert set(ids) <= {f"t{i}" for i in range(8)} and {"t0", "t1"} <= set(ids) and len(ids) < 8
    made = len(calls)
    time.sleep(0.6)
    assert len(calls) == made  # nothing runs on after the batch stopped


@pytest.mark.parametrize("line, message", [
    ({"id": "a", "documents": ["d"], "question": "q", "stop": "bogus"}, "stop: unknown stopping policy 'bogus'"),
    ({"id": "a", "documents": ["d"], "question": "  "}, "question: the question is empty"),
    ({"id": "a", "documents": ["d"], "question": "q", "mode": "fast"}, "mode: unknown mode 'fast'"),
])
def test_a_task_the_cli_would_refuse_is_refused_before_anything_runs(tmp_path, line, message):
    with pytest.raises(LcreadError, match=message):
        load_tasks(tasks_file(tmp_path, [line]))


def test_a_task_file_that_is_not_utf8_and_an_out_folder_are_named(tmp_path):
    from lcread import batch

    bad = tmp_path / "tasks.jsonl"
    bad.write_bytes(b'{"id": "a", "documents": ["d"], "question": "caf\xe9"}\n')
    with pytest.raises(LcreadError, match="tasks.jsonl is not UTF-8 text"):
        load_tasks(bad)
    good = tasks_file(tmp_path, [{"id": "a", "documents": ["d"], "question": "q"}])
    with pytest.raises(LcreadError, match="is a folder: give the results file"):
        batch.run(good, tmp_path, resume=False, concurrency=1, model=ScriptedModel([]), api_base=None,
                  settings=Settings(), trace=None, router=None, quiet=True)
