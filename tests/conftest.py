import json
import os
import sys
from pathlib import Path

import pytest

from lcread.reader.scorer import trusting

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Each worker of `pytest -n` has a temporary folder of its own (and so do the processes it starts), so that a
    # test's check that lcread left no temporary file behind sees only its own worker's files.
    import tempfile

    os.environ["TMPDIR"] = tempfile.mkdtemp(prefix=f"pytest-{os.environ['PYTEST_XDIST_WORKER']}-")
    tempfile.tempdir = None


def pytest_sessionfinish(session, exitstatus):
    """A worker's own temporary folder goes with it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import shutil

        shutil.rmtree(os.environ["TMPDIR"], ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Tests marked `local` need llama-cpp-python (`pip install '.[local,test]'`): without it they are skipped,
    each with that reason, rather than failing on an import."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is not None:
        return
    skip = pytest.mark.skip(reason="needs the local extra: pip install '.[local,test]'")
    for item in items:
        if item.get_closest_marker("local"):
            item.add_marker(skip)


TEST_MODELS = ("scripted", "openai/fake", "openai/test-model", "openai/qwen-local")
"""The scripted model and the scripted servers' model names: the reader trusts their scripted answers."""


def trusting_calibration(path: Path) -> Path:
    """A reader calibration file in which the test doubles are calibrated as the tests script them: their answer
    is sure."""
    path.write_text(json.dumps({f"{name}:{kind}": trusting().to_dict() for name in TEST_MODELS
                                for kind in ("generic", "likelihood")}))
    return path


@pytest.fixture(autouse=True)
def own_settings(tmp_path, monkeypatch, request):
    """No test reads or writes the user's calibration files or saved prompt states (the scripted model's reader
    calibration trusts its scripted answers), and only tests marked `model` may load a real
    model (the embedded one, a GGUF, a remote model off loopback): the others fail loudly if they try."""
    monkeypatch.setenv("LCREAD_CALIBRATION", str(tmp_path / "calibration.json"))
    reader = trusting_calibration(tmp_path / "reader.json")
    monkeypatch.setenv("LCREAD_READER_CALIBRATION", str(reader))
    monkeypatch.setenv("LCREAD_KV_DIR", str(tmp_path / "kv"))
    if request.node.get_closest_marker("model") is None:
        monkeypatch.setenv("LCREAD_FORBID_MODELS", "1")
    else:
        monkeypatch.delenv("LCREAD_FORBID_MODELS", raising=False)


@pytest.fixture
def write(tmp_path):
    """Write a text (or bytes) file under tmp_path and return its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


def write_pdf(path: Path, count: int, text_of, password: str | None = None) -> Path:
    """A PDF of `count` pages, page N holding text_of(N) (encrypted with `password` when given)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for number in range(1, count + 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, text_of(number))
    if password:
        pdf.set_encryption(owner_password="owner", user_password=password)
    pdf.output(str(path))
    return path


def run_cli(*args: str, stdin: bytes | None = None, env: dict | None = None, timeout: float = 600, user=None):
    """Run the real entry point (`python -m lcread`) and return the completed process."""
    import subprocess

    return subprocess.run([sys.executable, "-m", "lcread", *args], input=stdin, capture_output=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, user=user)


def unprivileged(cmd: list[str]) -> list[str]:
    """The command run without the capabilities that let root read any file (unchanged for other users), so
    a permission test means the same as root as it does for a user."""
    if os.geteuid() != 0:
        return cmd
    drop = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={drop}", f"--bounding-set={drop}", *cmd]
