"""Single-needle tasks with known evidence positions (RULER's S-NIAH style) over real text."""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path

# The single-needle suite the benchmarks share: 5 lengths x 4 depths = 20 tasks.
LENGTHS = [50_000, 100_000, 250_000, 500_000, 1_000_000]
DEPTHS = [0.05, 0.35, 0.65, 0.95]

ADJECTIVES = ("quiet amber silver hollow crimson gentle northern wild bitter golden distant frozen "
              "narrow velvet marble copper scarlet patient").split()
NOUNS = ("harbor falcon meadow lantern orchard compass glacier thistle beacon quarry willow cipher "
         "garnet ember sparrow canyon").split()


@dataclass
class NeedleTask:
    id: str
    question: str
    answer: str
    path: str
    chars: int
    depth: float
    evidence_start: int
    """Character offset of the needle in the document."""
    evidence_end: int
    evidence_line: int


def needle_task(haystack: str, chars: int, depth: float, rng: random.Random, folder: Path,
                task_id: str) -> NeedleTask:
    """Cut a `chars`-long slice of the haystack at line boundaries, hide one needle at `depth`, write it."""
    start = rng.randrange(0, max(1, len(haystack) - chars))
    start = haystack.rfind("\n", 0, start) + 1
    body = haystack[start:start + chars]
    body = body[: body.rfind("\n") + 1] or body
    key = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}-{rng.randrange(10, 99)}"
    value = str(rng.randrange(1_000_000, 9_999_999))
    needle = f"The special magic number for {key} is {value}."
    at = body.rfind("\n", 0, int(len(body) * depth)) + 1
    text = body[:at] + needle + "\n" + body[at:]
    path = folder / f"{task_id}.txt"
    path.write_text(text, encoding="utf-8")
    line = text.count("\n", 0, at) + 1
    return NeedleTask(task_id, f"What is the special magic number for {key}?", value, str(path), len(text), depth,
                      at, at + len(needle), line)


def needle_tasks(haystack: str, lengths: list[int], depths: list[float], seed: int, folder: Path) -> list[NeedleTask]:
    """One task per (length, depth) pair, deterministic for a seed."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    tasks = []
    for i, (chars, depth) in enumerate((c, d) for c in lengths for d in depths):
        tasks.append(needle_task(haystack, chars, depth, rng, folder, f"niah-{seed}-{i:02d}"))
    (folder / "tasks.jsonl").write_text("".join(json.dumps(asdict(t)) + "\n" for t in tasks))
    return tasks


def is_correct(answer: str, expected: str) -> bool:
    """A needle answer is right when it contains the expected value as a whole token."""
    return re.search(rf"(?<![\w]){re.escape(expected)}(?![\w])", answer) is not None
