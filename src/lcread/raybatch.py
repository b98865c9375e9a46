"""`lcread batch --ray`: the same task file and results file as `lcread batch`, run over a Ray cluster.

Ray is the usual engine for LLM batch work in Python; lcread uses its plain actors. Each worker is an actor that
builds its model once (the embedded model, or litellm to a served one) and answers one task at a time; the driver
keeps every worker busy, writes each result to the resumable results file as it arrives (a rerun with --resume
skips the finished ids), records a failed task with its error, and lets Ray restart a lost worker once and run
its task again (`max_restarts=1`, `max_task_retries=1`). The cluster is `--ray-address`, else `RAY_ADDRESS`,
else a local Ray started for the batch; `ray job submit -- lcread batch ... --ray` runs it on an existing one.
"""

from __future__ import annotations

import os
from typing import Callable

from lcread.errors import LcreadError

INSTALL = "pip install 'lcread[ray]'"


def need_ray():
    try:
        import ray
    except ImportError:
        raise LcreadError(f"lcread batch --ray needs Ray: {INSTALL}") from None
    return ray


class Worker:
    """One Ray actor: a model built once, tasks answered one at a time, by the batch's own functions handed in
    (`parts`: the task type, the function that runs one, the one that chooses its model)."""

    def __init__(self, model, api_base: str | None, settings, parts):
        self.settings, (self.task_type, self.run_task, chooser) = settings, parts
        if model is None or isinstance(model, str):
            # an embedded model uses the CPUs Ray gave this worker, not every core (workers would fight for them)
            threads = _assigned_cpus()
            self.choose = chooser(model, api_base, None, threads)
        else:  # a Model object handed in (tests, the scripted model)
            self.choose = lambda name: model

    def run(self, task: dict) -> dict:
        from lcread.trace import NullTrace

        row = self.run_task(self.task_type(**task), self.choose, self.settings, NullTrace())
        row["worker"] = os.getpid()
        return row


def _assigned_cpus() -> int | None:
    try:
        import ray

        cpus = ray.get_runtime_context().get_assigned_resources().get("CPU")
        return max(1, int(cpus)) if cpus else None
    except Exception:  # noqa: BLE001 - outside a Ray worker
        return None


def workers_for(ray, model, requested: int | None) -> tuple[int, dict]:
    """How many workers, and what each asks of the cluster: for the embedded model one per GPU when the cluster
    has GPUs, else the CPUs shared out between the workers (each runs llama.cpp on its share: two workers that
    both use every core slow each other down); for a served model, one per CPU slot."""
    from lcread.config import env_model
    from lcread.models import backend_for

    resources = ray.cluster_resources()
    gpus, cpus = int(resources.get("GPU", 0)), max(1, int(resources.get("CPU", 1)))
    name = model if isinstance(model, str) else (env_model() or "local") if model is None else None
    local = name is not None and backend_for(name).in_process
    if local and gpus:
        return requested or gpus, {"num_gpus": 1}
    count = requested or cpus
    return count, {"num_cpus": max(1, cpus // count) if local else 1}


def run_ray(tasks, writer, model, api_base: str | None, settings, address: str | None, workers: int | None,
            on_result: Callable[[dict], None], parts) -> list[dict]:
    """Run `tasks` (BatchTasks) on the cluster, each result written and reported as it arrives; `parts` are the
    batch's task type, task runner and model chooser, which each worker uses."""
    ray = need_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        count, resources = workers_for(ray, model, workers)
        actor = ray.remote(max_restarts=1, max_task_retries=1, **resources)(Worker)
        pool = [actor.remote(model, api_base, settings, parts) for _ in range(min(count, len(tasks)) or 1)]
        return _drive(ray, pool, list(tasks), writer, on_result)
    finally:
        if started:
            ray.shutdown()


def _drive(ray, pool, queue, writer, on_result) -> list[dict]:
    """Keep every worker busy with one task; write each result as it comes back."""
    rows, pending, free = [], {}, list(pool)
    while queue or pending:
        while free and queue:
            worker, task = free.pop(), queue.pop(0)
            pending[worker.run.remote(task.model_dump())] = (worker, task)
        done, _ = ray.wait(list(pending), num_returns=1)
        worker, task = pending.pop(done[0])
        try:
            row = ray.get(done[0])
        except ray.exceptions.RayError as e:  # the worker was lost twice: the task is recorded, the batch goes on
            row = {"id": task.id, "question": task.question, "mode": task.mode, "answer": None,
                   "error": f"the Ray worker running it was lost ({type(e).__name__})"}
            worker = None
        writer.write(row)
        rows.append(row)
        on_result(row)
        if worker is not None:
            free.append(worker)
        elif not free and not pending and queue:
            raise LcreadError("every Ray worker was lost: see the cluster's logs (ray status)")
    return rows
