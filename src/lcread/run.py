"""One question over some inputs, any mode: the wiring that `lcread ask` and `lcread batch` share."""

from __future__ import annotations

from dataclasses import dataclass, field

from lcread.result import RunResult
from lcread.config import AcsConfig, LoopConfig, ToolConfig
from lcread.display import Display
from lcread.documents import DocumentStore
from lcread.errors import UsageError
from lcread.models import Model
from lcread.trace import Trace

SAC_READ_CHARS = 4000
"""sac's outputs are cut at this many characters unless --read-chars says otherwise: each step's context holds
one output, and a cut read continues where it stopped when asked again."""


@dataclass
class Settings:
    """Everything a run needs besides the model, the inputs and the question."""

    mode: str = "select"
    options: list[str] | None = None
    loop: LoopConfig = field(default_factory=LoopConfig)
    tools: ToolConfig = field(default_factory=ToolConfig)
    acs: AcsConfig = field(default_factory=AcsConfig)
    scorer: object | None = None
    """The reader's scorer (`lcread.reader.Scorer`): the model's calibration when None."""


def answer(model: Model, store: DocumentStore, question: str, settings: Settings, display: Display,
           trace: Trace) -> RunResult:
    run = MODES.get(settings.mode)
    if run is None:
        raise UsageError(f"unknown mode {settings.mode!r}: use --mode {', '.join(MODES)}")
    result = run(model, store, question, settings, display, trace)
    result.trace_id = getattr(trace, "run_id", None) or None  # the `run` field of this run's trace records
    return result


def _select(model, store, question, settings, display, trace):
    from lcread.agent.select import SelectReader
    from lcread.tools import ToolRunner

    tools = ToolRunner(store, settings.tools)
    return SelectReader(model, tools, display, trace, settings.loop, settings.scorer).run(question)


def _sac(model, store, question, settings, display, trace):
    from lcread.agent.sac import SacReader
    from lcread.tools import ToolRunner

    tools = settings.tools
    if "read_chars" not in tools.model_fields_set:  # one output per fresh context: a smaller one keeps it small
        tools = tools.model_copy(update={"read_chars": SAC_READ_CHARS})
    return SacReader(model, ToolRunner(store, tools), display, trace, settings.loop, settings.scorer).run(question)


def _acs(model, store, question, settings, display, trace):
    from lcread.acs.chunks import chunk_store
    from lcread.acs.policies import make_policy
    from lcread.acs.probe import Probe
    from lcread.reader.question import parse_options
    from lcread.acs.reader import FoldReader

    config = settings.acs.for_model(model)
    question, pairs = parse_options(question, split_options(settings.options))
    probe = Probe(model, question, pairs, config.top_k, config.draft_tokens, config.probe, config.draft_confidence)
    config, how = _calibrated(config, model, probe)
    reader = FoldReader(model, probe, make_policy(config), display, trace, config,  # checks log-probs first
                        grounding=lambda answer, notes: ground_notes(store, settings, question, pairs, answer, notes,
                                                                       model.name))
    label = f"acs · stop {config.stop}" + (f" · θ {config.theta:g}{how} · probe {probe.kind}"
                                           if config.stop == "acs" else "")
    display.start(question=question, model=model.name, mode=label, documents=store.listing(),
                  limit=model.context_window or 0)
    return reader.run(question, chunk_store(store, config.chunk_chars))


def ground_notes(store, settings: Settings, question: str, pairs, answer: str, notes: str, model: str = ""):
    """The evidence of an acs answer: its notes are lines copied from the document, so lcread finds each in the
    documents (ripgrep, no model) and the reader scores the answer on them over the generic features (the notes'
    prompt is not a reading the span likelihoods are calibrated on); citations carry line, characters and page."""
    from lcread.grounding.evidence import EvidenceLog
    from lcread.reader import Reader, asked, scorer_for
    from lcread.reader.candidates import key
    from lcread.tools import Command, ToolRunner

    tools = ToolRunner(store, settings.tools)
    log = EvidenceLog()
    for line in dict.fromkeys(n.strip() for n in notes.splitlines()):
        if len(line) >= 8:
            found = tools.run(Command("grep", "", patterns=[line[:100]], flags={"-F"}, max_count=2))
            log.add([p for p in found.shown if p.kind == "match"])

    def place_of(name: str, line: int):
        source = store.by_name[name].source if name in store.by_name else None
        return source.locate(line) if source is not None else None

    ranker = tools.question_ranker(question)
    reader = Reader(asked(question, pairs), log, settings.scorer or scorer_for(model, likelihood=False), ranker.score,
                    ranker.spans, place_of)
    reading = reader.read(reader.pool(), None, answer)
    reading.ranked = [r for r in reading.ranked if r.candidate.key == key(answer)]  # acs's answer, as scored
    return reading


def _calibrated(config, model, probe):
    """With --stop acs and no --theta: the θ calibrated for this model and probe (the user's, else the one
    shipped for the embedded model), if any."""
    if config.stop != "acs" or "theta" in config.model_fields_set:
        return config, ""
    from lcread.acs.calibrate import calibrated_theta

    found = calibrated_theta(model.name, probe.kind)
    if found is None:
        return config, ""
    theta, source = found
    return config.model_copy(update={"theta": theta}), f" ({source})"


def split_options(given: list[str] | None) -> list[str] | None:
    """Options may be given one per value, or several lettered options in one value."""
    if not given:
        return None
    from lcread.reader.question import parse_options

    if len(given) == 1:
        _, pairs = parse_options(given[0])
        if pairs:
            return [f"{letter}) {text}" for letter, text in pairs]
    return given


MODES = {"select": _select, "sac": _sac, "acs": _acs}
"""The ways of reading, by name: a new mode is a function of (model, store, question, settings, display, trace)
returning a RunResult, and one entry here (`--mode`, batch tasks and the MCP tool take their names from it)."""
