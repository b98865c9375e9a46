import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, unprivileged


def test_importing_the_cli_loads_no_model_library():
    code = "import sys, lcread.cli; print(sorted(m for m in ('litellm', 'llama_cpp', 'tiktoken') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_lists_the_ask_options():
    proc = run_cli("ask", "--help", env={"COLUMNS": "200"})
    assert proc.returncode == 0
    for option in ("--model", "--api-base", "--json", "--quiet", "--trace", "--max-steps", "--context-limit"):
        assert option.encode() in proc.stdout


@pytest.mark.parametrize("setup, message", [
    (lambda d: d / "missing.txt", "lcread: error: no such file or folder:"),
    (lambda d: _file(d / "empty.txt", b""), "is empty: there is nothing to read"),
    (lambda d: _file(d / "a.out", b"\x7fELF\x00\x00"), "looks binary"),
    (lambda d: _file(d / "pics" / "x.png", b"\x89PNG\x00") and d / "pics", "holds no readable text files"),
])
def test_bad_input_gives_one_line_and_a_nonzero_exit(tmp_path, setup, message):
    path = setup(tmp_path)
    proc = run_cli("ask", str(path), "question?")
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert proc.stdout == b""


def test_empty_stdin():
    proc = run_cli("ask", "-", "question?", stdin=b"")
    assert proc.returncode == 1 and proc.stderr.decode().startswith("lcread: error: stdin is empty")


def test_bad_usage_exits_2_like_a_badly_typed_option_and_says_so_in_json(tmp_path):
    doc = _file(tmp_path / "d.txt", b"text\n")
    proc = run_cli("ask", str(doc), "q", "--mode", "bogus")
    assert proc.returncode == 2 and "unknown mode 'bogus'" in proc.stderr.decode()
    proc = run_cli("ask", str(doc), "q", "--context-limit", "4096", "--compact-at", "5000")
    assert proc.returncode == 2 and "must be below the context limit" in proc.stderr.decode()
    proc = run_cli("ask", str(doc), "q", "--mode", "acs", "--theta", "2")
    assert proc.returncode == 2 and proc.stderr.decode() == "lcread: error: --theta: input should be less than or equal to 1\n"
    typed = run_cli("ask", str(doc), "q", "--max-steps", "many")
    assert typed.returncode == 2
    for args, code in ((("--mode", "bogus", "--json"), 2), (("--json",), 1)):
        proc = run_cli("ask", str(doc if code == 2 else tmp_path / "gone.txt"), "q", *args)
        out = json.loads(proc.stdout)
        assert proc.returncode == code == out["exit_status"] and out["error"]


def test_a_local_model_file_that_is_not_there(tmp_path):
    doc = _file(tmp_path / "d.txt", b"text\n")
    proc = run_cli("ask", str(doc), "q", "--model", f"local:{tmp_path}/none.gguf")
    assert proc.returncode == 1 and "no model file at" in proc.stderr.decode()


@pytest.mark.model  # it reaches llama.cpp
@pytest.mark.local
def test_a_file_that_is_not_a_model(tmp_path):
    doc = _file(tmp_path / "d.txt", b"text\n")
    fake = _file(tmp_path / "fake.gguf", b"not a model at all")
    proc = run_cli("ask", str(doc), "q", "--model", f"local:{fake}")
    assert proc.returncode == 1 and "cannot load" in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()


def test_permission_denied_is_reported_not_raised(tmp_path):
    secret = _file(tmp_path / "secret.txt", b"top secret\n")
    secret.chmod(0o000)
    env = dict(os.environ)
    cmd = unprivileged([sys.executable, "-m", "lcread", "ask", str(secret), "q"])
    try:
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=60)
    finally:
        secret.chmod(0o600)
    assert proc.returncode == 1
    assert "permission denied" in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()


def _file(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_acs_on_a_backend_without_logprobs_fails_before_reading(tmp_path):
    doc = _file(tmp_path / "d.txt", b"some text\n" * 50)
    proc = run_cli("ask", "--mode", "acs", str(doc), "q?", "--model", "anthropic/claude-3-5-sonnet-latest")
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "needs token log-probabilities" in err and "--stop verbalized" in err
    proc = run_cli("ask", "--mode", "acs", str(doc), "q?", "--stop", "sometimes")
    assert proc.returncode == 2 and "--stop: input should be 'acs', 'full'" in proc.stderr.decode()


def test_a_unit_test_cannot_load_a_real_model(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-real-key")
    from lcread.config import ModelConfig
    from lcread.errors import LcreadError
    from lcread.models import get_model

    with pytest.raises(LcreadError, match="mark the test with @pytest.mark.model"):
        get_model(ModelConfig(name="local"))
    with pytest.raises(LcreadError, match="LCREAD_FORBID_MODELS"):
        get_model(ModelConfig(name="gpt-4o-mini")).query([{"role": "user", "content": "hi"}], max_tokens=1)


def test_version_is_printed_and_is_the_package_s():
    from importlib.metadata import version

    from conftest import run_cli
    from lcread import __version__

    proc = run_cli("--version", timeout=60)
    assert proc.returncode == 0 and proc.stdout.decode().strip() == f"lcread {__version__}"
    assert version("lcread") == __version__
