"""The library: lcread.ask and its options, on the scripted model."""

import json

import pytest

import lcread
from lcread.errors import LcreadError
from lcread.models.scripted import ScriptedModel

DOC = "intro\nThe Marlow Street hospital reported 12,310 beds in its last survey.\n"


class Recorder:
    """A display that keeps what it is told (the observer form of the API)."""

    def __init__(self):
        self.events = []

    def __getattr__(self, name):
        return lambda **kw: self.events.append((name, kw))


def test_ask_answers_with_citations_and_reports_to_an_observer(write, tmp_path):
    doc = write("report.txt", DOC)
    seen, warnings = Recorder(), []
    model = ScriptedModel(["grep -i 'Marlow Street'", 'answer "12,310"'])
    result = lcread.ask(doc, "How many beds did the Marlow Street hospital report?", model=model, display=seen,
                        trace=tmp_path / "t.jsonl", on_warning=warnings.append, max_steps=5)
    assert (result.answer, result.final, result.verified) == ("12,310", True, True)
    assert result.citations[0].line == 2 and result.documents == ["report.txt"] and warnings == []
    assert [name for name, _ in seen.events] == ["start", "step", "finish"]
    events = [json.loads(line)["event"] for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert events[0] == "run_start" and events[-1] == "run_end"
    assert result.to_dict()["citations"][0]["quote"].startswith("The Marlow Street hospital")


def test_the_library_refuses_what_the_cli_refuses(write):
    doc = write("report.txt", DOC)
    model = ScriptedModel([])
    cases = [({"max_stepz": 3}, "unknown option 'max_stepz'"), ({"read_chars": 0}, "--read-chars: input should be"),
             ({"max_tokens": "abc"}, "--max-tokens: input should be a valid integer"),
             ({"compact_at": 20000}, "--compact-at (20000) must be below the context limit"),
             ({"stop": "sometimes"}, "--stop: input should be 'acs'"), ({"mode": "fast"}, "unknown mode 'fast'")]
    for options, message in cases:
        with pytest.raises(LcreadError, match=message.replace("(", r"\(").replace(")", r"\)")):
            lcread.ask(doc, "q?", model=model, **options)
    with pytest.raises(LcreadError, match="the question is empty"):
        lcread.ask(doc, "  ", model=model)
    assert model.calls == []


def test_load_model_builds_each_backend_once():
    first = lcread.load_model("openai/fake", None)
    assert lcread.load_model("openai/fake", None) is first
