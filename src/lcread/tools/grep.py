"""grep, run as ripgrep with an argument list (never a shell), rendered like grep -n."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass
from pathlib import Path

from lcread.errors import LcreadError


def find_rg() -> str:
    """ripgrep on PATH first, else the binary the `ripgrep` wheel put beside this Python."""
    found = shutil.which("rg")
    if found:
        return found
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / "rg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise LcreadError("ripgrep (rg) was not found: pip install ripgrep==14.1.0, or put rg on PATH")


@dataclass
class GrepResult:
    text: str
    matches: int
    cut: bool
    error: str | None = None


def rg_args(cmd, paths: list[str]) -> list[str]:
    # One thread: files are searched, and reported, in the order the documents were given.
    args = ["--no-config", "-j1", "--line-number", "--with-filename", "--no-heading", "--color=never"]
    for flag, rg_flag in (("-i", "--ignore-case"), ("-w", "--word-regexp"), ("-F", "--fixed-strings")):
        if flag in cmd.flags:
            args.append(rg_flag)
    if cmd.before:
        args += ["-B", str(cmd.before)]
    if cmd.after:
        args += ["-A", str(cmd.after)]
    if cmd.max_count:
        args += ["-m", str(cmd.max_count)]
    for pattern in cmd.patterns:
        args += ["-e", pattern]
    return args + ["--"] + paths


def grep(cmd, docs, cap: int, window: int, timeout: float) -> GrepResult:
    """Run one grep over the given documents; stop reading rg's output once the cap is reached."""
    rg = find_rg()
    names = {str(d.path): d.name for d in docs}
    paths = [str(d.path) for d in docs]
    if "-c" in cmd.flags:
        return _count(rg, cmd, paths, names, timeout)
    proc = subprocess.Popen([rg, "--json", *rg_args(cmd, paths)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    out: list[str] = []
    size = matches = 0
    cut = False
    last: tuple[str, int] | None = None
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        for raw in proc.stdout:
            event = json.loads(raw)
            kind = event["type"]
            if kind not in ("match", "context"):
                continue
            data = event["data"]
            name = names.get(_text(data["path"]), _text(data["path"]))
            number = data["line_number"]
            if last and (last[0] != name or number > last[1] + 1) and (cmd.before or cmd.after):
                out.append("--")
            sep = ":" if kind == "match" else "-"
            body = _text(data["lines"]).rstrip("\n").rstrip("\r")
            spans = [(s["start"], s["end"]) for s in data.get("submatches", [])]
            line = f"{name}{sep}{number}{sep}{_window(body, spans, window)}"
            if size + len(line) + 1 > cap:
                cut = True
                break
            out.append(line)
            size += len(line) + 1
            matches += kind == "match"
            last = (name, number)
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        err = proc.stderr.read().decode("utf-8", "replace").strip()
        proc.stdout.close()
        proc.stderr.close()
    if proc.returncode == -signal.SIGKILL and not cut:
        return GrepResult("", 0, False, error=f"grep took longer than {timeout:.0f} s; narrow the pattern or "
                                              "grep one document")
    if proc.returncode == 2 and not out and not cut:
        return GrepResult("", 0, False, error=_rg_error(err))
    return GrepResult("\n".join(out), matches, cut)


def _count(rg: str, cmd, paths: list[str], names: dict[str, str], timeout: float) -> GrepResult:
    try:
        proc = subprocess.run([rg, "--count", *rg_args(cmd, paths)], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return GrepResult("", 0, False, error=f"grep -c took longer than {timeout:.0f} s; narrow the pattern")
    if proc.returncode == 2:
        return GrepResult("", 0, False, error=_rg_error(proc.stderr.decode("utf-8", "replace")))
    counts = {}
    for row in proc.stdout.decode("utf-8", "replace").splitlines():
        path, _, n = row.rpartition(":")
        counts[names.get(path, path)] = int(n)
    total = sum(counts.values())
    lines = [f"{name}:{counts.get(name, 0)}" for name in names.values()]
    return GrepResult("\n".join(lines), total, False)


def _text(field: dict) -> str:
    if "text" in field:
        return field["text"]
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", "replace")


def _window(body: str, spans: list[tuple[int, int]], window: int) -> str:
    """A long line is shown as a window around its first match, never whole."""
    if len(body) <= 2 * window + 200:
        return body
    raw = body.encode("utf-8")
    start, end = spans[0] if spans else (0, 0)
    lo, hi = max(0, start - window), min(len(raw), end + window)
    piece = raw[lo:hi].decode("utf-8", "ignore")
    return (f"[line of {len(raw):,} characters; showing {lo:,}-{hi:,}] "
            f"{'…' if lo else ''}{piece}{'…' if hi < len(raw) else ''}")


def _rg_error(err: str) -> str:
    first = next((ln for ln in err.splitlines() if ln.strip() and not ln.startswith("rg:")), err.strip())
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    detail = " ".join(lines[:6])[:400] or first
    return f"grep failed: {detail}. If the pattern is meant literally, add -F."
