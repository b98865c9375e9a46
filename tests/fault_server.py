"""A scripted OpenAI-compatible server on a loopback port, for testing how lcread meets a failing model.

Each request to /v1/chat/completions takes the next step of the script: a reply text (a normal 200
completion), or a fault: an HTTP status with headers and body, a delay, a dropped connection, or a
body that is not what the API promises. Every request is recorded with its arrival time.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Step:
    text: str | None = None
    """A normal completion with this content."""
    status: int = 200
    headers: dict = field(default_factory=dict)
    body: str | None = None
    """A raw body instead of a completion (malformed JSON, an error object, nothing)."""
    delay: float = 0.0
    reset: bool = False
    """Close the connection without answering."""
    usage: bool = True


def completion(text: str, usage: bool = True) -> str:
    reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
    if usage:
        reply["usage"] = {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
    return json.dumps(reply)


def error_body(status: int, message: str) -> str:
    return json.dumps({"error": {"message": message, "type": "error", "code": status}})


def echoed(prompt: str, scorer) -> str:
    """A legacy completions reply that echoes `prompt` with per-token log-probabilities: the prompt is cut
    into words (each a token), `scorer(prompt)` gives the log-probability of the last word."""
    import re

    words = [(m.start(), m.group(0)) for m in re.finditer(r"\s*\S+", prompt)]
    values = [None] + [-0.5] * (len(words) - 1)
    values[-1] = scorer(prompt)
    logprobs = {"tokens": [w for _, w in words] + ["."], "token_logprobs": values + [-1.0],
                "text_offset": [o for o, _ in words] + [len(prompt)], "top_logprobs": None}
    return json.dumps({"id": "x", "object": "text_completion", "created": 0, "model": "fake",
                       "choices": [{"index": 0, "text": prompt + ".", "logprobs": logprobs, "finish_reason": "length"}],
                       "usage": {"prompt_tokens": len(words), "completion_tokens": 1, "total_tokens": len(words) + 1}})


class FaultServer:
    def __init__(self, script: list[Step], default: Step | None = None, scorer=None):
        self.scorer = scorer
        """For /v1/completions with echo: the log-probability of the prompt's last word (None: no log-probs)."""
        self.script = list(script)
        self.default = default or Step(text='answer "none"')
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self._send(200, json.dumps({"data": [{"id": "fake"}]}), {})

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"t": time.monotonic(), "body": body, "path": self.path,
                                        "auth": self.headers.get("authorization")})
                if self.path.endswith("/completions") and not self.path.endswith("/chat/completions"):
                    if server.scorer is None:  # a server that echoes no log-probabilities
                        reply = json.loads(echoed(body["prompt"], lambda p: 0.0))
                        reply["choices"][0]["logprobs"] = None
                        return self._send(200, json.dumps(reply), {})
                    return self._send(200, echoed(body["prompt"], server.scorer), {})
                step = server.script.pop(0) if server.script else server.default
                if step.delay:
                    time.sleep(step.delay)
                if step.reset:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                payload = step.body if step.body is not None else completion(step.text or "", step.usage)
                self._send(step.status, payload, step.headers)

            def _send(self, status, payload, headers):
                data = payload.encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FaultServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
