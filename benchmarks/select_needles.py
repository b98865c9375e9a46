"""Select mode on 20 single-needle tasks over Jane Austen's novels, with the embedded model.

    python benchmarks/select_needles.py [--seed N] [--out bench-results/select]

Prints accuracy, median tokens per question, peak live context, median wall time, and the share of
the document's tokens consumed at each length. Targets (issue 2): >= 18/20 correct; peak live
context <= 8K tokens; at 1M characters, <= 2% of the document's tokens consumed per question.
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

from lcread.agent.select import SelectReader
from lcread.bench.corpus import austen_text
from lcread.bench.needles import DEPTHS, LENGTHS, is_correct, needle_tasks
from lcread.config import ModelConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.models import get_model
from lcread.tools import ToolRunner
from lcread.trace import JsonlTrace



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, default=Path("bench-results/select"))
    args = parser.parse_args()
    console = Console(stderr=True)
    tasks = needle_tasks(austen_text(), LENGTHS, DEPTHS, args.seed, args.out / "docs")
    model = get_model(ModelConfig(name=args.model))
    trace = JsonlTrace(args.out / "trace.jsonl")
    rows = []
    for task in tasks:
        with DocumentStore.open([task.path]) as store:
            reader = SelectReader(model, ToolRunner(store), SilentDisplay(), trace)
            started = time.monotonic()
            result = reader.run(task.question)
            doc_tokens = _doc_tokens(model, Path(task.path))
        row = {"id": task.id, "chars": task.chars, "depth": task.depth, "expected": task.answer,
               "answer": result.answer, "correct": is_correct(result.answer, task.answer),
               "doc_tokens": doc_tokens, **result.to_dict(), "wall_time": round(time.monotonic() - started, 2)}
        row["consumed"] = row["total_tokens"] / doc_tokens
        rows.append(row)
        console.print(f"{task.id} {task.chars:>9,} chars depth {task.depth:.2f}: "
                      f"{'ok ' if row['correct'] else 'MISS'} {row['steps']} steps {row['total_tokens']:>6,} tok "
                      f"peak {row['peak_context']:,} {row['wall_time']:.1f}s  answer={result.answer[:60]!r}")
    (args.out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report(rows, Console(width=150))
    return 0


def _doc_tokens(model, path: Path) -> int:
    """The document's size in the model's own tokens (what pasting it whole would cost)."""
    text = path.read_text(encoding="utf-8")
    if hasattr(model, "llm"):
        return len(model.llm.tokenize(text.encode("utf-8"), add_bos=False))
    from lcread.models.tokens import count_text

    return count_text(text)


def _nominal(chars: int) -> int:
    return min(LENGTHS, key=lambda n: abs(n - chars))


def report(rows: list[dict], console: Console) -> None:
    table = Table(title="select mode, single needle, embedded model")
    for col in ("chars", "tasks", "correct", "median tokens", "median processed", "peak context",
                "median steps", "median s", "doc tokens", "consumed"):
        table.add_column(col, justify="right")
    for chars in LENGTHS:
        group = [r for r in rows if _nominal(r["chars"]) == chars]
        if not group:
            continue
        table.add_row(f"{chars:,}", str(len(group)), str(sum(r["correct"] for r in group)),
                      f"{statistics.median(r['total_tokens'] for r in group):,.0f}",
                      f"{statistics.median(r['processed_tokens'] for r in group):,.0f}",
                      f"{max(r['peak_context'] for r in group):,}",
                      f"{statistics.median(r['steps'] for r in group):.0f}",
                      f"{statistics.median(r['wall_time'] for r in group):.1f}",
                      f"{statistics.median(r['doc_tokens'] for r in group):,.0f}",
                      f"{statistics.median(r['consumed'] for r in group):.2%}")
    console.print(table)
    correct = sum(r["correct"] for r in rows)
    console.print(f"accuracy {correct}/{len(rows)} · median tokens/question "
                  f"{statistics.median(r['total_tokens'] for r in rows):,.0f} · peak live context "
                  f"{max(r['peak_context'] for r in rows):,} · median wall time "
                  f"{statistics.median(r['wall_time'] for r in rows):.1f} s · max consumed at 1M chars "
                  f"{max((r['consumed'] for r in rows if r['chars'] >= 900_000), default=0):.2%}")


if __name__ == "__main__":
    sys.exit(main())
