"""What a batch shows while it runs and when it ends."""

from __future__ import annotations

import statistics

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table


class BatchProgress:
    """A progress bar with done / failed / tokens so far / ETA."""

    def __init__(self, console: Console, total: int, skipped: int = 0):
        self.progress = Progress(TextColumn("batch"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), TextColumn("ETA"),
                                 TimeRemainingColumn(), console=console, transient=False)
        self.failed = self.tokens = 0
        self.skipped = skipped
        self.task = self.progress.add_task("batch", total=total, stats=self._stats())

    def _stats(self) -> str:
        skipped = f" · {self.skipped} skipped" if self.skipped else ""
        return f"failed {self.failed} · {self.tokens:,} tokens{skipped}"

    def advance(self, row: dict) -> None:
        self.failed += row.get("error") is not None
        self.tokens += row.get("total_tokens") or 0
        self.progress.update(self.task, advance=1, stats=self._stats())

    def __enter__(self) -> "BatchProgress":
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()


def summary_table(rows: list[dict]) -> Table:
    """Per mode: tasks, failures, accuracy where `expected` was given, tokens and time."""
    table = Table(title=f"{len(rows)} tasks run")
    for col in ("mode", "tasks", "failed", "accuracy", "total tokens", "median tokens", "median s"):
        table.add_column(col, justify="right")
    for mode in sorted({r["mode"] for r in rows}):
        group = [r for r in rows if r["mode"] == mode]
        scored = [r for r in group if "correct" in r]
        ok = [r for r in group if r.get("error") is None]
        table.add_row(mode, str(len(group)), str(len(group) - len(ok)),
                      f"{sum(r['correct'] for r in scored)}/{len(scored)}" if scored else "-",
                      f"{sum(r.get('total_tokens') or 0 for r in group):,}",
                      f"{statistics.median(r['total_tokens'] for r in ok):,.0f}" if ok else "-",
                      f"{statistics.median(r['wall_time'] for r in group):.1f}" if group else "-")
    return table
