"""grep, run as ripgrep with an argument list (never a shell), rendered like grep -n.

Every match is visible: a line too long to show whole is shown as one window per match (windows that
overlap are merged), each labelled with its line and character offsets. rg's JSON events are read in
bounded pieces, so a match on a 50 MB line costs a window, not the line.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from lcread.documents import Changed
from lcread.errors import LcreadError
from lcread.tools.evidence import Shown

EVENT_LIMIT = 1 << 18  # bytes of one rg event held whole; longer events (giant lines) are streamed
KEEP_SPANS = 200  # match spans kept per line; the rest are counted
_LINE_NUMBER = re.compile(rb'"},"line_number":(\d+),"absolute_offset":(\d+)')
_SPAN = re.compile(rb'"start":(\d+),"end":(\d+)\}')
_PATH = re.compile(rb'"path":\{"(text|bytes)":"((?:[^"\\]|\\.)*)"\}')


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
class Hit:
    """One line rg reported: a match or a context line."""

    path: str
    number: int
    match: bool
    offset: int
    """Byte offset of the line's start in its file."""
    body: bytes | None
    """The line's bytes, or None for a line too long to hold (read from the file by offset instead)."""
    spans: list[tuple[int, int]] = field(default_factory=list)
    """Byte spans of the matches within the line (at most KEEP_SPANS)."""
    matches: int = 0
    """Matches on the line, all of them."""


@dataclass
class GrepResult:
    text: str
    matches: int
    cut: bool
    error: str | None = None
    shown: list[Shown] = field(default_factory=list)
    lines: int = 0
    """Matching lines shown."""
    hits: int = 0
    """rg events (matching and context lines) rendered, after the ones skipped."""


BASE_ARGS = ("--no-config", "-j1", "--line-number", "--with-filename", "--no-heading", "--color=never",
             "--regex-size-limit=20M", "--dfa-size-limit=20M")


def rg_args(cmd) -> list[str]:
    """ripgrep's options for a grep command (rg_stream and _counts add the paths)."""
    # One thread: files are searched, and reported, in the order the documents were given. A size limit
    # on the compiled pattern makes a pathological one (a{1000}{1000}) fail at once instead of running.
    args = list(BASE_ARGS)
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
    return args


