"""End to end on the real embedded model: in process, through the CLI, and through litellm against
llama-cpp-python's own OpenAI-compatible server started on a loopback port."""

import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import run_cli, write_pdf
from lcread.agent.select import SelectReader
from lcread.bench.corpus import synthetic_text
from lcread.bench.suites import niah, score
from lcread.config import ModelConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.models import get_model
from lcread.models.weights import embedded_model_path
from lcread.tools import ToolRunner
from lcread.trace import MemoryTrace

pytestmark = [pytest.mark.model, pytest.mark.local]


@pytest.fixture(scope="module")
def local_model():
    return get_model(ModelConfig(name="local"))


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("needles")
    rng = random.Random(11)
    haystack = synthetic_text(400_000, seed=3)
    return [niah("single", haystack, 60_000, depth, rng, folder, f"t{i}") for i, depth in enumerate((0.2, 0.8))]


ANSWERED = (0, 4)
"""Exit statuses of an answer: verified (0), or not (4). Whether an answer is verified is the calibration's call
(docs/answers.md): these tests hold lcread to the right answer, grounded and cited."""
KNOWN_WRONG = ("the shipped reader calibration (the reader's own call scored by the span likelihoods, held out by "
               "document) answers this wrong: a look-alike line's value, a phrase of the line instead of the name; "
               "see issue 27's note")

def test_embedded_model_finds_needles_in_process(local_model, tasks):
    assert local_model.context_window == 16384
    for task in tasks:
        trace = MemoryTrace()
        with DocumentStore.open([task.path]) as store:
            result = SelectReader(local_model, ToolRunner(store), SilentDisplay(), trace).run(task.question)
        assert result.final and score(task, result.answer), (task, result.answer)
        assert result.stats.peak_context < 4000
        first = trace.of("command")[0]
        assert first["auto"] and first["command"].startswith("search")  # lcread's own first step
        if result.stats.calls > 1:
            assert result.stats.cached_tokens > 0  # the second call reused the first call's KV cache


def test_cli_json_on_the_embedded_model(tasks, tmp_path):
    task = tasks[0]
    trace = tmp_path / "run.jsonl"
    proc = run_cli("ask", task.path, task.question, "--json", "--trace", str(trace))
    assert proc.returncode in ANSWERED, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert score(task, out["answer"]) and out["grounded"] and proc.returncode == (0 if out["verified"] else 4)
    assert out["mode"] == "select" and out["model"] == "local" and out["final"] is True
    assert out["total_tokens"] == out["prompt_tokens"] + out["completion_tokens"] > 0
    # a run may end on the reader's own call, before the model issues a command: calls count, steps may be 0
    assert 0 < out["peak_context"] <= 16384 and out["calls"] >= 1 and out["compactions"] == 0
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert {e["event"] for e in events} >= {"run_start", "call", "command", "run_end"}
    assert all(e["prompt_tokens"] > 0 and e["latency"] > 0 for e in events if e["event"] == "call")


