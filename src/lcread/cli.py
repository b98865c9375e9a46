"""The command line: each command parses its options, calls the library, and prints. Errors meet the user in
`lcread.terminal`; the options shared by several commands are declared once in `lcread.options`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lcread import options as o

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Answer questions about inputs far larger than a model's context window.")
cache_app = typer.Typer(help="The caches: converted documents (PDF, Word, HTML, decompressed logs) and the "
                             "embedded model's saved prompt states.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


def _version(shown: bool) -> None:
    if shown:
        from lcread import __version__

        typer.echo(f"lcread {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print lcread's version and exit.")] = False) -> None:
    """lcread reads only what a question needs: files, folders, or - for stdin."""


@app.command()
def ask(inputs: Annotated[list[str], typer.Argument(help="Files, folders, or - for stdin; then the question.",
                                                    show_default=False)],
        question: Annotated[str, typer.Argument(help="The question to answer.", show_default=False)],
        model: o.Model = None, api_base: o.ApiBase = None, mode: o.Mode = "select", json_out: o.Json = False,
        quiet: o.Quiet = False, trace: o.Trace = None, max_steps: o.MaxSteps = None, max_tokens: o.MaxTokens = None,
        max_seconds: o.MaxSeconds = None, context_limit: o.ContextLimit = None, call_timeout: o.CallTimeout = None,
        compact_at: o.CompactAt = None, read_chars: o.ReadChars = None, options: o.Options = None,
        stop: o.Stop = None, probe: o.Probe = None, draft_confidence: o.DraftConfidence = None,
        theta: o.Theta = None, epsilon: o.Epsilon = None, window: o.Window = None, chunk_chars: o.ChunkChars = None,
        notes_chars: o.NotesChars = None, seed: o.Seed = None, sufficiency: o.Sufficiency = None,
        first_step: o.FirstStep = None, max_refusals: o.MaxRefusals = None,
        steps_after_refusal: o.StepsAfterRefusal = None, grep_timeout: o.GrepTimeout = None,
        local_context: o.LocalContext = None, threads: o.Threads = None) -> None:
    """Answer QUESTION about the INPUTS, reading only what it needs.

    Exit status: 0 answered and verified, 3 ended by a limit, 4 answered but unverified, 5 the model failed
    mid-run, 130/143 interrupted."""
    from lcread.api import ask as ask_library
    from lcread.display import RichDisplay, SilentDisplay, clean
    from lcread.terminal import conversion_progress, report

    quiet = quiet or json_out
    result = ask_library(
        inputs, question, mode=mode, model=model, options=options, trace=trace,
        display=SilentDisplay() if quiet else RichDisplay(), progress=None if quiet else conversion_progress(),
        on_warning=None if json_out else lambda w: typer.echo(f"lcread: warning: {clean(w)}", err=True),
        max_steps=max_steps, max_tokens=max_tokens, max_seconds=max_seconds, context_limit=context_limit,
        compact_at=compact_at, read_chars=read_chars, stop=stop, theta=theta, epsilon=epsilon, window=window,
        chunk_chars=chunk_chars, notes_chars=notes_chars, seed=seed, probe=probe, draft_confidence=draft_confidence,
        sufficiency=sufficiency, first_step=first_step, max_refusals=max_refusals,
        steps_after_refusal=steps_after_refusal, grep_timeout=grep_timeout, api_base=api_base,
        call_timeout=call_timeout, local_context=local_context, threads=threads)
    report(result, json_out)


@app.command()
def batch(tasks: Annotated[Path, typer.Argument(help="JSONL file: one task per line with id, documents, question, "
                                                "and optionally options, mode, stop, model, expected.",
                                                show_default=False)],
          out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file the results are appended to.")],
          resume: Annotated[bool, typer.Option(help="Skip the tasks whose ids are already in --out.")] = False,
          concurrency: Annotated[int, typer.Option(min=1, help="Tasks at once on remote models (the embedded model "
                                                   "runs one at a time).")] = 4,
          model: o.Model = None, api_base: o.ApiBase = None, mode: o.Mode = "select", stop: o.Stop = None,
          trace: o.Trace = None, quiet: o.Quiet = False,
          router: Annotated[Path | None, typer.Option(help="YAML list of deployments of one model (litellm Router "
                                                      "format): calls spread over them, with failover.")] = None,
          ray: Annotated[bool, typer.Option("--ray", help="Run the tasks on a Ray cluster (--ray-address, "
                                            "$RAY_ADDRESS, or a local Ray).")] = False,
          ray_address: Annotated[str | None, typer.Option(help="The Ray cluster to use with --ray.")] = None,
          workers: Annotated[int | None, typer.Option(min=1, help="--ray: workers (default: one per CPU slot, or "
                                                      "per GPU for the embedded model).")] = None,
          ) -> None:
    """Run many questions; each result is appended to --out as it completes."""
    from lcread import batch as batch_run
    from lcread.api import settings_from

    settings = settings_from(mode, None, {"stop": stop})
    batch_run.run(tasks, out, resume=resume, concurrency=concurrency, model=model, api_base=api_base,
                  settings=settings, trace=trace, router=router, quiet=quiet, ray=ray, ray_address=ray_address,
                  workers=workers)


@app.command()
def bench(suites: Annotated[str, typer.Option(help="Comma-separated: niah, niah-single, qa, vt, mc, count, "
                                              "where, real (questions over real documents), real-NAME (one "
                                              "of its documents: real-bashref, real-wgetlog, ...).")] = "niah,qa",
          modes: Annotated[str, typer.Option(help="Comma-separated: select, sac, acs, full-context; "
                                             "select:unchecked and sac:unchecked run without the sufficiency "
                                             "check.")] = "select,sac,acs,full-context",
          stops: Annotated[str, typer.Option(help="acs stopping policies replayed on each reading: acs, full, "
                                             "random, verbalized, end.")] = "acs,full,random,verbalized,end",
          tasks: Annotated[int, typer.Option(min=1, help="Tasks per suite.")] = 10,
          lengths: Annotated[str, typer.Option(help="Comma-separated document lengths in characters.")] = "16000,64000",
          seed: Annotated[int, typer.Option(help="Seed of the task generators (use a fresh one for what you "
                                            "report).")] = 1,
          model: o.Model = None, api_base: o.ApiBase = None, chunk_chars: o.ChunkChars = None,
          notes_chars: o.NotesChars = None,
          probes: Annotated[str, typer.Option(help="acs, multiple choice: probes read side by side on the same "
                                              "reading: auto, letters, likelihood (comma-separated).")] = "auto",
          max_steps: o.MaxSteps = None,
          only: Annotated[str | None, typer.Option(help="Comma-separated task ids or shell patterns (bash-127-a, "
                                                     "'bash-*', '*-b'): run only the suites' tasks that match "
                                                     "one (a task matches by its id or its question's).")] = None,
          phrasings: Annotated[int, typer.Option(min=1, max=3, help="Ask each generated task in this many "
                                                 "phrasings (the real suite has two of its own); the report "
                                                 "gives their agreement.")] = 1,
          memory: Annotated[bool, typer.Option("--memory", help="Instead: peak memory of lcread and ripgrep on "
                                               "huge generated inputs (2 GB log, .gz, PDF, 50 MB line).")] = False,
          keep: Annotated[bool, typer.Option(help="--memory: keep the generated files.")] = False,
          out: Annotated[Path, typer.Option(help="Folder for the tasks, results.json, report.png and trace.")]
          = Path("bench-results/run")) -> None:
    """Measure every mode and stopping policy side by side on the same generated tasks."""
    if memory:
        from lcread.bench.memory import run as measure_memory

        return measure_memory(out, keep)
    from lcread.bench.command import run

    run(suites=suites, modes=modes, stops=stops, tasks=tasks, lengths=lengths, seed=seed, model=model,
        api_base=api_base, chunk_chars=chunk_chars, notes_chars=notes_chars, probes=probes, out=out,
        phrasings=phrasings, max_steps=max_steps, only=only)


@app.command()
def calibrate(results: Annotated[list[Path], typer.Argument(help="Bench folders (or their results.json) with the "
                                                            "readings: acs's, or with --reader select's and sac's "
                                                            "(several folders are fitted as one).",
                                                            show_default=False)],
              target: Annotated[float, typer.Option(min=0.0, max=1.0, help="Largest premature-stop rate "
                                                    "allowed.")] = 0.05,
              save: Annotated[bool, typer.Option(help="Write the chosen θ to the per-model settings file.")] = True,
              reader: Annotated[bool, typer.Option("--reader", help="Instead: fit the reader's scorer (what makes "
                                                   "an answer verified) on the select and sac readings.")] = False,
              precision: Annotated[float, typer.Option(min=0.5, max=1.0, help="--reader: the precision "
                                                       "\"verified\" must reach on held-out questions.")] = 0.95,
              out: Annotated[Path | None, typer.Option(help="--reader: the file to save to (default: the user's "
                                                       "reader calibration, LCREAD_READER_CALIBRATION).")] = None,
              features: Annotated[str | None, typer.Option(help="--reader: fit the ranking over these features "
                                                           "(comma-separated) instead of choosing them on held-"
                                                           "out documents, and choose the confidence among the "
                                                           "confidence's features (a_...) named.")] = None,
              keep_ranking: Annotated[bool, typer.Option("--keep-ranking", help="--reader: keep the model's "
                                                         "ranking as calibrated, and fit only its confidence and "
                                                         "thresholds on these readings.")] = False,
              ) -> None:
    """Choose ACS's θ for a model from recorded readings: the one that saves the most among those whose
    premature-stop rate on half the tasks is at most TARGET, with its figures on the other half. With --reader,
    calibrate the reader's confidence for the model instead."""
    if reader:
        from lcread.reader.calibrate import show as show_reader

        return show_reader(results, precision, out, features.split(",") if features else None, keep_ranking)
    from lcread.acs.calibrate import show

    if len(results) > 1:
        from lcread.errors import UsageError

        raise UsageError("θ is calibrated on one bench folder: give one (several are for --reader)")
    show(results[0], target, save)


