"""The command line: parse options, build configs, wire the parts, run, print. Errors meet the user here."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from lcread.errors import LcreadError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Answer questions about inputs far larger than a model's context window.")

EXIT_LIMIT = 3  # the answer is the best one found before a limit ended the run
EXIT_UNVERIFIED = 4  # the model answered, but the answer's evidence does not establish it
EXIT_MODEL = 5  # the model failed for good mid-run; the best answer so far is on stdout
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT); 143 for SIGTERM
_signal = {"number": 0}


def conversion_progress():
    """A progress bar on stderr for a conversion that takes more than a moment."""
    import time

    state: dict = {}

    def tick(what: str, done: int, total: int) -> None:
        if "started" not in state:
            state["started"] = time.monotonic()
        if time.monotonic() - state["started"] < 0.5:
            return
        if "bar" not in state:
            from rich.console import Console
            from rich.progress import Progress

            state["bar"] = Progress(transient=True, console=Console(stderr=True))
            state["bar"].start()
            state["task"] = state["bar"].add_task(f"converting {what}", total=total)
        state["bar"].update(state["task"], completed=done, total=total)
        if done >= total:
            state["bar"].stop()

    return tick


def exit_status(result) -> int:
    """0: answered, verified (or an open question, where no check applies); 3: a limit ended the run;
    4: answered but unverified; 5: the model failed mid-run; 128 + the signal number: interrupted."""
    if result.reason == "interrupted":
        return 128 + (_signal["number"] or 2)
    if result.reason.startswith("model error"):
        return EXIT_MODEL
    if not result.final:
        return EXIT_LIMIT
    return EXIT_UNVERIFIED if result.verified is False else 0


@app.callback()
def _root() -> None:
    """lcread reads only what a question needs: files, folders, or - for stdin."""


@app.command()
def ask(
    inputs: Annotated[list[str], typer.Argument(help="Files, folders, or - for stdin; then the question.",
                                                show_default=False)],
    question: Annotated[str, typer.Argument(help="The question to answer.", show_default=False)],
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="local (embedded), local:/path.gguf, "
                                                 "or a litellm model string. Default: $LCREAD_MODEL or local.")] = None,
    api_base: Annotated[Optional[str], typer.Option(help="Base URL of the model server.")] = None,
    mode: Annotated[str, typer.Option(help="How to read: select (search and bounded reads), sac (one command "
                                        "per fresh context, with a written state) or acs (chunk by chunk with "
                                        "running notes, stopped by Answer-Convergence Stopping).")] = "select",
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object with the answer and costs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Show no progress.")] = False,
    trace: Annotated[Optional[Path], typer.Option(help="Append a JSON-lines record of every call and command.")] = None,
    max_steps: Annotated[Optional[int], typer.Option(help="Most commands the model may run.")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(help="Most tokens the run may spend.")] = None,
    max_seconds: Annotated[Optional[float], typer.Option(help="Most wall time, in seconds.")] = None,
    context_limit: Annotated[Optional[int], typer.Option(help="Live context limit in tokens.")] = None,
    call_timeout: Annotated[Optional[float], typer.Option(help="Seconds one model call may take (each try).")] = None,
    compact_at: Annotated[Optional[int], typer.Option(help="Live context at which to compact.")] = None,
    read_chars: Annotated[Optional[int], typer.Option(help="Characters per read (at most 8,000).")] = None,
    options: Annotated[Optional[list[str]], typer.Option("--options", help="acs: answer options, e.g. "
                                                         "--options 'A) Anne' --options 'B) Elinor'.")] = None,
    stop: Annotated[Optional[str], typer.Option(help="acs: stopping policy: acs, full, random, verbalized, end.")] = None,
    probe: Annotated[Optional[str], typer.Option(help="acs, multiple choice: likelihood (option texts scored after "
                                                      "the notes, calibrated), letters (the paper's), or auto.")] = None,
    draft_confidence: Annotated[Optional[str], typer.Option(help="acs, open-ended: min or mean probability of the "
                                                                 "answer's tokens.")] = None,
    theta: Annotated[Optional[float], typer.Option(help="acs: confidence threshold (0.995).")] = None,
    epsilon: Annotated[Optional[float], typer.Option(help="acs: stability threshold (0.05).")] = None,
    window: Annotated[Optional[int], typer.Option(help="acs: stability window w (3).")] = None,
    chunk_chars: Annotated[Optional[int], typer.Option(help="acs: characters per chunk (24,000; 8,000 on the embedded model).")] = None,
    notes_chars: Annotated[Optional[int], typer.Option(help="acs: cap on the running notes (6,000).")] = None,
    seed: Annotated[Optional[int], typer.Option(help="acs: seed of --stop random.")] = None,
    no_sufficiency: Annotated[bool, typer.Option("--no-sufficiency", help="Accept any answer the model gives "
                                                 "(its evidence is still checked and reported).")] = False,
) -> None:
    """Answer QUESTION about the INPUTS, reading only what it needs.

    Exit status: 0 answered and verified, 3 ended by a limit, 4 answered but unverified, 5 the model failed
    mid-run, 130/143 interrupted."""
    from lcread.api import ask as ask_library
    from lcread.display import RichDisplay, SilentDisplay, clean

    quiet = quiet or json_out
    result = ask_library(
        inputs, question, mode=mode, model=model, options=options, trace=trace,
        display=SilentDisplay() if quiet else RichDisplay(), progress=None if quiet else conversion_progress(),
        on_warning=None if json_out else lambda w: typer.echo(f"lcread: warning: {clean(w)}", err=True),
        max_steps=max_steps, max_tokens=max_tokens, max_seconds=max_seconds, context_limit=context_limit,
        compact_at=compact_at, read_chars=read_chars, stop=stop, theta=theta, epsilon=epsilon, window=window,
        chunk_chars=chunk_chars, notes_chars=notes_chars, seed=seed, probe=probe, draft_confidence=draft_confidence,
        sufficiency=False if no_sufficiency else None, api_base=api_base, call_timeout=call_timeout)
    report(result, json_out)


def report(result, json_out: bool) -> None:
    """The answer on stdout (or the whole result as JSON), what the user must know on stderr, and the
    documented exit status."""
    from lcread.display import clean

    if json_out:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=True))
    else:
        typer.echo(clean(result.answer))
        if not result.final and not result.reason.startswith("model error"):
            typer.echo(f"lcread: this is the best answer so far: the run ended at its {result.reason}", err=True)
        elif result.verified is False:
            typer.echo(f"lcread: unverified: {clean(result.missing or '')}", err=True)
    if result.reason.startswith("model error"):
        typer.echo(f"lcread: error: {clean_line(result.reason)}; the answer is the best found before it", err=True)
    code = exit_status(result)
    if code:
        raise typer.Exit(code)


@app.command()
def batch(
    tasks: Annotated[Path, typer.Argument(help="JSONL file: one task per line with id, documents, question, and "
                                          "optionally options, mode, stop, model, expected.", show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file the results are appended to.")],
    resume: Annotated[bool, typer.Option(help="Skip the tasks whose ids are already in --out.")] = False,
    concurrency: Annotated[int, typer.Option(min=1, help="Tasks at once on remote models (the embedded model "
                                                          "runs one at a time).")] = 4,
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="Default model for tasks that name none.")] = None,
    api_base: Annotated[Optional[str], typer.Option(help="Base URL of the model server.")] = None,
    mode: Annotated[str, typer.Option(help="Default mode: select, sac or acs.")] = "select",
    stop: Annotated[Optional[str], typer.Option(help="Default acs stopping policy.")] = None,
    trace: Annotated[Optional[Path], typer.Option(help="Append a JSON-lines record of every call and command.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or summary.")] = False,
    router: Annotated[Optional[Path], typer.Option(help="YAML list of deployments of one model (litellm Router "
                                                        "format): calls spread over them, with failover.")] = None,
) -> None:
    """Run many questions; each result is appended to --out as it completes."""
    import threading

    from rich.console import Console

    from lcread.bench.batch import ResultWriter, completed_ids, load_tasks, run_batch
    from lcread.bench.report import BatchProgress, summary_table
    from lcread.config import AcsConfig, ModelConfig, env_model
    from lcread.models import get_model
    from lcread.run import MODES, Settings
    from lcread.trace import JsonlTrace, NullTrace

    if mode not in MODES:
        raise LcreadError(f"unknown mode {mode!r}: use --mode select, sac or acs")
    todo = load_tasks(tasks)
    if out.exists() and out.stat().st_size and not resume:
        raise LcreadError(f"{out} already holds results: add --resume to skip the tasks done, or choose another --out")
    done = completed_ids(out) if resume else set()
    todo = [t for t in todo if t.id not in done]
    settings = Settings(mode=mode, acs=_config(AcsConfig, stop=stop))
    cache: dict = {}
    lock = threading.Lock()
    spread = None
    if router:
        from lcread.models.remote import load_router

        spread = load_router(router)
        names = {m["model_name"] for m in spread.model_list}
        if not model and len(names) == 1:
            model = names.pop()

    def models(name: str | None):
        name = name or model or env_model() or "local"
        with lock:
            if name not in cache:
                use = spread if spread is not None and name in {m["model_name"] for m in spread.model_list} else None
                cache[name] = get_model(_config(ModelConfig, name=name, api_base=api_base), router=use)
            return cache[name]

    console = Console(stderr=True, quiet=quiet)
    writer = ResultWriter(out)
    run_trace = JsonlTrace(trace) if trace else NullTrace()
    try:
        with BatchProgress(console, total=len(todo), skipped=len(done)) as progress:
            rows = run_batch(todo, writer, models, settings, run_trace, concurrency, progress.advance)
    finally:
        writer.close()
        if trace:
            run_trace.close()
    console.print(summary_table(rows))


@app.command()
def bench(
    suites: Annotated[str, typer.Option(help="Comma-separated: niah, qa, vt, mc, count, where.")] = "niah,qa",
    modes: Annotated[str, typer.Option(help="Comma-separated: select, sac, acs, full-context; select:unchecked and "
                                            "sac:unchecked run without the sufficiency check (--no-sufficiency).")]
    = "select,sac,acs,full-context",
    stops: Annotated[str, typer.Option(help="acs stopping policies to replay: acs, full, random, verbalized, end.")] = "acs,full,random,verbalized,end",
    tasks: Annotated[int, typer.Option(min=1, help="Tasks per suite.")] = 10,
    lengths: Annotated[str, typer.Option(help="Comma-separated document lengths in characters.")] = "16000,64000",
    seed: Annotated[int, typer.Option(help="Seed of the task generators (use a fresh one for what you report).")] = 1,
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="Model for every run.")] = None,
    api_base: Annotated[Optional[str], typer.Option(help="Base URL of the model server.")] = None,
    chunk_chars: Annotated[Optional[int], typer.Option(help="acs: characters per chunk.")] = None,
    notes_chars: Annotated[Optional[int], typer.Option(help="acs: cap on the running notes.")] = None,
    probes: Annotated[str, typer.Option(help="acs, multiple choice: probes read side by side on the same reading: "
                                             "auto, letters, likelihood (comma-separated).")] = "auto",
    out: Annotated[Path, typer.Option(help="Folder for the tasks, results.json, report.png and trace.")] = Path("bench-results/run"),
) -> None:
    """Measure every mode and stopping policy side by side on the same generated tasks."""
    import json as _json

    from rich.console import Console

    from lcread.bench.report import bench_plot, bench_summary, bench_table, grounding_summary, grounding_table
    from lcread.bench.runner import MODES, STOPS, SUITES, make_tasks, run_bench
    from lcread.config import AcsConfig, ModelConfig, env_model
    from lcread.models import get_model
    from lcread.trace import JsonlTrace

    picked = {"suites": [s for s in suites.split(",") if s], "modes": [m for m in modes.split(",") if m],
              "stops": [s for s in stops.split(",") if s]}
    for kind, allowed in (("suites", SUITES), ("modes", MODES), ("stops", STOPS)):
        bad = [x for x in picked[kind] if x not in allowed]
        if bad:
            raise LcreadError(f"unknown {kind[:-1]} {bad[0]!r}: use {', '.join(allowed)}")
    try:
        sizes = [int(x) for x in lengths.split(",") if x]
    except ValueError:
        raise LcreadError(f"--lengths takes whole numbers of characters, not {lengths!r}") from None
    for kind in probes.split(","):
        _config(AcsConfig, probe=kind)  # each must be a probe kind
    config = _config(AcsConfig, chunk_chars=chunk_chars, notes_chars=notes_chars).model_copy(update={"probe": probes})
    console = Console(stderr=True)
    generated = make_tasks(picked["suites"], tasks, sizes, seed, out / "tasks")
    llm = get_model(_config(ModelConfig, name=model or env_model() or "local", api_base=api_base))
    trace = JsonlTrace(out / "trace.jsonl")

    def show(rows: list[dict]) -> None:
        for r in rows:
            mark = "ok  " if r["correct"] else ("--  " if r.get("error") else "MISS")
            console.print(f"{r['task']:<16} {r['mode']:<16} {mark} {r.get('total_tokens') or 0:>8,} tok "
                          f"{r.get('wall_time') or 0:>6.1f}s {str(r.get('error') or r['answer'])[:50]!r}")

    try:
        rows = run_bench(generated, llm, picked["modes"], picked["stops"], config, trace, seed, show)
    finally:
        trace.close()
    summary, grounding = bench_summary(rows), grounding_summary(rows)
    (out / "results.json").write_text(_json.dumps({"settings": {**picked, "tasks_per_suite": tasks, "lengths": sizes,
                                                                "seed": seed, "model": llm.name},
                                                   "summary": summary, "grounding": grounding, "rows": rows},
                                                  indent=1, default=str))
    bench_plot(summary, out / "report.png")
    Console(width=170).print(bench_table(summary))
    if grounding:
        Console(width=170).print(grounding_table(grounding))
    console.print(f"results: {out / 'results.json'} · plot: {out / 'report.png'}")


@app.command()
def calibrate(
    results: Annotated[Path, typer.Argument(help="A bench folder (or its results.json) with acs readings.",
                                            show_default=False)],
    target: Annotated[float, typer.Option(min=0.0, max=1.0, help="Largest premature-stop rate allowed.")] = 0.05,
    save: Annotated[bool, typer.Option(help="Write the chosen θ to the per-model settings file.")] = True,
) -> None:
    """Choose ACS's θ for a model from recorded readings: the lowest θ whose premature-stop rate on half the
    tasks is at most TARGET, with its figures on the other (held-out) half."""
    from rich.console import Console
    from rich.table import Table

    from lcread.acs import calibrate as cal

    path = results / "results.json" if results.is_dir() else results
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LcreadError(f"cannot read {path}: {e}; give the folder lcread bench --out wrote") from None
    readings = [cal.Reading.from_dict(r["reading"]) for r in data.get("rows", []) if r.get("reading")]
    if not readings:
        raise LcreadError(f"{path} holds no acs readings: run lcread bench with --modes acs first")
    console = Console()
    for probe in dict.fromkeys(r.probe for r in readings):
        chosen, sweep, held = cal.calibrate([r for r in readings if r.probe == probe], target)
        table = Table(title=f"{data['settings']['model']} · probe {probe} · fitting half")
        for col in ("θ", "accuracy", "token saving", "premature"):
            table.add_column(col, justify="right")
        for p in sweep:
            table.add_row(f"{p.theta:g}", f"{p.accuracy:.2f}", f"{p.saving:.0%}", f"{p.premature:.0%}",
                          style="bold" if p.theta == chosen else None)
        console.print(table)
        console.print(f"chosen θ = {chosen:g}; held-out ({held.tasks} tasks): accuracy {held.accuracy:.2f}, "
                      f"saving {held.saving:.0%}, premature {held.premature:.0%}")
        if save:
            console.print(f"saved to {cal.save(data['settings']['model'], probe, chosen, held)}")


cache_app = typer.Typer(help="The cache of converted documents (PDF, Word, HTML, decompressed logs).",
                        no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("info")
def cache_info() -> None:
    """Where the cache is, how many converted documents it holds, and its size against the bound."""
    from lcread.documents import default_cache

    info = default_cache().info()
    typer.echo(f"{info['folder']}: {info['entries']} converted documents, {info['bytes']:,} bytes "
               f"(bound {info['max_bytes']:,}; LCREAD_CACHE_BYTES)")


@cache_app.command("clear")
def cache_clear() -> None:
    """Remove every converted document (the next question converts again)."""
    from lcread.documents import default_cache

    typer.echo(f"removed {default_cache().clear()} converted documents")


def _config(cls, **values):
    """A config from only what the user set (the configs hold the defaults); a bad value is one line."""
    from lcread.api import make_config

    return make_config(cls, **{k: v for k, v in values.items() if v is not None})


def _terminated(number, frame) -> None:
    """SIGTERM ends a run as Ctrl-C does: best answer so far, complete trace, temporary files removed."""
    _signal["number"] = number
    raise KeyboardInterrupt


def main() -> None:
    """Entry point: one line per error, a documented exit status, and tracebacks only with LCREAD_DEBUG=1."""
    import signal

    debug = os.environ.get("LCREAD_DEBUG") == "1"
    signal.signal(signal.SIGTERM, _terminated)
    try:
        code = app(standalone_mode=False)
    except LcreadError as e:
        if debug:
            raise
        typer.echo(f"lcread: error: {clean_line(e)}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        typer.echo("lcread: interrupted", err=True)
        sys.exit(128 + (_signal["number"] or 2))
    except Exception as e:  # click usage errors and anything unforeseen
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):  # click's (typer vendors its own)
            if type(e).__name__ == "Abort":
                typer.echo("lcread: interrupted", err=True)
                sys.exit(128 + (_signal["number"] or 2))
            typer.echo(f"lcread: error: {clean_line(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        if debug:
            raise
        typer.echo(f"lcread: error: {type(e).__name__}: {clean_line(e)} (set LCREAD_DEBUG=1 for the traceback)",
                   err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def clean_line(message: object) -> str:
    """One line, terminal-safe, with secret values masked."""
    from lcread.display import clean
    from lcread.errors import redact

    return clean(redact(" ".join(str(message).split())))
