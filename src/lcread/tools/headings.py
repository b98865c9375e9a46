"""Where a line sits: the headings and definitions of a document, found by one ripgrep pass.

Used by `grep -p` (as `git grep -p` shows the enclosing function): markdown and underlined headings,
`== title ==` lines, chapter / part / section lines, numbered section titles, page markers, and
def / class / function lines in code. A heading's level makes the path: a level-2 heading sits under
the level-1 heading before it; a definition sits under the less indented definition before it.
"""

from __future__ import annotations

import bisect
import json
import re
import subprocess

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
}
_LEVEL_BASE = {"page": 0, "chapter": 1, "wiki": 1, "markdown": 1, "underline": 1, "numbered": 2, "code": 10}


class Sections:
    """The headings of one document, in line order, with a level each."""

    def __init__(self, doc, timeout: float = 10.0):
        self.doc = doc
        self.lines: list[int] = []
        self.items: list[tuple[int, int, str]] = []  # (line, level, text)
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
        self.lines, self.items, previous = [], [], {}
        start, taken = max(1, line - NEARBY), 0
        for row in self.doc.read_lines(start, line, 1000):
            taken += row.length
            if taken > NEARBY_BYTES:
                break
            item = self._classify(row.number, row.text[:200], previous)
            if item:
                self.items.append(item)
                self.lines.append(item[0])

    def enclosing(self, line: int) -> tuple[int, str] | None:
        """The innermost heading above `line`, as (its line, its path from the outermost, ' > '-joined)."""
        if self.nearby:
            self._scan_nearby(line)
        i = bisect.bisect_right(self.lines, line) - 1
        if i < 0:
            return None
        path = [self.items[i]]
        for j in range(i - 1, -1, -1):
            if self.items[j][1] < path[0][1]:
                path.insert(0, self.items[j])
            if path[0][1] <= 1:
                break
        return self.items[i][0], " > ".join(text for _, _, text in path)