@app.command()
def mcp(root: Annotated[list[str], typer.Option("--root", help="A folder the server may read (repeat for more); "
                                                "nothing outside these is readable, listed or named.")],
        http: Annotated[str | None, typer.Option("--http", help="Serve streamable HTTP at PORT or HOST:PORT "
                                                 "(loopback unless a host is given) instead of stdio.")] = None,
        model: o.Model = None, api_base: o.ApiBase = None) -> None:
    """Serve lcread to MCP clients (coding agents, desktop assistants): ask, search, grep, read, list."""
    from lcread.mcpserver import serve

    serve(root, http, model, api_base)


@cache_app.command("info")
def cache_info() -> None:
    """Where the caches are, what they hold, and their size against their bounds."""
    from lcread.display import clean
    from lcread.documents import default_cache
    from lcread.models.promptcache import folder_info
    from lcread.tools import wordindex
    info, kv = default_cache().info(), folder_info()
    indexes = wordindex.entries()
    for line in (f"{info['folder']}: {info['entries']} converted documents, {info['bytes']:,} bytes "
                 f"(bound {info['max_bytes']:,}; LCREAD_CACHE_BYTES)" +
                 (f"; {info['leftovers']} unfinished conversions, {info['leftover_bytes']:,} bytes"
                  if info.get("leftovers") else ""),
                 f"{kv['folder']}: {kv['entries']} saved prompt states, {kv['bytes']:,} bytes "
                 f"(bound {kv['max_bytes']:,} per model; LCREAD_KV_BYTES)",
                 f"{wordindex.index_root()}: {len(indexes)} word indexes of large documents, "
                 f"{sum(size for _, size, _ in indexes):,} bytes (LCREAD_INDEX_CACHE_BYTES)"):
        typer.echo(clean(line))  # a folder's name is the user's: its escape sequences are shown, not sent


