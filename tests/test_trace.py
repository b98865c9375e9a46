import json
import threading

from lcread.trace import JsonlTrace


def test_concurrent_runs_keep_their_own_run_id_on_every_event(tmp_path):
    trace = JsonlTrace(tmp_path / "t.jsonl")
    barrier = threading.Barrier(4)

    def run(name):
        trace.event("run_start", who=name)
        barrier.wait()  # every run has started before any logs more
        for i in range(50):
            trace.event("call", who=name, i=i)
        trace.event("run_end", who=name)

    threads = [threading.Thread(target=run, args=(f"r{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    trace.close()
    events = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert len(events) == 4 * 52
    ids = {}
    for e in events:
        ids.setdefault(e["who"], set()).add(e["run"])
    assert all(len(v) == 1 for v in ids.values()) and len({next(iter(v)) for v in ids.values()}) == 4


def test_secret_values_never_reach_the_trace(tmp_path, monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "acme-secret-value-123")
    trace = JsonlTrace(tmp_path / "t.jsonl")
    trace.event("call", reply="the server said: bad key acme-secret-value-123")
    trace.close()
    text = (tmp_path / "t.jsonl").read_text()
    assert "acme-secret-value-123" not in text and "[ACME_API_KEY]" in text