class Grep:
    """One grep over some documents, rendered under an output cap."""

    def __init__(self, cmd, docs, cap: int, window: int, timeout: float, sections=None):
        self.cmd, self.docs, self.cap, self.window, self.timeout = cmd, docs, cap, window, timeout
        self.by_path = {str(d.path): d for d in docs}
        self.sections = sections
        """A function doc -> Sections (headings), used by -p."""

    def run(self) -> GrepResult:
        if "-c" in self.cmd.flags:
            return self._count(self.docs)
        stream = rg_stream(rg_args(self.cmd), self.docs, self.timeout)
        with contextlib.closing(stream):
            result = self._collect(stream)
        if stream.refused:  # a document replaced since it was listed: nothing of this grep is shown
            return GrepResult("", 0, False, error=str(Changed(stream.refused[0])))
        if stream.killed and not result.cut:
            return GrepResult("", 0, False, error=f"grep stopped after {self.timeout:g} s (the limit for one "
                                                  "command); narrow the pattern, add -F, or grep one document")
        if stream.error and not result.text and not result.cut:
            return GrepResult("", 0, False, error=_rg_error(stream.error))
        return result

    def _collect(self, hits) -> GrepResult:
        """Render hits until the output cap; with -p, each new enclosing heading is shown above its hits."""
        out: list[str] = []
        result = GrepResult("", 0, False)
        size, last, heading = 0, None, None
        skip = getattr(self.cmd, "skip", 0)
        for hit in hits:
            doc = self.by_path.get(hit.path)
            if doc is None:
                continue
            if skip:  # shown by the same grep before: a repeat continues after them
                skip -= 1
                continue
            rows, pieces = self._render(doc, hit)
            section = self.sections(doc).enclosing(hit.number) if "-p" in self.cmd.flags and hit.match \
                and self.sections else None
            new_heading = bool(section) and (doc.name, section[0]) != heading
            extra = [f"{doc.name}={section[0]}={section[1]}"] if new_heading else []
            if last and (last[0] != doc.name or hit.number > last[1] + 1) and (self.cmd.before or self.cmd.after):
                extra.append("--")
            if size + sum(len(r) + 1 for r in extra + rows) > self.cap:
                room = self.cap - size - sum(len(r) + 1 for r in extra)
                result.cut = True
                if out or room < 80 or not hit.match:
                    break
                rows, pieces = self._render(doc, hit, budget=room)  # one long match: show what fits
            out.extend(extra + rows)
            size += sum(len(r) + 1 for r in extra + rows)
            if new_heading:
                heading = (doc.name, section[0])
                result.shown.append(Shown(doc.name, section[0], 0, section[1], kind="heading"))
            kind = "match" if hit.match else "context"
            result.shown += [Shown(doc.name, hit.number, start, text, kind=kind, section=section)
                             for start, text in pieces]
            result.matches += hit.matches if hit.match else 0
            result.lines += hit.match
            result.hits += 1
            last = (doc.name, hit.number)
            if result.cut:
                break
        result.text = "\n".join(out)
        return result

    def _render(self, doc, hit: Hit, budget: int | None = None) -> tuple[list[str], list[tuple[int, str]]]:
        """The rows showing one hit, and the (character offset, text) pieces they show."""
        sep = ":" if hit.match else "-"
        prefix = f"{doc.name}{sep}{hit.number}{sep}"
        length = len(hit.body) if hit.body is not None else None
        if length is not None and length <= 2 * self.window + 200 and budget is None:
            text = _decode(hit.body).rstrip("\n").rstrip("\r")
            return [prefix + text], [(0, text)]
        line_bytes = length if length is not None else _line_length(doc, hit)
        total = self._chars(doc, hit, 0, line_bytes)
        windows = _merge([(max(0, s - self.window), min(line_bytes, e + self.window)) for s, e in hit.spans]) \
            if hit.match and hit.spans else [(0, min(line_bytes, 2 * self.window))]
        rows, pieces = [], []
        limit = budget if budget is not None else self.cap
        for lo, hi in windows:
            hi = min(hi, lo + 4 * max(limit - 120, 80))
            text = self._bytes(doc, hit, lo, hi).decode("utf-8", "ignore")
            text = text[: max(limit - 120, 80)] if len(text) > limit - 120 else text
            start = self._chars(doc, hit, 0, lo)
            end = start + len(text)
            head = f"{prefix}[chars {start:,}-{end:,} of {total:,}] "
            rows.append(f"{head}{'…' if start else ''}{text}{'…' if end < total else ''}")
            pieces.append((start, text))
            if budget is not None:
                break
        if hit.matches > len(hit.spans):
            rows.append(f"{prefix}[{hit.matches - len(hit.spans):,} more matches on this line; grep a narrower "
                        f"pattern or read {doc.name} {hit.number} {hit.number} --from N]")
        return rows, pieces

    def _bytes(self, doc, hit: Hit, lo: int, hi: int) -> bytes:
        if hit.body is not None:
            return hit.body[lo:hi]
        return doc.read_bytes(hit.offset + lo, hit.offset + hi)

    def _chars(self, doc, hit: Hit, lo: int, hi: int) -> int:
        if hit.body is not None:
            return len(hit.body[lo:hi].decode("utf-8", "ignore"))
        return doc.chars_in(hit.offset + lo, hit.offset + hi)

    def _count(self, docs) -> GrepResult:
        counts, error = _counts(rg_args(self.cmd), docs, self.timeout)
        if error == "timeout":
            return GrepResult("", 0, False, error=f"grep -c stopped after {self.timeout:g} s (the limit for one "
                                                  "command); narrow the pattern")
        if error:
            return GrepResult("", 0, False, error=error if "changed during the run" in error else _rg_error(error))
        by_name = {self.by_path[p].name: n for p, n in counts.items() if p in self.by_path}
        rows = [f"{d.name}: {by_name.get(d.name, 0):,} matches" for d in self.docs]
        return GrepResult("\n".join(rows), sum(by_name.values()), False)