@cache_app.command("clear")
def cache_clear() -> None:
    """Remove every converted document, saved prompt state and word index (the next question converts again). When
    some of the folders are redirected (LCREAD_CONVERT_DIR, LCREAD_KV_DIR, LCREAD_INDEX_DIR) and LCREAD_CACHE_DIR is
    not, only those are cleared: the others are not theirs to remove."""
    import os

    from lcread.display import clean
    from lcread.documents import default_cache
    from lcread.models.promptcache import clear_folder, folder_info
    from lcread.tools import wordindex
    named = {v: bool(os.environ.get(v)) for v in ("LCREAD_CONVERT_DIR", "LCREAD_KV_DIR", "LCREAD_INDEX_DIR")}
    every = os.environ.get("LCREAD_CACHE_DIR") or not any(named.values())
    done, left = [], []
    for var, what, run, folder in (
            ("LCREAD_CONVERT_DIR", "converted documents", lambda: default_cache().clear(), lambda: default_cache().folder),
            ("LCREAD_KV_DIR", "saved prompt states", clear_folder, lambda: folder_info()["folder"]),
            ("LCREAD_INDEX_DIR", "word indexes", wordindex.clear, wordindex.index_root)):
        if every or named[var]:
            done.append(f"{run()} {what}")
        else:
            left.append(f"the {what} in {folder()} (set {var} to clear them)")
    typer.echo(clean(f"removed {', '.join(done)}" + (f"; left {'; '.join(left)}" if left else "")))


@app.command()
def index(inputs: Annotated[list[str], typer.Argument(help="Files or folders to index.", show_default=False)]) -> None:
    """Build the word index of each large document now (lcread otherwise builds it in the background after the
    first search of a document over LCREAD_INDEX_BYTES, 256 MB): ranked searches then read only the blocks that
    hold their words."""
    import time

    from lcread.documents import DocumentStore
    from lcread.tools import wordindex
    with DocumentStore.open(inputs) as store:
        for doc in store.docs:
            started = time.monotonic()
            folder = wordindex.build(doc.path)
            typer.echo(f"{doc.name}: {doc.size:,} bytes indexed in {time.monotonic() - started:.1f} s ({folder})")


def main() -> None:
    """Entry point: one line per error, a documented exit status, and tracebacks only with LCREAD_DEBUG=1."""
    from lcread.terminal import run
    run(app)