def test_cli_reads_stdin_and_shows_progress(tasks):
    task = tasks[1]
    with open(task.path, "rb") as f:
        proc = run_cli("ask", "-", task.question, stdin=f.read(), env={"COLUMNS": "120"})
    assert proc.returncode in ANSWERED
    assert score(task, proc.stdout.decode())
    err = proc.stderr.decode()
    assert "stdin" in err and "$ search" in err and "tokens" in err and "answer" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(alias: str = "qwen-local") -> tuple[subprocess.Popen, str]:
    """llama-cpp-python's OpenAI-compatible server on a free loopback port, once it answers."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "lcread.models.llamaserver", "--model", str(embedded_model_path()),
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "16384",
                             "--model_alias", alias],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/models", timeout=2)
            return proc, base
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("the llama-cpp-python server exited at start")
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("the llama-cpp-python server did not answer within 120 s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def llama_server():
    proc, base = start_server()
    yield base
    stop_server(proc)


def test_litellm_path_against_a_real_openai_compatible_server(llama_server, tasks):
    task = tasks[0]
    proc = run_cli("ask", task.path, task.question, "--model", "openai/qwen-local", "--api-base", llama_server,
                   "--json", env={"OPENAI_API_KEY": ""})
    assert proc.returncode in (0, 3), proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["model"] == "openai/qwen-local"
    assert score(task, out["answer"]), out
    assert out["prompt_tokens"] > 0 and out["peak_context"] > 0


@pytest.fixture(scope="module")
def small_doc(tmp_path_factory):
    lines = synthetic_text(4500, seed=5).splitlines()
    lines.insert(30, "Elinor hid the letter in the piano before dinner.")
    path = tmp_path_factory.mktemp("acs") / "letter.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_acs_open_ended_on_the_embedded_model(small_doc):
    proc = run_cli("ask", "--mode", "acs", "--chunk-chars", "1500", str(small_doc), "Who hid the letter?", "--json")
    assert proc.returncode in (0, 4), proc.stderr.decode()  # 4: the answer's evidence did not verify it
    out = json.loads(proc.stdout)
    assert "elinor" in out["answer"].lower()
    assert out["verified"] is not True or out["citations"]
    assert out["chunks_total"] == 4 and 1 <= out["chunks_read"] <= 4 and len(out["chunks"]) == out["chunks_read"]
    assert all(0 <= s["confidence"] <= 1 for s in out["chunks"])
    assert all(not s["eligible"] for s in out["chunks"] if not s["notes_chars"])  # empty notes: no answer state
    assert out["chunks"][-1]["answer"] and out["tokens_by_kind"]["fold"] > out["tokens_by_kind"]["probe"] > 0
    assert sum(out["tokens_by_kind"].values()) == out["total_tokens"]


def test_acs_multiple_choice_on_the_embedded_model(small_doc):
    proc = run_cli("ask", "--mode", "acs", "--chunk-chars", "1500", str(small_doc),
                   "Who hid the letter? A) Anne B) Elinor C) Marianne D) Lucy", "--json", "--probe", "letters")
    assert proc.returncode in (0, 4), proc.stderr.decode()  # a near-uniform posterior's pick may not verify
    out = json.loads(proc.stdout)
    # the embedded model's letter posterior is close to uniform: it never reaches theta, so it reads to the end
    assert out["answer"][0] in "ABCD" and out["stop_reason"] == "read to the end"
    for state in out["chunks"]:
        assert set(state["posterior"]) == set("ABCD") and state["probe"] == "letters"
        assert sum(state["posterior"].values()) == pytest.approx(1.0, abs=1e-4)
        assert state["confidence"] == pytest.approx(max(state["posterior"].values()), abs=1e-5)


def test_acs_likelihood_probe_stops_early_when_the_answer_is_in_the_first_chunk(tmp_path):
    lines = synthetic_text(9000, seed=12).splitlines()
    lines.insert(2, "The Kestrel Bay granary reported 21,812 bushels of seed wheat in its last survey.")
    path = tmp_path / "granary.txt"
    path.write_text("\n".join(lines) + "\n")
    proc = run_cli("ask", "--mode", "acs", "--chunk-chars", "1500", "--notes-chars", "800", str(path),
                   "How many bushels of seed wheat did the Kestrel Bay granary report in its last survey? "
                   "A) 75,748 B) 13,258 C) 87,385 D) 21,812", "--json")
    assert proc.returncode in ANSWERED, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["answer"].startswith("D") and out["stop_reason"] == "acs stopped", out["chunks"]
    assert out["citations"][0]["line"] == 3  # the fold's note, found in the document
    assert out["chunks_read"] < out["chunks_total"] and out["chunks"][0]["probe"] == "likelihood"
    assert out["chunks"][0]["notes_chars"] > 0  # the fold kept the evidence, not the options


def test_sac_on_the_embedded_model(tasks, tmp_path):
    # The embedded model is unreliable at sac (the 0.5B found 12-17 of 20 needles in the benchmark), so this checks what
    # must hold whatever it answers: fresh bounded contexts, a valid state after each step, the task kept.
    task = tasks[1]
    trace = tmp_path / "sac.jsonl"
    proc = run_cli("ask", "--mode", "sac", task.path, task.question, "--json", "--trace", str(trace))
    assert proc.returncode in (0, 3, 4), proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["mode"] == "sac" and out["calls"] >= 1 and out["answer"]  # the reader's call may end it at 0 steps
    assert out["peak_context"] < 3000 and out["compactions"] == 0
    assert out["verified"] is not True or score(task, out["answer"])  # never verified and wrong
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    commands = [e for e in events if e["event"] == "command"]
    assert commands[0]["auto"] and commands[0]["command"].startswith("search")  # sac never starts blind
    assert all(e["state"]["task"] == task.question for e in commands[1:])
    assert all(e["context"] < 3000 for e in events if e["event"] == "call")


def test_batch_killed_and_resumed_gives_one_result_per_task(tasks, tmp_path):
    rows = [{"id": f"q{i}", "documents": [t.path], "question": t.question, "expected": t.answers[0]}
            for i, t in enumerate(tasks * 2)]
    spec = tmp_path / "tasks.jsonl"
    spec.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "results.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "lcread", "batch", str(spec), "--out", str(out), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 1):
        time.sleep(0.2)
    proc.kill()  # SIGKILL: no cleanup runs
    proc.wait()
    first = out.read_text().count("\n")
    assert 0 < first < len(rows)
    again = run_cli("batch", str(spec), "--out", str(out))
    assert again.returncode == 1 and "add --resume" in again.stderr.decode()
    resumed = run_cli("batch", str(spec), "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr.decode()
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in results) == sorted(r["id"] for r in rows)  # exactly one each
    assert all(r["error"] is None and r["correct"] for r in results)
    summary = resumed.stderr.decode()
    assert f"{len(rows) - first} tasks run" in summary and f"{first} skipped" in summary


def test_router_spreads_a_batch_over_two_servers_and_fails_over(tasks, tmp_path):
    first, base1 = start_server()
    second, base2 = start_server()
    try:
        config = tmp_path / "router.yaml"
        config.write_text("model_list:\n" + "".join(
            f"  - model_name: qwen\n    litellm_params: {{model: openai/qwen-local, api_base: '{b}', "
            "api_key: none}\n" for b in (base1, base2)))
        rows = [{"id": f"r{i}", "documents": [t.path], "question": t.question, "expected": t.answers[0]}
                for i, t in enumerate(tasks * 3)]
        spec = tmp_path / "tasks.jsonl"
        spec.write_text("".join(json.dumps(r) + "\n" for r in rows))
        out = tmp_path / "results.jsonl"
        proc = subprocess.Popen([sys.executable, "-m", "lcread", "batch", str(spec), "--out", str(out),
                                 "--router", str(config), "--concurrency", "2", "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 1):
            time.sleep(0.2)
        stop_server(first)  # one deployment goes away mid-run
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()
        results = [json.loads(line) for line in out.read_text().splitlines()]
        assert sorted(r["id"] for r in results) == sorted(r["id"] for r in rows)
        assert all(r["error"] is None for r in results), [r["error"] for r in results]
        assert all(r["model"] == "qwen" and r["answer"] and r["steps"] >= 1 for r in results)
        assert first.poll() is not None and second.poll() is None  # the rest ran on the survivor
    finally:
        stop_server(first)
        stop_server(second)


def test_look_alike_facts_on_the_embedded_model_give_the_right_one_verified(local_model, tmp_path):
    lines = synthetic_text(30_000, seed=8).splitlines()
    facts = {"Oxbury": "68,564", "Marlow Street": "12,310", "Kestrel Bay": "21,812", "Fenwick": "7,941"}
    for i, (place, beds) in enumerate(facts.items()):
        lines.insert(40 + i * 90, f"The {place} hospital reported {beds} beds in its last survey.")
    path = tmp_path / "hospitals.txt"
    path.write_text("\n".join(lines) + "\n")
    with DocumentStore.open([str(path)]) as store:
        result = SelectReader(local_model, ToolRunner(store), SilentDisplay(), MemoryTrace()).run(
            "How many beds did the Marlow Street hospital report?")
    assert result.verified and "12,310" in result.answer, (result.answer, result.missing)
    assert any("Marlow Street" in c.quote and "12,310" in c.quote for c in result.citations)


@pytest.mark.xfail(strict=True, reason=KNOWN_WRONG)
def test_readme_first_command_names_the_embedded_model_with_its_line():
    readme = os.path.join(os.path.dirname(__file__), "..", "README.md")
    proc = run_cli("ask", readme, "Which model does lcread embed for offline use?", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["verified"], (out["answer"], out["missing"])
    assert "Qwen2.5-Coder-1.5B-Instruct" in out["answer"]
    assert any("Qwen2.5-Coder-1.5B-Instruct" in c["quote"] for c in out["citations"])


def test_on_which_page_of_a_pdf_on_the_embedded_model(tmp_path):
    path = write_pdf(tmp_path / "station-manual.pdf", 30, lambda n: (
        f"Section {n}. Routine maintenance notes for the pumping station, page {n}. Check the valves and record the "
        "readings in the log book." + (" The warranty of the Halvorsen pump runs for 18 months from delivery."
                                       if n == 17 else "")))
    proc = run_cli("ask", str(path), "On which page is the warranty of the Halvorsen pump given?", "--json",
                   env={"LCREAD_CONVERT_DIR": str(tmp_path / "cache")})
    out = json.loads(proc.stdout)
    assert "17" in out["answer"] and out["grounded"], (out["answer"], out["missing"])
    assert out["citations"][0]["place"] == "page 17"


def test_a_prompt_state_saved_by_one_model_warms_a_fresh_one(tmp_path):
    from lcread.models.local import LocalModel

    system = "You answer questions about documents. " + "Follow these rules carefully. " * 60
    asked = [{"role": "system", "content": system}, {"role": "user", "content": "What is 2 + 2?"}]
    first = LocalModel(embedded_model_path(), ModelConfig(), label="local")
    cold = first.query(asked, max_tokens=4)
    assert cold.cached_tokens == 0 and len(list(tmp_path.glob("kv/*/*.kv"))) == 1  # conftest: LCREAD_KV_DIR
    second = LocalModel(embedded_model_path(), ModelConfig(), label="local")  # another process, in effect
    warm = second.query(asked, max_tokens=4)
    assert warm.cached_tokens == warm.prompt_tokens - 1 and warm.text == cold.text  # only the last token again
    other = LocalModel(embedded_model_path(), ModelConfig(), label="local")
    fresh = other.query([asked[0], {"role": "user", "content": "Name a colour."}], max_tokens=4)
    system_tokens = other.count_tokens(asked[:1])
    assert system_tokens - 8 <= fresh.cached_tokens < fresh.prompt_tokens  # the shared system prompt only


def test_an_mcp_client_over_stdio_gets_a_page_cited_answer_about_a_pdf(tmp_path):
    import anyio
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    root = tmp_path / "manuals"
    root.mkdir()
    write_pdf(root / "station.pdf", 20, lambda n: f"Section {n}. Routine maintenance of the pumping station. Check the "
              "valves daily." + (" The warranty of the Halvorsen pump runs for 18 months from delivery." if n == 12
                                 else ""))
    (tmp_path / "private.txt").write_text("not for the agent\n")
    env = {**os.environ, "LCREAD_CONVERT_DIR": str(tmp_path / "cache")}
    server = StdioServerParameters(command=sys.executable, args=["-m", "lcread", "mcp", "--root", str(root)], env=env)

    async def session():
        async with Client(server, read_timeout_seconds=300) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            answer = await client.call_tool("ask", {"inputs": ["station.pdf"], "question":
                                                    "How long does the warranty of the Halvorsen pump run?"})
            outside = await client.call_tool("read", {"path": str(tmp_path / "private.txt")})
            return names, answer, outside

    names, answer, outside = anyio.run(session)
    assert {"ask", "search", "grep", "read", "list"} <= names
    out = answer.structured_content
    assert "18" in out["answer"] and out["grounded"] and out["confidence"] is not None, out
    assert out["citations"][0]["place"] == "page 12" and "Halvorsen" in out["citations"][0]["quote"]
    assert outside.is_error and "no such file or folder in the served folders" in outside.content[0].text  # as for any outside path
    assert "private" not in outside.content[0].text


def test_a_reply_is_scored_the_way_the_model_writes_it(local_model):
    """`"Bruce` is one token of the tokenizer's own (`"B`, `ru`, `ce`) that the model seldom writes after a quote: a
    reply is as likely as the likelier way of writing it, so the whole name the lines give outscores its surname."""
    lines = ("faq.txt:1700: msg00515.html) of using film names was made (https://\n"
             "faq.txt:1701: lists.example.org/users/1997/04/msg00011.html) by Bruce\n"
             "faq.txt:1702: Perens who was, at the time, the Project Leader and was")
    messages = [{"role": "user", "content": lines + "\nWho decided to use film names for releases? "
                                                    "Reply with the answer only, in double quotes."}]
    full, surname, role = local_model.score(messages, ['"Bruce Perens"', '"Perens"', '"Project Leader"']
                                            ).continuation_logprobs
    assert full > max(surname, role) + 1.0