def count_matches(cmd, docs, timeout: float) -> int | None:
    """All matches of a grep (used to say how many a cut output did not show); None if it ran too long."""
    counts, error = _counts(rg_args(cmd), docs, timeout)
    return None if error == "timeout" else sum(counts.values())


ARG_BYTES = 96_000
"""Bytes of paths handed to one ripgrep process: a folder of 50,000 files is searched in several, in order,
never past the system's limit on an argument list."""


FILES_AT_ONCE = 256
"""Documents one ripgrep process reads at most: each is handed over as an open file (a descriptor)."""


def batches(docs: list, limit: int = FILES_AT_ONCE) -> list[list]:
    return [docs[i:i + limit] for i in range(0, len(docs), limit)] or [[]]


@contextlib.contextmanager
def opened(docs, refused: list[str] | None = None):
    """The documents as ripgrep is given them: each opened and checked (`Document.open`: a path swapped for a link
    to another file is refused, not read) and named by its descriptor, /dev/fd/N, so what ripgrep reads is the
    file lcread listed whatever the path names meanwhile. Yields the names and what each stands for (the
    document's path, as hits report it)."""
    files, names = [], {}
    try:
        for d in docs:
            try:
                f = d.open()
            except OSError as e:  # moved, removed or replaced: not read
                if refused is not None and getattr(e, "name", None):
                    refused.append(e.name)
                continue
            files.append(f)
            names[f"/dev/fd/{f.fileno()}"] = str(d.path)
        yield names, [f.fileno() for f in files]
    finally:
        for f in files:
            f.close()


def _counts(args: list[str], docs: list, timeout: float) -> tuple[dict[str, int], str | None]:
    """Matches per path (rg --count-matches), over as many rg processes as the documents need; an error or
    "timeout" when one failed (a document replaced since it was listed is one)."""
    rg, deadline, counts, refused = find_rg(), time.monotonic() + timeout, {}, []
    for batch in batches(docs):
        with opened(batch, refused) as (names, fds):
            if refused:
                return counts, str(Changed(refused[0]))
            if not names:
                continue
            try:
                proc = subprocess.run([rg, "--count-matches", *args, "--", *names], capture_output=True,
                                      timeout=max(deadline - time.monotonic(), 0.01), pass_fds=fds)
            except subprocess.TimeoutExpired:
                return counts, "timeout"
        if proc.returncode == 2:
            return counts, proc.stderr.decode("utf-8", "replace")
        for row in proc.stdout.decode("utf-8", "replace").splitlines():
            path, _, n = row.rpartition(":")
            if n.isdigit() and path in names:
                counts[names[path]] = counts.get(names[path], 0) + int(n)
    return counts, None


class rg_stream:
    """ripgrep's match and context events as Hits, over as many rg processes as the paths need (run one after
    another, so hits come in the documents' order), all within one time limit. `killed` tells whether the
    limit stopped it, `error` what rg said when it failed. Close it (contextlib.closing) to stop early."""

    def __init__(self, args: list[str], docs: list, timeout: float):
        self.args, self.docs, self.deadline = args, docs, time.monotonic() + timeout
        self.killed, self.error = False, ""
        self.refused: list[str] = []
        """The documents replaced since they were listed, not read."""
        self._gen = self._run()

    def __iter__(self):
        return self._gen

    def __next__(self):
        return next(self._gen)

    def close(self) -> None:
        self._gen.close()

    def _run(self):
        rg = find_rg()
        for batch in batches(self.docs):
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.killed = True
                return
            with opened(batch, self.refused) as (names, fds):
                if not names:
                    continue
                yield from self._one(rg, names, fds, left)
            if self.killed or self.error:
                return

    def _one(self, rg: str, names: dict[str, str], fds: list[int], left: float):
        """One ripgrep process over one batch of opened documents, its hits under the documents' paths."""
        proc = subprocess.Popen([rg, "--json", *self.args, "--", *names], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, pass_fds=fds)
        timer = threading.Timer(left, proc.kill)
        timer.start()
        try:
            for hit in _hits(proc.stdout):
                yield replace(hit, path=names.get(hit.path, hit.path))
        finally:
            timer.cancel()
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            err = proc.stderr.read().decode("utf-8", "replace").strip()
            proc.stdout.close()
            proc.stderr.close()
            if proc.returncode == -signal.SIGKILL and time.monotonic() >= self.deadline - 0.05:
                self.killed = True
            elif proc.returncode == 2 and err:
                self.error = err


