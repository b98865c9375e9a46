"""Ctrl-C and SIGTERM during a model call and during a grep: the best answer so far on stdout, a complete
trace, no temporary file left behind, exit 130 / 143."""

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from fault_server import FaultServer, Step

DOC = "intro\nThe Marlow Street hospital reported 12,310 beds in its last survey.\n" * 3


def spools() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "lcread-stdin-*")))


def _interruptible() -> None:
    """In the child: SIGINT as at a terminal. A runner that started the tests in the background without job
    control has it ignored, and an ignored SIGINT is inherited (Python then installs no handler for it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args, stdin: bytes | None = None, env=None):
    proc = subprocess.Popen([sys.executable, "-m", "lcread", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, **(env or {})}, preexec_fn=_interruptible)
    if stdin is not None:
        proc.stdin.write(stdin)
    proc.stdin.close()
    proc.stdin = None
    return proc


def wait_for(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_model_call(tmp_path, sig, code):
    trace = tmp_path / "t.jsonl"
    before = spools()
    script = [Step(text="grep -i 'Marlow Street'"), Step(text='answer "12,310 beds at Oxbury"'), Step(delay=60)]
    with FaultServer(script) as server:
        proc = start(["ask", "-", "How many beds did the Marlow Street hospital report?", "--model", "openai/fake",
                      "--api-base", server.base, "--json", "--trace", str(trace)], stdin=DOC.encode(),
                     env={"OPENAI_API_KEY": "x"})
        assert wait_for(lambda: len(server.requests) >= 3)  # the third call hangs
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err.decode()
    result = json.loads(out)
    assert result["final"] is False and result["stop_reason"] == "interrupted"
    assert result["answer"] == "12,310" and result["verified"] is False  # the grounded part of the answer, unverified
    events = [json.loads(line)["event"] for line in trace.read_text().splitlines()]
    assert events[0] == "run_start" and events[-1] == "run_end"
    assert not spools() - before  # no spool of its own left behind (another lcread's may come and go meanwhile)


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_grep(tmp_path, sig, code):
    big = tmp_path / "big.txt"
    block = ("ñandú " * 20 + "\n").encode() * 1000
    with open(big, "wb") as f:
        for _ in range(1500):  # about 200 MB: ripgrep takes about a second on it
            f.write(block)
    trace = tmp_path / "t.jsonl"
    with FaultServer([Step(text=r"grep -c '\w{120}'")]) as server:
        proc = start(["ask", str(big), "Which line is longest?", "--model", "openai/fake", "--api-base",
                      server.base, "--trace", str(trace)], env={"OPENAI_API_KEY": "x"})
        assert wait_for(lambda: len(server.requests) >= 1)
        assert wait_for(lambda: children(proc.pid), timeout=30)
        rg = children(proc.pid)[0]
        os.kill(rg, signal.SIGSTOP)  # the grep now takes as long as it likes
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err.decode()
    assert out.decode().strip() and "Traceback" not in err.decode()
    assert json.loads(trace.read_text().splitlines()[-1])["event"] == "run_end"
    assert not os.path.exists(f"/proc/{rg}")  # ripgrep was stopped and reaped


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_before_the_run_starts_keeps_its_exit_status_and_json(tmp_path, sig, code):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = start(["ask", str(fifo), "q?", "--json"])
    time.sleep(1.5)  # waiting for a writer on the pipe: before any model or loop
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code and json.loads(out) == {"error": "interrupted", "exit_status": code}
    assert b"interrupted" in err and b"Traceback" not in err


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_batch_stops_at_once_on_a_signal_with_its_results_kept(tmp_path, sig, code):
    doc = tmp_path / "report.txt"
    doc.write_text(DOC)
    tasks = tmp_path / "tasks.jsonl"
    question = "How many beds did the Marlow Street hospital report?"
    tasks.write_text("".join(json.dumps({"id": f"t{i}", "documents": [str(doc)], "question": question}) + "\n"
                             for i in range(4)))
    out = tmp_path / "results.jsonl"
    script = [Step(text='answer "12,310"')] + [Step(delay=120)] * 3  # one task answers, the others hang
    with FaultServer(script, default=Step(delay=120)) as server:
        proc = start(["batch", str(tasks), "--out", str(out), "--model", "openai/fake", "--api-base", server.base,
                      "--concurrency", "4", "-q"], env={"OPENAI_API_KEY": "x"})
        ready = wait_for(lambda: out.exists() and out.read_text().count("\n") == 1 and len(server.requests) >= 4)
        assert ready, (len(server.requests), out.exists() and out.read_text(), proc.poll())
        sent = time.monotonic()
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        took = time.monotonic() - sent
    assert proc.returncode == code and took < 10, took  # not the minutes a call may take
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["answer"] for r in rows] == ["12,310"]
