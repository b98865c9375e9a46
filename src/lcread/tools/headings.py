"""Where a line sits: the headings and definitions of a document, found by one ripgrep pass.

Used by `grep -p` (as `git grep -p` shows the enclosing function): markdown and underlined headings,
`== title ==` lines, chapter / part / section lines, numbered section titles, page markers, def / class /
function lines in code, and the entries of release logs (a release's header line: a version and the date it
came out; a GNU ChangeLog entry: a date, a name and an address; a Debian changelog entry). A heading's level
makes the path: a level-2 heading sits under the level-1 heading before it; a definition sits under the less
indented definition before it.

A release log's lines say what changed, their heading says in which release and when: `Sections.release` gives
the heading that dates a line, and the search shows it with the line.
"""

from __future__ import annotations

import bisect
import json
import re
import subprocess

from lcread.text import full_date
from lcread.tools.grep import find_rg, opened

MAX_HEADINGS = 200_000
SCAN_BYTES = 64 << 20
"""Documents up to this size are scanned whole once; in a larger one (a 2 GB log) a line's headings are looked
for in the NEARBY lines above it, when asked (a whole scan of 2 GB costs seconds for every first search)."""
NEARBY, NEARBY_BYTES = 400, 1 << 16

PATTERNS = {
    "markdown": r"^#{1,6}\s+\S",
    "underline": r"^(={3,}|-{3,})\s*$",
    "wiki": r"^\s*={2,}[^=].*={2,}\s*$",
    "chapter": r"^\s*(?i:chapter|book|part|section|act|volume|appendix|article)\b[\s.:]*[0-9IVXLCDMivxlcdm]+\b",
    "numbered": r"^\s*\d+(\.\d+)*\.?\s+[A-Z/\"'(][^.!?]{0,80}$",
    "page": r"^\[page \d+\]\s*$",
    "code": r"^\s*(async\s+def|def|class|function|func|fn|pub\s+fn|sub|procedure|export\s+function|"
            r"export\s+default\s+function|interface|struct|impl|module)\s+[\w$.]+",
    # A release log's entries, which the checks in `_dated` make exact: a header line that starts with a word
    # and holds a version and a date ("Changes with nginx 1.21.5   28 Dec 2021", "* Noteworthy changes in
    # release 1.21.3 (2022-02-26)"); a GNU ChangeLog entry ("2019-05-30  A. Name  <a@b.org>"); a Debian changelog
    # entry ("rsync (3.2.7-1) bookworm; urgency=medium").
    "release": r"^[A-Za-z*#].*\b\d+\.\d+.*\b(?:19|20)\d\d\b",
    "entry": r"^(?:19|20)\d\d-\d\d-\d\d\s+\S.*<[^<>\s]+@[^<>\s]+>\s*$",
    "debian": r"^[a-z0-9][a-z0-9.+-]*\s+\([^()\s]+\)\s+[^;]+;\s*urgency=",
}
_LEVEL_BASE = {"page": 0, "chapter": 1, "wiki": 1, "markdown": 1, "underline": 1, "numbered": 2, "code": 10,
               "release": 1, "entry": 1, "debian": 1}
RELEASE_CHARS = 100
"""A release's header line is at most this long (a longer line holding a version and a date is prose)."""
_VERSION = re.compile(r"(?<![\w.-])v?\d+\.\d+(?:\.\d+)*(?:[-+~][\w.+~-]+)?(?![\w.]*\d)")
RELEASE_SCOPE_BYTES = 1 << 18
"""How far below its header a line is read as in that release (the lines between are read to be sure)."""
_TIME = re.compile(r"\b\d{1,2}:\d\d\b")


