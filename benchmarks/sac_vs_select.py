"""sac against select on the same 20 single-needle tasks, embedded model.

    python benchmarks/sac_vs_select.py [--seed N]

Prints, per mode: accuracy, median and total tokens, peak live context (the target for sac: under 3K
tokens at every step), median steps and median wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from lcread.agent.sac import SacReader
from lcread.agent.select import SelectReader
from lcread.bench.corpus import austen_text
from lcread.bench.needles import DEPTHS, LENGTHS, is_correct, needle_tasks
from lcread.config import ModelConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.models import get_model
from lcread.tools import ToolRunner
from lcread.trace import JsonlTrace

MODES = {"select": SelectReader, "sac": SacReader}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=404)
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, default=Path("bench-results/sac"))
    args = parser.parse_args()
    console = Console(stderr=True)
    tasks = needle_tasks(austen_text(), LENGTHS, DEPTHS, args.seed, args.out / "docs")
    model = get_model(ModelConfig(name=args.model))
    trace = JsonlTrace(args.out / "trace.jsonl")
    rows = []
    for task in tasks:
        for mode, loop in MODES.items():
            with DocumentStore.open([task.path]) as store:
                started = time.monotonic()
                result = loop(model, ToolRunner(store), SilentDisplay(), trace).run(task.question)
            row = {"id": task.id, "mode": mode, "chars": task.chars, "expected": task.answer,
                   "correct": is_correct(result.answer, task.answer), **result.to_dict(),
                   "wall_time": round(time.monotonic() - started, 2)}
            rows.append(row)
            console.print(f"{task.id} {mode:>6} {task.chars:>9,} chars: {'ok ' if row['correct'] else 'MISS'} "
                          f"{row['steps']} steps {row['total_tokens']:>6,} tok peak {row['peak_context']:,} "
                          f"{row['wall_time']:.1f}s {row['stop_reason']} answer={result.answer[:50]!r}")
    (args.out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = Table(title=f"sac vs select, {len(tasks)} needle tasks (50K-1M characters), embedded model")
    for col in ("mode", "correct", "median tokens", "total tokens", "peak context", "median steps", "median s",
                "answered", "limit-ended"):
        table.add_column(col, justify="right")
    for mode in MODES:
        group = [r for r in rows if r["mode"] == mode]
        table.add_row(mode, f"{sum(r['correct'] for r in group)}/{len(group)}",
                      f"{statistics.median(r['total_tokens'] for r in group):,.0f}",
                      f"{sum(r['total_tokens'] for r in group):,}", f"{max(r['peak_context'] for r in group):,}",
                      f"{statistics.median(r['steps'] for r in group):.0f}",
                      f"{statistics.median(r['wall_time'] for r in group):.1f}",
                      str(sum(r['final'] for r in group)), str(sum(not r['final'] for r in group)))
    Console(width=150).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
