"""`lcread bench`: generate the tasks, run every mode on them, write results.json and report.png, print
the tables."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from pathlib import Path

from rich.console import Console

from lcread.api import load_model, make_config
from lcread.bench.report import bench_plot, bench_summary, bench_table, grounding_summary, grounding_table
from lcread.bench.runner import MODES, STOPS, SUITES, make_tasks, run_bench
from lcread.bench.suites import Task, real_documents
from lcread.config import AcsConfig, LoopConfig, ModelConfig
from lcread.errors import LcreadError
from lcread.trace import JsonlTrace


def picked(text: str, kind: str, allowed: tuple[str, ...]) -> list[str]:
    """A comma-separated list, every item one of `allowed`."""
    items = [x for x in text.split(",") if x]
    bad = [x for x in items if x not in allowed]
    if bad:
        raise LcreadError(f"unknown {kind} {bad[0]!r}: use {', '.join(allowed)}")
    return items


def matching(tasks: list[Task], only: str | None) -> list[Task]:
    """The tasks whose id, or whose question's id (a real task's group), matches one of the comma-separated
    patterns of `only` (all of them without it)."""
    if not only:
        return tasks
    patterns = [p.strip() for p in only.split(",") if p.strip()]
    kept = [t for t in tasks if any(fnmatchcase(t.id, p) or t.group and fnmatchcase(t.group, p) for p in patterns)]
    if not kept:
        raise LcreadError(f"--only {only!r} matches none of the {len(tasks)} tasks of these suites: give task ids "
                          f"such as {tasks[0].id if tasks else 'bash-127-a'}, or patterns such as 'bash-*'")
    return kept


def run(*, suites: str, modes: str, stops: str, tasks: int, lengths: str, seed: int, model: str | None,
        api_base: str | None, chunk_chars: int | None, notes_chars: int | None, probes: str, out: Path,
        phrasings: int = 1, max_steps: int | None = None, only: str | None = None) -> list[dict]:
    chosen = {"suites": picked(suites, "suite", SUITES + tuple(f"real-{d}" for d in real_documents())),
              "modes": picked(modes, "mode", MODES),
              "stops": picked(stops, "stop", STOPS)}
    try:
        sizes = [int(x) for x in lengths.split(",") if x]
    except ValueError:
        raise LcreadError(f"--lengths takes whole numbers of characters, not {lengths!r}") from None
    for kind in probes.split(","):
        make_config(AcsConfig, probe=kind)  # each must be a probe kind
    given = {k: v for k, v in (("chunk_chars", chunk_chars), ("notes_chars", notes_chars)) if v is not None}
    config = make_config(AcsConfig, **given).model_copy(update={"probe": probes})
    console = Console(stderr=True)
    generated = matching(make_tasks(chosen["suites"], tasks, sizes, seed, out / "tasks", phrasings), only)
    llm = load_model(model, make_config(ModelConfig, **({"api_base": api_base} if api_base else {})))
    trace = JsonlTrace(out / "trace.jsonl")
    loop = make_config(LoopConfig, **({"max_steps": max_steps} if max_steps else {}))
    settings = {**chosen, "tasks_per_suite": tasks, "lengths": sizes, "seed": seed, "model": llm.name,
                "phrasings": phrasings, **({"max_steps": max_steps} if max_steps else {}),
                **({"only": only} if only else {})}
    done: list[dict] = []

    def task_done(new: list[dict]) -> None:  # results so far on disk after every task: a long run can be cut
        done.extend(new)
        for row in new:
            console.print(progress_line(row))
        (out / "results.json").write_text(json.dumps({"settings": settings, "partial": True, "rows": done},
                                                     indent=1, default=str))

    try:
        rows = run_bench(generated, llm, chosen["modes"], chosen["stops"], config, trace, seed, task_done, loop)
    finally:
        trace.close()
    write_results(out, rows, settings)
    console.print(f"results: {out / 'results.json'} · plot: {out / 'report.png'}")
    return rows


def progress_line(row: dict) -> str:
    mark = "ok  " if row["correct"] else ("--  " if row.get("error") else "MISS")
    return (f"{row['task']:<16} {row['mode']:<16} {mark} {row.get('total_tokens') or 0:>8,} tok "
            f"{row.get('wall_time') or 0:>6.1f}s {str(row.get('error') or row['answer'])[:50]!r}")


def write_results(out: Path, rows: list[dict], settings: dict) -> None:
    """results.json (settings, summaries, every row), report.png, and the tables on stdout."""
    summary, grounding = bench_summary(rows), grounding_summary(rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"settings": settings, "summary": summary, "grounding": grounding,
                                                  "rows": rows}, indent=1, default=str))
    bench_plot(summary, out / "report.png")
    Console(width=170).print(bench_table(summary))
    if grounding:
        Console(width=170).print(grounding_table(grounding))