class Sections:
    """The headings of one document, in line order, with a level each."""

    def __init__(self, doc, timeout: float = 10.0):
        self.doc = doc
        self.lines: list[int] = []
        self.items: list[tuple[int, int, str]] = []  # (line, level, text)
        self.dated: set[int] = set()
        """The lines of the headings that date what sits under them (a release, a log entry)."""
        self._scopes: dict[int, int] = {}
        self._near: int | None = None
        self.nearby = doc.size > SCAN_BYTES
        if not self.nearby:
            self._scan(timeout)

    def _scan(self, timeout: float) -> None:
        args = [find_rg(), "--json", "--no-config", "-j1", "--line-number", "--max-count", str(MAX_HEADINGS)]
        for pattern in PATTERNS.values():
            args += ["-e", pattern]
        with opened([self.doc]) as (names, fds):  # the listed file, whatever its path names now
            if not names:
                return
            try:
                proc = subprocess.run(args + ["--", *names], capture_output=True, timeout=timeout, pass_fds=fds)
            except subprocess.TimeoutExpired:
                return
        previous: dict[int, str] = {}
        for raw in proc.stdout.splitlines():
            event = json.loads(raw)
            if event["type"] != "match":
                continue
            number = event["data"]["line_number"]
            text = event["data"]["lines"].get("text", "").rstrip("\r\n")[:200]
            item = self._classify(number, text, previous)
            if item:
                self.items.append(item)
                self.lines.append(item[0])

    def _classify(self, number: int, text: str, previous: dict) -> tuple[int, int, str] | None:
        for kind, pattern in PATTERNS.items():
            if not re.search(pattern, text):
                continue
            if kind == "release" and not _dated(text):
                continue
            if kind in ("release", "entry", "debian") or kind == "markdown" and _dated(text.lstrip("# ")):
                self.dated.add(number)
            if kind == "underline":
                above = next(iter(self.doc.read_lines(number - 1, number - 1, 400)), None) if number > 1 else None
                if above is None or not above.text.strip() or len(above.text) > 120:
                    return None
                return number - 1, 1 if text.strip()[0] == "=" else 2, above.text.strip()
            if kind == "markdown":
                return number, len(text) - len(text.lstrip("#")), text.strip()
            if kind == "numbered":
                return number, 1 + text.strip().split()[0].rstrip(".").count("."), text.strip()
            if kind == "code":
                return number, _LEVEL_BASE["code"] + len(text) - len(text.lstrip()), text.strip()
            return number, _LEVEL_BASE[kind], text.strip()
        return None

    def _scan_nearby(self, line: int) -> None:
        """The headings of the lines just above `line` (a large document's, looked for when asked)."""
        if self._near == line:  # scanned for this line already (the search asks for its heading and its release)
            return
        self._near = line
        self.lines, self.items, self.dated, self._scopes, previous = [], [], set(), {}, {}
        start, taken = max(1, line - NEARBY), 0
        for row in self.doc.read_lines(start, line, 1000):
            taken += row.length
            if taken > NEARBY_BYTES:
                break
            item = self._classify(row.number, row.text[:200], previous)
            if item:
                self.items.append(item)
                self.lines.append(item[0])

    def release(self, line: int) -> tuple[int, str] | None:
        """The heading that dates `line` (the release or log entry it belongs to), as (its line, its text)."""
        if self.nearby:
            self._scan_nearby(line)
        i = bisect.bisect_right(self.lines, line) - 1
        level = None
        for j in range(i, -1, -1):  # up the path: the innermost heading, then each less deep one
            number, depth, text = self.items[j]
            if level is not None and depth >= level:
                continue
            if number in self.dated:
                return (number, text) if line <= self._scope(j) else None
            level = depth
            if depth <= 1:
                return None
        return None

    def _scope(self, i: int) -> int:
        """The last line a dated heading (item i) dates: up to the next heading as deep or less, or to the first
        line between that starts as the heading does (its first word) and names a version (a log's older releases
        often have no date), or as far as was read (unsure, farther, is out of it)."""
        number, level, text = self.items[i]
        if number not in self._scopes:
            end = next((n - 1 for n, depth, _ in self.items[i + 1:] if depth <= level), self.doc.lines)
            lead, taken, last = text.split()[0] + " ", 0, number
            for row in self.doc.read_lines(number + 1, end, 1000):
                taken += row.length
                if taken > RELEASE_SCOPE_BYTES or row.text.startswith(lead) and _VERSION.search(row.text):
                    break
                last = row.number
            self._scopes[number] = last
        return self._scopes[number]

    def enclosing(self, line: int) -> tuple[int, str] | None:
        """The innermost heading above `line`, as (its line, its path from the outermost, ' > '-joined)."""
        if self.nearby:
            self._scan_nearby(line)
        i = bisect.bisect_right(self.lines, line) - 1
        if i < 0 or self.items[i][0] in self.dated and line > self._scope(i):
            return None
        path = [self.items[i]]
        for j in range(i - 1, -1, -1):
            if self.items[j][1] < path[0][1]:
                path.insert(0, self.items[j])
            if path[0][1] <= 1:
                break
        return self.items[i][0], " > ".join(text for _, _, text in path)


def _dated(text: str) -> bool:
    """Whether a line reads as a release's header: short, starting with a word, holding a version and a full date
    (day, month and year) and no time of day (a log line's timestamp), not ending as a sentence does."""
    line = text.strip()
    if len(line) > RELEASE_CHARS or line[-1:] in ".,;:" or _TIME.search(line):
        return False
    date = full_date(line)
    if date is None:
        return False
    rest = line[:date.start()] + " " * (date.end() - date.start()) + line[date.end():]
    return _VERSION.search(rest) is not None
