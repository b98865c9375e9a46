"""The library: `lcread.ask()` answers one question about some inputs, in any mode, with any model.

    import lcread

    result = lcread.ask(["contract.pdf"], "Which clause caps the refund?")
    result.answer, result.verified, result.citations, result.final, result.to_dict()

Options are the CLI's, with underscores (`max_steps=20`, `read_chars=4000`, `stop="end"`, `probe="letters"`,
`sufficiency=False`); each is validated by the config it belongs to, so the library and the CLI refuse the
same values with the same messages. Progress goes to `display` (any object with the Display methods;
`lcread.display.RichDisplay()` draws what the CLI draws), the run record to `trace` (a path, or any
object with an `event(kind, **data)` method).
"""

from __future__ import annotations

import threading
from pathlib import Path

from lcread.result import RunResult
from lcread.config import AcsConfig, ModelConfig, LoopConfig, ToolConfig, env_model
from lcread.display import Display, SilentDisplay
from lcread.errors import LcreadError, UsageError

OPTION_NAMES = {cls: cls.options() for cls in (LoopConfig, ToolConfig, AcsConfig, ModelConfig)}
"""Config -> its options (option name -> field name), as config.py declares them."""

QUESTION_CHARS = 20_000
"""The longest question lcread takes (the CLI, the library, batch tasks, MCP): a question is a sentence or a few,
and every pass over it must stay bounded."""

_models: dict[tuple, object] = {}
_models_lock = threading.Lock()


def ask(inputs: str | Path | list[str | Path], question: str, *, mode: str = "select", model=None,
        options: list[str] | None = None, display: Display | None = None, trace=None, on_warning=None,
        progress=None, scorer=None, **settings) -> RunResult:
    """Answer `question` about the files, folders (or "-" for stdin) in `inputs`, reading only what it needs.

    `model`: "local" (the embedded model, the default unless LCREAD_MODEL says otherwise), "local:/x.gguf",
    a litellm model string, or a Model object. `options`: answer options for a multiple-choice question.
    `on_warning(text)` hears about the inputs (skipped files, conversions) before the run starts;
    `progress(what, done, total)` about a long conversion. `scorer`: the reader's scorer (a
    `lcread.reader.Scorer`), when not the model's own calibration.
    Returns the RunResult: answer, final, verified, citations, missing, costs (`to_dict()` for JSON)."""
    check_arguments(inputs, question, model, display, trace, on_warning, progress)
    if options is not None and (not isinstance(options, (list, tuple)) or not all(isinstance(o, str) for o in options)):
        raise UsageError('options must be a list of answer texts, e.g. options=["A) Anne", "B) Elinor"]')
    configs = configs_from(settings)
    run_settings = _settings(mode, options, configs)
    run_settings.scorer = scorer
    llm = model if model is not None and not isinstance(model, str) else None
    return ask_with(inputs, question, llm or (lambda: load_model(model, configs[ModelConfig])),
                    run_settings, display=display, trace=trace, on_warning=on_warning, progress=progress)


def check_arguments(inputs, question, model=None, display=None, trace=None, on_warning=None, progress=None) -> None:
    """The library's arguments checked up front, each wrong one a one-line LcreadError that names it."""
    if not isinstance(question, str):
        raise UsageError(f"question must be text (a str), not {type(question).__name__}")
    if not question.strip():
        raise UsageError('the question is empty: ask something, e.g. lcread ask notes.txt "Who signed the lease?"')
    if len(question) > QUESTION_CHARS:
        raise UsageError(f"the question is {len(question):,} characters: ask in at most {QUESTION_CHARS:,}")
    items = [inputs] if isinstance(inputs, (str, Path)) else inputs
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, (str, Path)) for i in items):
        raise UsageError("inputs must be a path, or a list of paths (str or pathlib.Path), or '-' for stdin")
    if model is not None and not isinstance(model, str):
        check_model(model)
    if display is not None and not all(callable(getattr(display, m, None)) for m in ("start", "step", "finish")):
        raise UsageError("display must have the display methods (start, step, compaction, chunk, state, finish)")
    if trace is not None and not isinstance(trace, (str, Path)) and not callable(getattr(trace, "event", None)):
        raise UsageError("trace must be a file path or an object with an event(kind, **data) method")
    if isinstance(trace, (str, Path)) and Path(trace).is_dir():
        raise UsageError(f"trace {trace} is a folder: give a file to append the run record to")
    for name, value in (("on_warning", on_warning), ("progress", progress)):
        if value is not None and not callable(value):
            raise UsageError(f"{name} must be a function")


