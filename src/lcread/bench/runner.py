"""lcread bench: every mode and stopping policy side by side on the same generated tasks and model."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Callable

from lcread import prompts
from lcread.acs.chunks import chunk_of, chunk_store
from lcread.acs.policies import RecordingPolicy, make_policy
from lcread.acs.probe import Probe
from lcread.errors import Stop
from lcread.reader.question import parse_options
from lcread.acs.reader import FoldReader
from lcread.acs.calibrate import Trajectory
from lcread.acs.replay import oracle_tokens, replay
from lcread.bench.corpus import austen_text
from lcread.bench.suites import (NIAH_KINDS, Task, count, hotpot_data, mc, niah, qa, real_tasks, rephrase, score,
                                 vt, where)
from lcread.config import AcsConfig, LoopConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.errors import LcreadError
from lcread.models import Model
from lcread.run import Settings, answer
from lcread.trace import MemoryTrace, Tee, Trace

SUITES = ("niah", "niah-single", "qa", "vt", "mc", "count", "where", "real")
MODES = ("select", "sac", "acs", "full-context", "select:unchecked", "sac:unchecked")
"""`:unchecked` runs the mode with --no-sufficiency: answers accepted as given (still checked and reported)."""
STOPS = ("acs", "full", "random", "verbalized", "end")


def make_tasks(suites: list[str], per_suite: int, lengths: list[int], seed: int, folder: Path,
               phrasings: int = 1) -> list[Task]:
    """`per_suite` tasks of each suite, lengths cycled and depths spread evenly, each asked in `phrasings` ways
    (the real suite has its own); deterministic for a seed."""
    rng = random.Random(seed)
    haystack = austen_text() if {"niah", "niah-single", "vt", "mc", "count", "where"} & set(suites) else ""
    data = hotpot_data() if "qa" in suites else []
    tasks = []
    for suite in suites:
        if suite == "real" or suite.startswith("real-"):  # per_suite of each document (or of one), every phrasing
            tasks += real_tasks(per_suite, None if suite == "real" else suite.removeprefix("real-"))
            continue
        for i in range(per_suite):
            chars, depth, tid = lengths[i % len(lengths)], (i + 0.5) / per_suite, f"{suite}-{seed}-{i:03d}"
            if suite == "niah":  # every kind at every length
                chars = lengths[(i // len(NIAH_KINDS)) % len(lengths)]
                tasks.append(niah(NIAH_KINDS[i % len(NIAH_KINDS)], haystack, chars, depth, rng, folder, tid))
            elif suite == "niah-single":
                tasks.append(niah("single", haystack, chars, depth, rng, folder, tid))
            elif suite == "mc":
                tasks.append(mc(haystack, chars, depth, rng, folder, tid))
            elif suite == "vt":
                tasks.append(vt(haystack, chars, 4, rng, folder, tid))
            elif suite in ("count", "where"):
                tasks.append({"count": count, "where": where}[suite](haystack, chars, depth, rng, folder, tid))
            elif suite == "qa":
                tasks.append(qa(data, chars, rng, folder, tid))
            else:
                raise LcreadError(f"unknown suite {suite!r}: use {', '.join(SUITES)}")
    return [t for task in tasks for t in (rephrase(task, phrasings) if task.group is None else [task])]


def labelled(task: Task, readings: list[dict]) -> list[dict]:
    """The reader's readings of a run, each candidate marked right or wrong by the bench's scorer: the examples
    `lcread calibrate --reader` fits on."""
    return [{"step": r.get("step"), "free": r.get("free"),
             "candidates": [{**c, "right": score(task, c["text"])} for c in r["candidates"]]} for r in readings]


def full_context(model: Model, task: Task, max_tokens: int = 64) -> dict:
    """The baseline that pastes the whole input into one call, when it fits the model's window."""
    text = Path(task.path).read_text(encoding="utf-8")
    options = "\n" + "\n".join(task.options) if task.options else ""
    messages = [{"role": "user", "content": prompts.render("full_context", document=text, question=task.question,
                                                           options=options)}]
    need = model.count_tokens(messages) + max_tokens
    if model.context_window and need > model.context_window:
        return {"answer": None, "error": f"does not fit ({need:,} tokens > {model.context_window:,})"}
    started = time.monotonic()
    reply = model.query(messages, max_tokens=max_tokens)
    return {"answer": reply.text.strip(), "error": None, "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens, "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            "peak_context": reply.prompt_tokens + reply.completion_tokens, "steps": 1, "compactions": 0,
            "wall_time": round(time.monotonic() - started, 3)}


