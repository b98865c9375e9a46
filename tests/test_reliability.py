"""Reliability round 3: endings that keep their documented status, inputs that change under a run, the library's
arguments, names that stay unique and inert."""

import os
import subprocess
import sys
import time

import pytest

import lcread
from conftest import run_cli
from lcread.agent.select import SelectReader
from lcread.config import LoopConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.errors import LcreadError, ModelError
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner, parse
from lcread.trace import MemoryTrace


def test_a_document_removed_during_the_run_is_an_observation_not_a_crash(write):
    doc = write("gone.txt", "".join(f"line {i}\n" for i in range(100)))
    store = DocumentStore.open([str(doc)])
    doc.unlink()
    out = ToolRunner(store).run(parse("read gone.txt 1 5"))
    assert out.error and "moved or removed during the run" in out.text


def test_a_call_cut_by_the_run_s_time_limit_ends_it_as_a_limit(write):
    doc = write("d.txt", "".join(f"line {i}\n" for i in range(2000)))

    def slow(messages):
        time.sleep(1.2)
        raise ModelError("the model server timed out")

    model = ScriptedModel([slow])
    reader = SelectReader(model, ToolRunner(DocumentStore.open([str(doc)])), SilentDisplay(), MemoryTrace(),
                          LoopConfig(max_seconds=1.0, first_step=False))
    result = reader.run("What is on line 5?")
    assert not result.final and result.reason.startswith("time limit")


@pytest.mark.parametrize("kwargs, message", [
    ({"question": 123}, "question must be text"),
    ({"question": b"bytes?"}, "question must be text"),
    ({"inputs": 123}, "inputs must be a path"),
    ({"inputs": None}, "inputs must be a path"),
    ({"inputs": b"/tmp/x"}, "inputs must be a path"),
    ({"model": 123}, "model must be a model string or a Model object"),
    ({"trace": 123}, "trace must be a file path"),
    ({"display": 123}, "display must have the display methods"),
    ({"on_warning": 123}, "on_warning must be a function"),
    ({"max_stepz": 3, "colour": "red"}, "unknown options 'colour', 'max_stepz'"),
])
def test_the_library_refuses_wrong_arguments_with_one_line_naming_them(write, kwargs, message):
    doc = write("d.txt", "The vault code is 7261.\n")
    args = {"inputs": str(doc), "question": "What is the vault code?", "model": ScriptedModel([]), **kwargs}
    with pytest.raises(LcreadError, match=message):
        lcread.ask(args.pop("inputs"), args.pop("question"), **args)


def test_a_trace_that_is_a_folder_is_refused(write, tmp_path):
    doc = write("d.txt", "x\n")
    with pytest.raises(LcreadError, match="is a folder"):
        lcread.ask(str(doc), "q?", model=ScriptedModel([]), trace=tmp_path)


def test_document_names_stay_unique_and_inert(tmp_path):
    for folder, name in (("n1", "a-2.txt"), ("n2", "a.txt"), ("n3", "a.txt")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(f"from {folder}\n")
    store = DocumentStore.open([str(tmp_path / f / n) for f, n in (("n1", "a-2.txt"), ("n2", "a.txt"),
                                                                      ("n3", "a.txt"))])
    names = [d.name for d in store.docs]
    assert len(set(names)) == 3
    tools = ToolRunner(store)
    assert [tools.run(parse(f"read {n} 1 1")).text for n in names] == ["1: from n1", "1: from n2", "1: from n3"]
    odd = tmp_path / "bad\nname\u061c.txt"
    odd.write_text("x\n")
    listed = DocumentStore.open([str(odd)]).listing()
    assert "\n" not in listed and "\u061c" not in listed


def test_stdin_of_zeros_is_refused_at_once_and_leaves_nothing(tmp_path):
    import tempfile

    before = set(os.listdir(tempfile.gettempdir()))
    started = time.monotonic()
    with open("/dev/zero", "rb") as zeros:
        proc = subprocess.run([sys.executable, "-m", "lcread", "ask", "-", "q?"], stdin=zeros, capture_output=True,
                              timeout=60)
    assert time.monotonic() - started < 30
    assert proc.returncode == 1 and "stdin looks binary" in proc.stderr.decode()
    assert not [n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("lcread-stdin-")]


def test_environment_numbers_that_are_not_numbers_name_the_variable(write):
    doc = write("r.pdf.gz", b"\x1f\x8b" + b"x" * 20)
    proc = run_cli("ask", str(doc), "q", env={"LCREAD_CACHE_BYTES": "abc", "LCREAD_MODEL": "local:/none.gguf"})
    assert proc.returncode == 1 and "LCREAD_CACHE_BYTES='abc' is not a whole number" in proc.stderr.decode()
    proc = run_cli("ask", str(doc), "q", env={"LCREAD_CONVERT_DIR": str(doc), "LCREAD_MODEL": "local:/none.gguf"})
    assert proc.returncode == 1 and "point LCREAD_CONVERT_DIR at a folder" in proc.stderr.decode()
