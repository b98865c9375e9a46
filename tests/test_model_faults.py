"""How lcread meets a failing model, through litellm, against a scripted server on a loopback port."""

import json

import pytest

from conftest import run_cli
from fault_server import FaultServer, Step, error_body

DOC = "intro line\nThe Marlow Street hospital reported 12,310 beds in its last survey.\n"
QUESTION = "How many beds did the Marlow Street hospital report?"
GOOD = [Step(text="grep -i 'Marlow Street'"), Step(text='answer "12,310"')]


def ask(server, write, *extra, env=None, tmp_trace=None):
    doc = write("report.txt", DOC)
    args = ["ask", str(doc), QUESTION, "--model", "openai/fake", "--api-base", server.base, "--json", *extra]
    proc = run_cli(*args, env={"OPENAI_API_KEY": "sk-test-SECRET-0123456789", **(env or {})}, timeout=120)
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc, out


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retried_honouring_retry_after(write, tmp_path, status):
    trace = tmp_path / "t.jsonl"
    fault = Step(status=status, body=error_body(status, "busy"), headers={"Retry-After": "1"})
    with FaultServer([fault, *GOOD]) as server:
        proc, out = ask(server, write, "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr.decode()
    assert out["answer"] == "12,310" and out["verified"]
    gap = server.requests[1]["t"] - server.requests[0]["t"]
    assert len(server.requests) == 3 and gap >= 0.95  # Retry-After: 1 honoured
    retries = [json.loads(line) for line in trace.read_text().splitlines() if '"retry"' in line]
    assert len(retries) == 1 and retries[0]["wait"] == 1.0


def test_a_dropped_connection_and_a_hang_past_the_timeout_are_retried(write):
    with FaultServer([Step(reset=True), Step(delay=4, text="ls"), *GOOD]) as server:
        proc, out = ask(server, write, "--call-timeout", "1")
    assert proc.returncode == 0, proc.stderr.decode()
    assert out["answer"] == "12,310" and len(server.requests) >= 4


@pytest.mark.parametrize("body", ["not json at all", "", json.dumps({"choices": []})])
def test_a_malformed_reply_stops_with_a_message_and_the_best_answer(write, body):
    with FaultServer([Step(text="grep -i 'Marlow Street'")], default=Step(body=body)) as server:
        proc, out = ask(server, write, env={"LCREAD_RETRIES": "1"})
    err = proc.stderr.decode()
    assert proc.returncode == 5 and "Traceback" not in err and "model openai/fake" in err, err
    assert out["final"] is False and out["stop_reason"].startswith("model error")


def test_missing_usage_is_counted_locally(write):
    with FaultServer([Step(text="grep -i 'Marlow Street'", usage=False), Step(text='answer "12,310"', usage=False)]) \
            as server:
        proc, out = ask(server, write)
    assert proc.returncode == 0 and out["prompt_tokens"] > 0


@pytest.mark.parametrize("status,message", [(401, "authentication failed"), (403, "refused access"),
                                            (404, "unknown model")])
def test_permanent_errors_are_not_retried(write, status, message):
    with FaultServer([Step(status=status, body=error_body(status, "no"))] * 3) as server:
        proc, out = ask(server, write)
    err = proc.stderr.decode()
    assert len(server.requests) == 1 and message in err and "Traceback" not in err, err
    assert proc.returncode in (1, 5)


def test_a_context_length_error_compacts_once_and_goes_on(write, tmp_path):
    trace = tmp_path / "t.jsonl"
    overflow = Step(status=400, body=error_body(400, "This model's maximum context length is 100 tokens"))
    handoff = json.dumps({"current_step": "search", "plan": ["grep"], "completion_requirements": ["the number"],
                          "findings": [], "next_steps": ["grep"]})
    with FaultServer([Step(text="grep -i hospital"), overflow, Step(text=handoff), *GOOD]) as server:
        proc, out = ask(server, write, "--trace", str(trace))
    assert proc.returncode == 0, proc.stderr.decode()
    assert out["compactions"] == 1 and out["answer"] == "12,310"
    assert '"context_overflow"' in trace.read_text()


def test_the_run_time_limit_bounds_a_call_in_flight(write):
    with FaultServer([Step(delay=30, text="ls")]) as server:
        import time

        started = time.monotonic()
        proc, out = ask(server, write, "--max-seconds", "3")
        took = time.monotonic() - started
    assert took < 25 and proc.returncode in (3, 5), proc.stderr.decode()  # the reply would take 30 s
    assert len(server.requests) == 1


def test_a_key_echoed_by_the_server_never_leaves(write, tmp_path):
    trace = tmp_path / "t.jsonl"
    echo = Step(status=400, body=error_body(400, "bad key sk-test-SECRET-0123456789 for you"))
    with FaultServer([echo]) as server:
        proc, out = ask(server, write, "--trace", str(trace))
    everything = proc.stdout.decode() + proc.stderr.decode() + trace.read_text()
    assert "sk-test-SECRET-0123456789" not in everything and "[OPENAI_API_KEY]" in everything
    assert server.requests[0]["auth"] == "Bearer sk-test-SECRET-0123456789"  # it was really sent


def test_a_server_that_echoes_prompt_logprobs_is_detected_and_scores_the_options(monkeypatch):
    from lcread.acs.probe import Probe
    from lcread.config import ModelConfig
    from lcread.models.remote import LiteLLMModel

    monkeypatch.setenv("OPENAI_API_KEY", "x")

    def scorer(prompt: str) -> float:  # the option's word after "Answer:"; 7261 likely once the notes say so
        if "capital of France" in prompt:  # the detection's sanity check
            return -0.2 if prompt.endswith("Paris") else -9.0
        option = prompt.rsplit(" ", 1)[-1]
        if option == "7261":
            return 0.0 if "vault code is 7261" in prompt else -3.0
        return -1.0

    options = [("A", "5120"), ("B", "7261"), ("C", "9034")]
    with FaultServer([], scorer=scorer) as server:
        model = LiteLLMModel(ModelConfig(name="openai/fake", api_base=server.base))
        assert model.supports_scoring and model.supports_scoring  # detected once
        probe = Probe(model, "What is the vault code?", options)
        assert probe.kind == "likelihood"
        state, replies = probe.read("The vault code is 7261.")
        assert state.answer == "B" and state.confidence > 0.9 and state.eligible
        assert sum(r.prompt_tokens for r in replies) > 0  # the prior's cost is in the first read
        paths = [r["path"] for r in server.requests]
        assert all(p.endswith("/completions") and "chat" not in p for p in paths) and len(paths) == 2 + 3 + 3
        assert all(r["body"]["echo"] is True for r in server.requests)
    # no log-probabilities; log-probabilities that make no sense (every answer as likely as any other)
    for broken in (None, lambda prompt: -9.2):
        with FaultServer([], scorer=broken) as server:
            model = LiteLLMModel(ModelConfig(name="openai/fake", api_base=server.base))
            assert not model.supports_scoring
            assert Probe(model, "What is the vault code?", options).kind == "letters"
    assert not LiteLLMModel(ModelConfig(name="openai/fake")).supports_scoring  # a hosted API: never assumed
