"""The litellm backend against a real HTTP server on loopback that answers as a provider would."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lcread.config import ModelConfig
from lcread.errors import ModelError
from lcread.models.remote import LiteLLMModel

OK = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
      "choices": [{"index": 0, "message": {"role": "assistant", "content": 'grep "refund"'}, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


@pytest.fixture
def server():
    """Serves the queued (status, body) pairs in order; records each request body."""
    state = {"queue": [], "requests": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state["requests"].append(json.loads(body))
            status, payload = state["queue"].pop(0) if state["queue"] else (500, {"error": {"message": "empty"}})
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state["base"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield state
    httpd.shutdown()


def model(server, sleeps, retries=3):
    config = ModelConfig(name="openai/test-model", api_base=server["base"], retries=retries, timeout=20)
    return LiteLLMModel(config, sleep=sleeps.append)


MESSAGES = [{"role": "user", "content": "hi"}]


def test_rate_limits_and_server_errors_are_retried_with_backoff(server):
    server["queue"] += [(429, {"error": {"message": "slow down"}}), (503, {"error": {"message": "busy"}}), (200, OK)]
    sleeps = []
    reply = model(server, sleeps).query(MESSAGES, max_tokens=20)
    assert reply.text == 'grep "refund"' and (reply.prompt_tokens, reply.completion_tokens) == (11, 3)
    assert len(server["requests"]) == 3 and len(sleeps) == 2 and sleeps[1] > sleeps[0] - 1
    assert server["requests"][0]["max_tokens"] == 20 and server["requests"][0]["temperature"] == 0


def test_retries_run_out_with_a_clear_error(server):
    server["queue"] += [(500, {"error": {"message": "boom"}})] * 3
    with pytest.raises(ModelError, match="failed after 3 tries"):
        model(server, [], retries=2).query(MESSAGES, max_tokens=5)


def test_authentication_errors_fail_at_once(server):
    server["queue"] += [(401, {"error": {"message": "Incorrect API key provided"}})]
    sleeps = []
    with pytest.raises(ModelError, match="authentication failed"):
        model(server, sleeps).query(MESSAGES, max_tokens=5)
    assert len(server["requests"]) == 1 and sleeps == []


def test_a_missing_key_for_a_hosted_provider_is_named_before_any_call(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="needs OPENAI_API_KEY"):
        LiteLLMModel(ModelConfig(name="gpt-4o-mini")).query(MESSAGES, max_tokens=5)


def test_an_unknown_model_says_what_to_use():
    with pytest.raises(ModelError, match="unknown model 'no-such-provider-model-xyz'"):
        LiteLLMModel(ModelConfig(name="no-such-provider-model-xyz")).query(MESSAGES, max_tokens=5)


def test_two_concurrent_calls_on_one_model_each_carry_only_their_own_retries(server):
    import threading

    server["queue"] += [(429, {"error": {"message": "slow down"}}), (200, OK), (200, OK)]
    shared = model(server, [])
    replies = []

    def call():
        replies.append(shared.query(MESSAGES, max_tokens=20))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(len(r.retries) for r in replies) == [0, 1]  # one call met the 429; the other records nothing
    assert not hasattr(shared, "retries")  # no list on the model that concurrent runs would share