def run_task(task: Task, model: Model, modes: list[str], stops: list[str], config: AcsConfig, trace: Trace,
             seed: int, loop: LoopConfig | None = None) -> list[dict]:
    """One row per mode (and per stopping policy for acs), all on the same task and model."""
    rows = []
    base = {"task": task.id, "suite": task.suite, "chars": task.chars, "expected": task.answers,
            **({"group": task.group} if task.group else {})}
    question = task.question + ("\n" + "\n".join(task.options) if task.options else "")
    for mode in modes:
        if mode == "full-context":
            out = full_context(model, task)
            rows.append({**base, "mode": mode, **out, "correct": score(task, out["answer"])})
        elif mode.split(":")[0] in ("select", "sac"):
            started = time.monotonic()
            settings = Settings(mode=mode.split(":")[0], loop=(loop or LoopConfig()).model_copy(
                update={"sufficiency": not mode.endswith(":unchecked"), "reader_check": True}))
            readings = MemoryTrace()
            with DocumentStore.open([task.path]) as store:
                result = answer(model, store, question, settings, SilentDisplay(), Tee(trace, readings))
                if result.stop.kind is Stop.INTERRUPTED:  # Ctrl-C or SIGTERM: the bench stops, its rows so far kept
                    raise KeyboardInterrupt
                found = _evidence_checks(task, store, result) if task.evidence_text else {}
            rows.append({**base, **result.to_dict(), "mode": mode, "error": None, **found,
                         "correct": score(task, result.answer), "wall_time": round(time.monotonic() - started, 3),
                         "readings": labelled(task, readings.of("reading"))})
        elif mode == "acs" and task.evidence_text:
            rows.append({**base, "mode": mode, "answer": None, "correct": False,
                         "error": "acs is not run on the real-document suite (its evidence is a line, not a chunk)"})
        elif mode == "acs":
            rows += _acs_rows(task, model, stops, config, trace, seed, base)
        else:
            raise LcreadError(f"unknown mode {mode!r}: use {', '.join(MODES)}")
    return rows


def evidence_lines(store: DocumentStore, text: str) -> set[tuple[str, int]]:
    """The (document, line) pairs whose line holds `text` (spacing aside)."""
    from lcread.tools.grep import count_matches  # noqa: F401  (rg is needed: fail early if it is missing)
    from lcread.tools import Command, ToolRunner

    want = " ".join(text.split())
    head = want[:40]
    found = ToolRunner(store).run(Command("grep", f"grep -F {head!r}", patterns=[head], flags={"-F"}))
    return {(s.doc, s.line) for s in found.shown if s.kind == "match" and want in " ".join(
        next(store.get(s.doc).read_lines(s.line, s.line, 1 << 16)).text.split())}


def _evidence_checks(task: Task, store: DocumentStore, result) -> dict:
    """For a real-document task: whether the answer cites the evidence line (attributed), and whether lcread's
    ranked first step (no model) already shows it."""
    from lcread.agent.run import SEARCHED_KINDS
    from lcread.reader.question import asked, parse_options
    from lcread.tools import ToolRunner
    from lcread.tools.search import TOP

    lines = evidence_lines(store, task.evidence_text)
    question = parse_options(task.question)[0]  # searched as the run's first step searches it
    first = ToolRunner(store).ranked(question, top=TOP, kind=SEARCHED_KINDS.get(asked(question).type))
    shown = {(s.doc, s.line) for s in first.shown}
    cited = {(c.doc, c.line) for c in result.citations}
    return {"evidence_lines": sorted(lines), "cites_evidence": bool(cited & lines),
            "first_step_holds_evidence": bool(shown & lines), "evidence_found": bool(lines)}


def _acs_rows(task, model, stops, config, trace, seed, base) -> list[dict]:
    """One recorded reading, replayed under every stopping policy (each charged for its own calls) and,
    for multiple choice, read by every probe in `config.probe` (comma-separated), side by side."""
    question, pairs = parse_options(task.question, task.options)
    config = config.for_model(model).model_copy(update={"seed": seed})
    if pairs:  # multiple choice: every probe of --probes
        probes = [Probe(model, question, pairs, config.top_k, config.draft_tokens, kind) for kind in config.probe.split(",")]
    else:  # open-ended: the draft's confidence taken both ways
        probes = [Probe(model, question, [], config.top_k, config.draft_tokens, confidence=how) for how in ("min", "mean")]
    with DocumentStore.open([task.path]) as store:
        chunks = chunk_store(store, config.chunk_chars)
        evidence = max(chunk_of(chunks, start) for start, _ in task.evidence)
        steps = FoldReader(model, probes, RecordingPolicy(), SilentDisplay(), trace,
                           config.model_copy(update={"probe": "auto"})).run(question, chunks).steps
    rows = []
    for probe in (p.kind for p in probes):
        states = [s.probes[probe].value for s in steps]
        full_tokens = sum(s.fold_tokens for s in steps) + steps[-1].probes[probe].tokens
        trajectory = Trajectory(task.id, probe, evidence, [s.fold_tokens for s in steps],
                                [s.probes[probe].tokens for s in steps], states,
                                [score(task, s.answer) for s in states])
        for name in stops:
            o = replay(make_policy(config.model_copy(update={"stop": name})), steps, probe)
            rows.append({**base, "mode": f"acs/{name}" + (f"·{probe}" if len(probes) > 1 else ""),
                         "probe": probe, "answer": o.answer, "error": None, "total_tokens": o.tokens,
                         "probe_tokens": o.probe_tokens, "wall_time": round(o.seconds, 3), "steps": o.stop,
                         "chunks_total": len(chunks), "evidence_chunk": evidence, "full_tokens": full_tokens,
                         "oracle_tokens": oracle_tokens(steps, evidence, probe), "correct": score(task, o.answer)})
        rows[-1]["reading"] = trajectory.to_dict()  # what lcread calibrate replays at other thresholds
    return rows


def run_bench(tasks: list[Task], model: Model, modes: list[str], stops: list[str], config: AcsConfig, trace: Trace,
              seed: int, on_rows: Callable[[list[dict]], None], loop: LoopConfig | None = None) -> list[dict]:
    rows = []
    for task in tasks:
        new = run_task(task, model, modes, stops, config, trace, seed, loop)
        rows += new
        on_rows(new)
    return rows
