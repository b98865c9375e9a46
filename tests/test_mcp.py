"""lcread mcp with the SDK's in-memory client: tools, structured answers, errors, confinement, cancellation."""

import json
import threading
import time

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client.client import Client  # noqa: E402

from lcread.mcpserver import UNKNOWN, build_server  # noqa: E402
from lcread.models.scripted import ScriptedModel  # noqa: E402

DOC = "Harbour notes.\n" + "".join(f"Entry {i}: the harbour road was quiet.\n" for i in range(300)) + \
      "The harbour log says the ferry left at 6:15.\n"


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "log.txt").write_text(DOC)
    (root / "sub").mkdir()
    (root / "sub" / "notes.md").write_text("# Notes\n\nThe backup service listens on port 7420.\n")
    (tmp_path / "secret.txt").write_text("the password is hunter2\n")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    return root


def call(server, name, arguments, **kw):
    async def go():
        async with Client(server) as client:
            return await client.call_tool(name, arguments, **kw)
    return anyio.run(go)


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_the_server_lists_its_tools(served):
    async def go():
        async with Client(build_server([str(served)], model=ScriptedModel([]))) as client:
            return await client.list_tools()
    tools = {t.name: t for t in anyio.run(go).tools}
    assert set(tools) == {"ask", "search", "grep", "read", "list"}
    assert "verified" in json.dumps(tools["ask"].output_schema)


def test_ask_returns_a_structured_cited_answer_with_progress(served):
    model = ScriptedModel(['answer "6:15"'])
    seen = []

    async def progress(value, total, message):
        seen.append(message)

    result = call(build_server([str(served)], model=model), "ask",
                  {"inputs": ["log.txt"], "question": "When did the ferry leave?"}, progress_callback=progress)
    out = result.structured_content
    assert not result.is_error and out["answer"] == "6:15" and out["verified"] is True
    assert out["citations"][0]["document"] == "log.txt" and out["citations"][0]["line"] == 302
    assert "ferry left at 6:15" in out["citations"][0]["quote"]
    assert any(m and m.startswith("step 0: search") for m in seen)


def test_the_reading_tools_are_bounded_and_cite_ready(served):
    server = build_server([str(served)], model=ScriptedModel([]))
    found = text(call(server, "search", {"inputs": ["."], "words": "when did the ferry leave"}))
    assert "[1] docs/log.txt:" in found and "302: The harbour log says the ferry left at 6:15." in found
    assert "sub/notes.md:3:The backup service listens on port 7420." in text(
        call(server, "grep", {"inputs": ["sub"], "pattern": "port \\d+"}))
    assert "302: The harbour log says the ferry left at 6:15." in text(
        call(server, "read", {"path": "log.txt", "start": 301, "end": 302}))
    listing = text(call(server, "list", {"path": "."}))
    assert "docs/log.txt" in listing and "secret" not in listing
    big = text(call(server, "grep", {"inputs": ["log.txt"], "pattern": "harbour"}))
    assert len(big) <= 6200 and "output cut at 6,000 characters" in big


@pytest.mark.parametrize("path", ["../secret.txt", "escape.txt", "/etc/passwd", "sub/../../secret.txt"])
def test_paths_outside_the_roots_are_refused_and_never_named(served, path):
    server = build_server([str(served)], model=ScriptedModel([]))
    for name, args in (("read", {"path": path}), ("grep", {"inputs": [path], "pattern": "password"}),
                       ("ask", {"inputs": [path], "question": "What is the password?"})):
        result = call(server, name, args)
        message = text(result)
        assert result.is_error and UNKNOWN in message
        assert "secret" not in message and "passwd" not in message and "hunter2" not in message


def test_errors_are_one_line_messages_not_tracebacks(served):
    server = build_server([str(served)], model=ScriptedModel([]))
    result = call(server, "ask", {"inputs": ["log.txt"], "question": "x", "mode": "nonsense"})
    assert result.is_error and "unknown mode 'nonsense': use --mode select, sac, acs" in text(result)
    assert "Traceback" not in text(result) and len(text(result).splitlines()) == 1
    missing = call(server, "read", {"path": "nope.txt"})
    assert missing.is_error and "no such file or folder" in text(missing)


def test_a_cancelled_ask_stops_its_run(served):
    calls = []

    def slow(messages):
        calls.append(time.monotonic())
        time.sleep(0.3)
        return 'grep -i "harbour road"'

    model = ScriptedModel([slow] * 50)
    server = build_server([str(served)], model=model, settings={"max_steps": 50})

    async def go():
        async with Client(server) as client:
            with anyio.move_on_after(1.0):
                await client.call_tool("ask", {"inputs": ["log.txt"], "question": "Which road was quiet?"})
    anyio.run(go)
    time.sleep(1.0)
    made = len(calls)
    time.sleep(1.0)
    assert len(calls) == made and made < 10  # no call after the cancellation was seen


def test_the_server_speaks_streamable_http_on_loopback(served):
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "lcread", "mcp", "--root", str(served), "--http", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ})
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)

        async def go():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                return names, await client.call_tool("read", {"path": "log.txt", "start": 302, "end": 302})
        names, result = anyio.run(go)
        assert "ask" in names and "302: The harbour log says the ferry left at 6:15." in text(result)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
