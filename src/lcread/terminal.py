"""What the user sees at the terminal besides the run itself: the answer and its exit status, one-line
errors, interruption, and a conversion's progress bar."""

from __future__ import annotations

import json
import os
import sys

import typer

from lcread.errors import Stop
from lcread.errors import LcreadError, UsageError

EXIT_LIMIT = 3  # the answer is the best one found before a limit ended the run
EXIT_UNVERIFIED = 4  # the model answered, but the answer's evidence does not establish it
EXIT_MODEL = 5  # the model failed for good mid-run; the best answer so far is on stdout
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT); 143 for SIGTERM
EXIT_USAGE = 2  # a command or option used wrongly
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
            from rich.markup import escape

            from lcread.display import clean

            state["task"] = state["bar"].add_task(f"converting {escape(clean(what))}", total=total)  # a name is text
        state["bar"].update(state["task"], completed=done, total=total)
        if done >= total:
            state["bar"].stop()

    return tick


def exit_status(result) -> int:
    """0: answered, verified (or an open question, where no check applies); 3: a limit ended the run;
    4: answered but unverified (also when the run ended because answers kept lacking their evidence: the model
    answered, lcread could not verify it); 5: the model failed mid-run; 128 + the signal number: interrupted."""
    if result.stop.kind is Stop.INTERRUPTED:
        return 128 + (_signal["number"] or 2)
    if result.stop.kind is Stop.MODEL_ERROR:
        return EXIT_MODEL
    refused = result.stop.kind in (Stop.SUFFICIENCY_LIMIT, Stop.GROUNDING_LIMIT) and result.answer is not None
    if not result.final and not refused:
        return EXIT_LIMIT
    return EXIT_UNVERIFIED if result.verified is False or refused else 0


def report(result, json_out: bool) -> None:
    """The answer on stdout (or the whole result as JSON), what the user must know on stderr, and the
    documented exit status."""
    from lcread.display import clean

    if json_out:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=True))
    else:
        typer.echo(clean(result.text))
        if not result.final and result.stop.kind is not Stop.MODEL_ERROR:
            typer.echo(f"lcread: this is the best answer so far: the run ended at its {result.reason}", err=True)
        elif result.verified is False:
            typer.echo(f"lcread: unverified: {clean(result.missing or '')}", err=True)
    if result.stop.kind is Stop.MODEL_ERROR:
        typer.echo(f"lcread: error: {clean_line(result.reason)}; the answer is the best found before it", err=True)
    code = exit_status(result)
    _signal["reported"] = True  # the run's own ending was printed: an exit status of 130 is its, not typer's
    if code:
        raise typer.Exit(code)


def _terminated(number, frame) -> None:
    """SIGTERM ends a run as Ctrl-C does: best answer so far, complete trace, temporary files removed."""
    _signal["number"] = number
    raise KeyboardInterrupt


def run(app) -> None:
    """Run the typer app: one line per error, a documented exit status, and tracebacks only with LCREAD_DEBUG=1."""
    import signal

    debug = os.environ.get("LCREAD_DEBUG") == "1"
    signal.signal(signal.SIGTERM, _terminated)
    try:
        code = app(standalone_mode=False)
    except UsageError as e:
        if debug:
            raise
        fail(clean_line(e), EXIT_USAGE)
    except LcreadError as e:
        if debug:
            raise
        fail(clean_line(e), 1)
    except KeyboardInterrupt:
        fail("interrupted", 128 + (_signal["number"] or 2))
    except Exception as e:  # click usage errors and anything unforeseen
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):  # click's (typer vendors its own)
            if type(e).__name__ == "Abort":
                fail("interrupted", 128 + (_signal["number"] or 2))
            fail(clean_line(e.format_message()), e.exit_code)
        if debug:
            raise
        fail(f"{type(e).__name__}: {clean_line(e)} (set LCREAD_DEBUG=1 for the traceback)", 1)
    if code == EXIT_INTERRUPTED and not _signal.get("reported"):  # typer turns an interruption before the run
        # (a pipe, a conversion) into its own exit 130
        fail("interrupted", 128 + (_signal["number"] or 2))
    sys.exit(code if isinstance(code, int) else 0)


def fail(message: str, code: int) -> None:
    """One line on stderr, and under --json one object on stdout too, then the exit status."""
    typer.echo(f"lcread: {'error: ' if code not in (130, 143) else ''}{message}", err=True)
    if "--json" in sys.argv[1:]:
        typer.echo(json.dumps({"error": message, "exit_status": code}, ensure_ascii=True))
    sys.exit(code)


def clean_line(message: object) -> str:
    """One line, terminal-safe, with secret values masked."""
    from lcread.display import clean
    from lcread.errors import redact

    return clean(redact(" ".join(str(message).split())))
