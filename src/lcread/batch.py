"""lcread batch: many questions, one result line each, appended and flushed as each completes, so
nothing is lost: a killed batch resumed with --resume yields exactly one result per task."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, ValidationError

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from lcread.api import QUESTION_CHARS, ask_with, load_model, make_config
from lcread.config import ModelConfig, env_model
from lcread.errors import LcreadError
from lcread.models import Model
from lcread.result import score_answer
from lcread.errors import Stop
from lcread.run import Settings
from lcread.trace import JsonlTrace, NullTrace, Trace


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
        lines = path.read_text(encoding="utf-8-sig").splitlines()  # a byte-order mark (some editors write one) aside
    except UnicodeDecodeError as e:
        raise LcreadError(f"{path} is not UTF-8 text (byte {e.start:,}): a task file is JSON lines") from None
    except OSError as e:
        raise LcreadError(f"cannot read {path}: {(e.strerror or str(e)).lower()}") from None
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
        problem = _invalid(task)
        if problem:
            raise LcreadError(f"{path}:{n}: {problem}")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise LcreadError(f"{path} holds no tasks")
    return tasks


def _invalid(task: BatchTask) -> str | None:
    """What the CLI would refuse in a task: an empty question, an unknown mode or stopping policy, no documents."""
    from lcread.config import AcsConfig
    from lcread.run import MODES

    if not task.question.strip():
        return "question: the question is empty"
    if len(task.question) > QUESTION_CHARS:
        return f"question: {len(task.question):,} characters; ask in at most {QUESTION_CHARS:,}"
    if not task.documents:
        return "documents: give at least one file or folder"
    if task.mode is not None and task.mode not in MODES:
        return f"mode: unknown mode {task.mode!r}: use {', '.join(MODES)}"
    if task.stop is not None and task.stop not in AcsConfig.model_fields["stop"].annotation.__args__:
        return f"stop: unknown stopping policy {task.stop!r}: use acs, full, random, verbalized or end"
    return None


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
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")
        except OSError as e:
            raise LcreadError(f"cannot write the results to {path} ({(e.strerror or str(e)).lower()}): give --out a "
                              "file in a folder you can write") from None
        self._lock = threading.Lock()

    def write(self, row: dict) -> None:
        with self._lock:
            try:
                self._file.write(json.dumps(row, ensure_ascii=False) + "\n")
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as e:
                raise LcreadError(f"cannot write the results to {self.path} ({(e.strerror or str(e)).lower()}): the "
                                  "results written so far are kept; make room and run again with --resume") from None

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:
            pass  # a write that failed has said so already; what was written is kept


def run_task(task: BatchTask, models: Callable[[str | None], Model], settings: Settings, trace: Trace,
             display=None) -> dict:
    """One task to one result row; a failure is recorded in the row, never raised (an interruption is: the task is
    not done, and a resumed batch runs it again)."""
    started = time.monotonic()
    row: dict = {"id": task.id, "question": task.question, "mode": task.mode or settings.mode}
    try:
        model = models(task.model)
        task_settings = replace(settings, mode=task.mode or settings.mode, options=task.options or settings.options,
                                acs=settings.acs.model_copy(update={"stop": task.stop}) if task.stop else settings.acs)
        result = ask_with(task.documents, task.question, model, task_settings, trace=trace, display=display)
        if result.stop.kind is Stop.INTERRUPTED:
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


class Stopping:
    """The display of a batch's runs: silent, and once the batch is interrupted, it ends each run at its next step
    (the runs in other threads do not see Ctrl-C themselves)."""

    def __init__(self):
        self.stop = threading.Event()

    def _check(self, **kw) -> None:
        if self.stop.is_set():
            raise KeyboardInterrupt

    start = step = compaction = chunk = _check

    def state(self, **kw) -> None:
        pass

    def finish(self, **kw) -> None:
        pass


def run_batch(tasks: list[BatchTask], writer: ResultWriter, models: Callable[[str | None], Model],
              settings: Settings, trace: Trace, concurrency: int, on_result: Callable[[dict], None]) -> list[dict]:
    """Run tasks, `concurrency` at a time for remote models; the in-process model runs one at a time. Ctrl-C or
    SIGTERM stops the batch: the tasks running end at their next step, those not started never start, every
    finished result is already written, and the interruption goes on up (exit 130 or 143)."""
    rows, display = [], Stopping()

    def work(task: BatchTask) -> dict:
        return run_task(task, models, settings, trace, display)

    def done(row: dict) -> None:
        writer.write(row)
        rows.append(row)
        on_result(row)

    local = [t for t in tasks if _is_local(models, t)]
    remote = [t for t in tasks if t not in local]
    for task in local:
        done(work(task))
    results = _Workers(work, remote, max(1, concurrency))
    try:
        for row in results:
            done(row)
    except KeyboardInterrupt:  # the runs stop at their next step; a call in flight is not waited for
        display.stop.set()
        for row in results.finished():  # what completed meanwhile is kept
            done(row)
        raise
    return rows


class _Workers:
    """Tasks run by daemon threads, their rows yielded as they complete. A batch interrupted does not wait for a
    model call in flight: the threads are left to end with the process, and the results written are kept."""

    def __init__(self, work, tasks: list, count: int):
        import queue

        self.work, self.todo, self.out = work, queue.Queue(), queue.Queue()
        self.left = len(tasks)
        for t in tasks:
            self.todo.put(t)
        for _ in range(min(count, len(tasks))):
            threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        import queue

        while True:
            try:
                task = self.todo.get_nowait()
            except queue.Empty:
                return
            try:
                self.out.put(self.work(task))
            except BaseException as e:  # noqa: BLE001 - an interrupted run: the batch is stopping
                self.out.put(e)

    def __iter__(self):
        while self.left:
            item = self.out.get()
            self.left -= 1
            if isinstance(item, BaseException):
                raise KeyboardInterrupt
            yield item

    def finished(self) -> list[dict]:
        import queue

        rows = []
        while True:
            try:
                item = self.out.get_nowait()
            except queue.Empty:
                return rows
            if isinstance(item, dict):
                rows.append(item)


def _is_local(models: Callable[[str | None], Model], task: BatchTask) -> bool:
    try:
        return models(task.model).in_process
    except LcreadError:
        return True  # run alone; the task records the error when it runs


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


def run(tasks: Path, out: Path, *, resume: bool, concurrency: int, model: str | Model | None, api_base: str | None,
        settings: Settings, trace: Path | None, router: Path | None, quiet: bool, ray: bool = False,
        ray_address: str | None = None, workers: int | None = None) -> list[dict]:
    """`lcread batch`: the tasks not yet in `out`, run and appended one by one, then a summary per mode."""
    if ray:
        from lcread.raybatch import need_ray

        need_ray()  # before anything is read or written: say how to install it
    todo = load_tasks(tasks)
    check_out(tasks, out)
    if out.exists() and out.stat().st_size and not resume:
        raise LcreadError(f"{out} already holds results: add --resume to skip the tasks done, or choose another --out")
    done = completed_ids(out) if resume else set()
    todo = [t for t in todo if t.id not in done]
    console, writer = Console(stderr=True, quiet=quiet), ResultWriter(out)
    run_trace = JsonlTrace(trace) if trace else NullTrace()
    try:
        with BatchProgress(console, total=len(todo), skipped=len(done)) as progress:
            if ray:
                from lcread.raybatch import run_ray

                rows = run_ray(todo, writer, model, api_base, settings, ray_address, workers, progress.advance,
                               (BatchTask, run_task, model_chooser))
            else:
                chooser = model_chooser(model, api_base, router) if model is None or isinstance(model, str) \
                    else (lambda name: model)  # a Model object, from the library
                rows = run_batch(todo, writer, chooser, settings, run_trace, concurrency, progress.advance)
    finally:
        writer.close()
        if trace:
            run_trace.close()
    console.print(summary_table(rows))
    return rows


def check_out(tasks: Path, out: Path) -> None:
    """The results file must be a new or regular file, and not the task file itself (by any name)."""
    import stat

    if out.is_dir():
        raise LcreadError(f"--out {out} is a folder: give the results file to write, e.g. {out}/results.jsonl")
    try:
        st = out.stat()
    except OSError:
        return  # a new file
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISCHR(st.st_mode):
        raise LcreadError(f"--out {out} is not a regular file (a pipe or a socket): give a file to append results to")
    try:
        same = os.path.samefile(tasks, out)
    except OSError:
        same = False
    if same:
        raise LcreadError(f"--out {out} is the task file: give another file for the results")


def model_chooser(default: str | None, api_base: str | None, router: Path | None,
                  threads: int | None = None) -> Callable[[str | None], Model]:
    """The model for a task's `model` field (or the default), each built once; with a router file, the names
    it lists spread their calls over its deployments; `threads` for an embedded model (a Ray worker's CPUs)."""
    spread, names = None, set()
    if router:
        from lcread.models.remote import load_router

        spread = load_router(router)
        names = {m["model_name"] for m in spread.model_list}
        if not default and len(names) == 1:
            default = next(iter(names))
    built: dict = {}
    lock = threading.Lock()

    def choose(name: str | None) -> Model:
        name = name or default or env_model() or "local"
        with lock:
            if name not in built:
                config = make_config(ModelConfig, **{k: v for k, v in (("name", name), ("api_base", api_base),
                                                                       ("threads", threads)) if v})
                built[name] = _router_model(config, spread) if name in names else load_model(name, config)
            return built[name]

    return choose


def _router_model(config: ModelConfig, spread) -> Model:
    from lcread.models import get_model

    return get_model(config, router=spread)