def _hits(stream):
    """rg's match and context events as Hits; an event over EVENT_LIMIT bytes is streamed, not held."""
    while True:
        raw = stream.readline(EVENT_LIMIT)
        if not raw:
            return
        if not raw.endswith(b"\n") and len(raw) >= EVENT_LIMIT:
            hit = _streamed(raw, stream)
            if hit is not None:
                yield hit
            continue
        if not raw.endswith(b"\n"):
            return  # the last event, cut when the time limit killed rg: what came before it stands
        event = json.loads(raw)
        if event["type"] not in ("match", "context"):
            continue
        data = event["data"]
        spans = [(s["start"], s["end"]) for s in data.get("submatches", [])]
        yield Hit(_text(data["path"]), data["line_number"], event["type"] == "match", data["absolute_offset"],
                  _raw(data["lines"]), spans[:KEEP_SPANS], len(spans))


def _streamed(head: bytes, stream) -> Hit | None:
    """A giant event: keep the path, line number, offset and the first spans; count the rest."""
    kind = head[:40]
    if b'"type":"match"' not in kind and b'"type":"context"' not in kind:
        _drain(stream)
        return None
    path_match = _PATH.search(head)
    path = _json_string(path_match) if path_match else ""
    carry, number, offset, spans, total = head, None, 0, [], 0
    while True:
        if number is None:
            found = _LINE_NUMBER.search(carry)
            if found:
                number, offset = int(found.group(1)), int(found.group(2))
                carry = carry[found.end():]
        if number is not None:
            for m in _SPAN.finditer(carry):
                total += 1
                if len(spans) < KEEP_SPANS:
                    spans.append((int(m.group(1)), int(m.group(2))))
            last = carry.rfind(b"}")
            carry = carry[last + 1:] if last >= 0 else carry
        else:
            carry = carry[-64:]
        if carry.endswith(b"\n"):
            break
        piece = stream.readline(EVENT_LIMIT)
        if not piece:
            break
        carry += piece
    return Hit(path, number or 0, b'"type":"match"' in kind, offset, None, spans, total)


def _drain(stream) -> None:
    while (piece := stream.readline(EVENT_LIMIT)) and not piece.endswith(b"\n"):
        pass


def _json_string(m: re.Match) -> str:
    value = json.loads(b'"' + m.group(2) + b'"')
    return base64.b64decode(value).decode("utf-8", "replace") if m.group(1) == b"bytes" else value


def _line_length(doc, hit: Hit) -> int:
    """Bytes in a line rg did not hand over whole (streamed from the file)."""
    end = hit.offset
    with doc.open() as f:
        f.seek(end)
        while block := f.read(1 << 20):
            at = block.find(b"\n")
            if at >= 0:
                return end + at - hit.offset
            end += len(block)
    return end - hit.offset


def _merge(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(windows):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _text(field: dict) -> str:
    if "text" in field:
        return field["text"]
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", "replace")


def _raw(field: dict) -> bytes:
    if "text" in field:
        return field["text"].encode("utf-8")
    return base64.b64decode(field.get("bytes", ""))


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _rg_error(err: str) -> str:
    lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
    detail = " ".join(lines[:6])[:400] or err.strip()
    if "size limit" in detail:
        return "grep failed: the pattern is too large once compiled (a repetition like a{1000}{1000}); simplify it"
    return f"grep failed: {detail}. If the pattern is meant literally, add -F."