MODEL_PARTS = ("name", "context_window", "supports_grammar", "supports_logprobs", "supports_scoring", "scores_spans",
               "in_process", "chunk_chars", "query", "count_tokens", "score")
"""What a Model object must have (the Model protocol, lcread.models)."""


def check_model(model) -> None:
    """A Model object must have every part of the Model protocol: one line naming what it lacks."""
    lacking = [p for p in MODEL_PARTS if not hasattr(model, p)]
    if lacking:
        raise UsageError(f"model must be a model string or a Model object; this {type(model).__name__} has no "
                         f"{', '.join(lacking)} (see lcread.models.Model)")


def settings_from(mode: str, options: list[str] | None, settings: dict):
    """The run's settings from the options as given (validated; unknown names refused)."""
    return _settings(mode, options, configs_from(settings))


def _settings(mode: str, options: list[str] | None, configs: dict):
    from lcread.run import MODES, Settings

    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}: use --mode {', '.join(MODES)}")
    return Settings(mode=mode, options=options, loop=configs[LoopConfig], tools=configs[ToolConfig],
                    acs=configs[AcsConfig])


def ask_with(inputs: str | Path | list[str | Path], question: str, model, settings, *,
             display: Display | None = None, trace=None, on_warning=None, progress=None, confine=None) -> RunResult:
    """`ask` with its settings built (`settings_from`) and a model object, or a function that makes one: it is
    called only once the inputs are known to be readable. Batch and bench come in here."""
    from lcread.documents import DocumentStore
    from lcread.run import Settings, answer
    from lcread.trace import JsonlTrace, NullTrace

    check_arguments(inputs, question, None, display, trace)
    if not isinstance(settings, Settings):
        raise UsageError(f"settings must be built by lcread.api.settings_from(mode, options, {{...}}), not "
                         f"{type(settings).__name__}")
    if isinstance(model, str) or not (callable(model) or hasattr(model, "query")):
        raise UsageError("ask_with takes a Model object or a function that makes one: for a model string use "
                         "lcread.ask(..., model=NAME) or lcread.api.load_model(NAME)")
    if hasattr(model, "query"):
        check_model(model)

    inputs = [str(i) for i in ([inputs] if isinstance(inputs, (str, Path)) else inputs)]
    record = JsonlTrace(trace) if isinstance(trace, (str, Path)) else trace or NullTrace()
    try:
        with DocumentStore.open(inputs, progress=progress, confine=confine) as store:  # bad inputs are told before a model loads
            for warning in store.warnings:
                if on_warning:
                    on_warning(warning)
            llm = model if hasattr(model, "query") else model()
            result = answer(llm, store, question, settings, display or SilentDisplay(), record)
            result.warnings, result.documents = list(store.warnings), [d.name for d in store.docs]
            return result
    finally:
        if isinstance(trace, (str, Path)):
            record.close()


def configs_from(settings: dict) -> dict:
    """Each option into the config it belongs to; unknown names and bad values are one-line errors that name
    the option as the CLI spells it."""
    known = set().union(*(set(names) for names in OPTION_NAMES.values()))
    unknown = sorted(set(settings) - known)
    if unknown:
        raise UsageError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}: use "
                         f"{', '.join(sorted(known))}")
    out = {}
    for cls, names in OPTION_NAMES.items():
        values = {names[k]: v for k, v in settings.items() if k in names and v is not None}
        out[cls] = make_config(cls, **values)
    return out


def make_config(cls, **values):
    """A config from only the values given (the configs hold the defaults); a bad value is one line."""
    from pydantic import ValidationError

    try:
        return cls(**values)
    except ValidationError as e:
        err = e.errors()[0]
        message = err["msg"].removeprefix("Value error, ")
        if not err["loc"]:  # a rule across fields: its message names the options
            raise UsageError(message) from None
        field_name = str(err["loc"][0])
        name = next((o for o, f in cls.options().items() if f == field_name), field_name)
        raise UsageError(f"--{name.replace('_', '-')}: {message.lower()}") from None


def load_model(name: str | None, config: ModelConfig | None = None):
    """The backend a model string names, built once per process (loading the embedded model takes seconds)."""
    from lcread.models import get_model

    config = config or ModelConfig()
    config = config.model_copy(update={"name": name or env_model() or config.name})
    key = (config.name, config.api_base, config.timeout, config.local_context, config.threads)
    with _models_lock:
        if key not in _models:
            _models[key] = get_model(config)
        return _models[key]
