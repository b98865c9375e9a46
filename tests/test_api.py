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
    assert [name for name, _ in seen.events] == ["start", "step", "step", "finish"]  # lcread's first step, the grep
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert records[0]["event"] == "run_start" and records[-1]["event"] == "run_end"
    assert result.trace_id and {r["run"] for r in records} == {result.trace_id}
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


def test_settings_from_puts_each_option_in_its_config():
    from lcread.api import settings_from

    settings = settings_from("sac", ["A) 1", "B) 2"], {"max_steps": 7, "read_chars": 3000, "theta": 0.9,
                                                      "sufficiency": False})
    assert (settings.mode, settings.options) == ("sac", ["A) 1", "B) 2"])
    assert (settings.loop.max_steps, settings.loop.sufficiency, settings.tools.read_chars, settings.acs.theta) == \
        (7, False, 3000, 0.9)
    assert settings_from("select", None, {}).loop.max_steps == lcread.api.LoopConfig().max_steps


def test_configs_from_and_make_config_name_the_option_as_the_cli_spells_it():
    from lcread.api import configs_from, make_config
    from lcread.config import ModelConfig, ToolConfig

    configs = configs_from({"call_timeout": 12.5, "max_tokens": 9000})
    assert configs[ModelConfig].timeout == 12.5 and configs[lcread.api.LoopConfig].max_total_tokens == 9000
    assert make_config(ToolConfig, read_chars=2000).read_chars == 2000
    with pytest.raises(LcreadError, match="--read-chars: input should be less than or equal to 8000"):
        make_config(ToolConfig, read_chars=9000)
    with pytest.raises(LcreadError, match="--call-timeout"):
        configs_from({"call_timeout": "soon"})


def test_ask_with_makes_the_model_only_once_the_inputs_are_readable(write, tmp_path):
    from lcread.api import ask_with, settings_from

    made = []

    def make():
        made.append(1)
        return ScriptedModel(["grep -i 'Marlow Street'", 'answer "12,310"'])

    with pytest.raises(LcreadError, match="no such file"):
        ask_with([tmp_path / "missing.txt"], "q?", make, settings_from("select", None, {}))
    assert made == []
    result = ask_with(write("r.txt", DOC), "How many beds did the Marlow Street hospital report?", make,
                      settings_from("select", None, {}))
    assert made == [1] and result.answer == "12,310" and result.verified


def test_every_option_of_ask_is_declared_once_in_a_config():
    """The command line's settings are the configs' options (config.py declares each with its default and
    bounds): a new option cannot reach the CLI without a config field, nor be spelled two ways."""
    import inspect

    from lcread.api import OPTION_NAMES
    from lcread.cli import ask

    declared = [name for names in OPTION_NAMES.values() for name in names]
    assert len(declared) == len(set(declared))
    not_settings = {"inputs", "question", "model", "mode", "json_out", "quiet", "trace", "options", "no_sufficiency"}
    assert set(inspect.signature(ask).parameters) - not_settings <= set(declared)
