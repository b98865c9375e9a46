"""lcread batch: many questions, one result line each, appended and flushed as each completes, so
nothing is lost: a killed batch resumed with --resume yields exactly one result per task."""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, ValidationError

from lcread.bench.suites import score_answer
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.errors import LcreadError
from lcread.models import Model
from lcread.run import Settings, answer
from lcread.trace import Trace


class BatchTask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    documents: list[str]
    question: str
    options: list[str] | None = None
    mode: str | None = None
    stop: str | None = None
    model: str | None = None
    expected: str | None = None


def load_tasks(path: Path) -> list[BatchTask]:
    """Every task of a JSONL file; a bad line is an error naming the line, before anything runs."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise LcreadError(f"cannot read {path}: {e.strerror}") from None
    tasks, seen = [], set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            task = BatchTask.model_validate_json(line)
        except ValidationError as e:
            err = e.errors()[0]
            raise LcreadError(f"{path}:{n}: {'.'.join(map(str, err['loc'])) or 'line'}: {err['msg']}") from None
        if task.id in seen:
            raise LcreadError(f"{path}:{n}: task id {task.id!r} appears twice")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise LcreadError(f"{path} holds no tasks")
    return tasks


def completed_ids(out: Path) -> set[str]:
    """Ids already in the results file; a last line cut by a kill is removed so appending stays valid."""
    if not out.exists():
        return set()
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with open(out, "r+b") as f:
            f.truncate(len(data))
    ids = set()
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            ids.add(json.loads(line)["id"])
        except (ValueError, KeyError, TypeError):
            continue
    return ids


class ResultWriter:
    """Appends one JSON line per result and flushes it to disk at once (thread-safe)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, row: dict) -> None:
        with self._lock:
            self._file.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def run_task(task: BatchTask, models: Callable[[str | None], Model], settings: Settings, trace: Trace) -> dict:
    """One task to one result row; a failure is recorded in the row, never raised."""
    started = time.monotonic()
    row: dict = {"id": task.id, "question": task.question, "mode": task.mode or settings.mode}
    try:
        model = models(task.model)
        task_settings = Settings(mode=task.mode or settings.mode, options=task.options or settings.options,
                                 select=settings.select, tools=settings.tools,
                                 acs=settings.acs.model_copy(update={"stop": task.stop}) if task.stop else settings.acs)
        with DocumentStore.open(task.documents) as store:
            result = answer(model, store, task.question, task_settings, SilentDisplay(), trace)
        if result.reason == "interrupted":
            raise KeyboardInterrupt  # not a result: a resumed batch runs this task again
        row.update(result.to_dict(), error=None)
    except LcreadError as e:
        row.update(answer=None, error=str(e))
    except Exception as e:  # a batch goes on whatever one task does
        row.update(answer=None, error=f"{type(e).__name__}: {e}")
    row["wall_time"] = round(time.monotonic() - started, 3)
    if task.expected is not None:
        row["expected"] = task.expected
        row["correct"] = score_answer(row.get("answer"), [task.expected], task.options)
    return row


def run_batch(tasks: list[BatchTask], writer: ResultWriter, models: Callable[[str | None], Model],
              settings: Settings, trace: Trace, concurrency: int, on_result: Callable[[dict], None]) -> list[dict]:
    """Run tasks, `concurrency` at a time for remote models; the in-process model runs one at a time."""
    rows = []

    def work(task: BatchTask) -> dict:
        return run_task(task, models, settings, trace)

    local = [t for t in tasks if _is_local(models, t)]
    remote = [t for t in tasks if t not in local]
    for task in local:
        row = work(task)
        writer.write(row)
        rows.append(row)
        on_result(row)
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        for future in as_completed([pool.submit(work, t) for t in remote]):
            row = future.result()
            writer.write(row)
            rows.append(row)
            on_result(row)
    return rows


def _is_local(models: Callable[[str | None], Model], task: BatchTask) -> bool:
    try:
        return getattr(models(task.model), "in_process", False)
    except LcreadError:
        return True  # run alone; the task records the error when it runs
