import json
import math
import random

import pytest

from lcread.bench.corpus import synthetic_text
from lcread.bench.report import bench_plot, bench_summary, bench_table
from lcread.bench.runner import full_context, run_task
from lcread.bench.suites import niah
from lcread.config import AcsConfig
from lcread.models import Reply, TokenScore
from lcread.models.scripted import ScriptedModel
from lcread.trace import MemoryTrace


def test_every_mode_and_policy_on_one_task(tmp_path):
    task = niah("single", synthetic_text(3_000, seed=2), 2_400, 0.5, random.Random(4), tmp_path, "n")
    value = task.answers[0]

    def brain(messages):
        text = messages[-1]["content"]
        if text.startswith("Question:"):
            return 'grep -i "magic number"'
        if text.startswith("Output of"):
            return f'answer "{value}"'
        if text.startswith("Document:"):
            return value
        if text.startswith("New part"):
            return f"is {value}." if value in text else "nothing"
        if "0 to 100" in text:
            return "100" if value in text else "10"
        if "END if they do" in text:
            return "END" if value in text else "CONTINUE"
        sure = value in text
        return Reply(value if sure else "not found", 0, 0, 0.0,
                     scores=[TokenScore(value if sure else "not", math.log(0.999 if sure else 0.6))])

    model = ScriptedModel([brain] * 200, context_window=16384)
    rows = run_task(task, model, ["select", "acs", "full-context"], ["acs", "full", "end"],
                    AcsConfig(chunk_chars=600, notes_chars=400), MemoryTrace(), seed=1)
    by_mode = {r["mode"]: r for r in rows}
    acs_modes = [f"acs/{stop}·draft·{how}" for how in ("min", "mean") for stop in ("acs", "full", "end")]
    assert list(by_mode) == ["select", *acs_modes, "full-context"]  # an open question: both confidences
    assert all(r["correct"] for r in rows), [(r["mode"], r["answer"]) for r in rows]
    acs, full, end = by_mode["acs/acs·draft·min"], by_mode["acs/full·draft·min"], by_mode["acs/end·draft·min"]
    n, evidence = full["chunks_total"], full["evidence_chunk"]
    assert full["steps"] == n and evidence < n
    assert end["steps"] == evidence and acs["steps"] == min(n, evidence + 1)  # two agreeing answers
    assert end["total_tokens"] < full["total_tokens"]
    summary = bench_summary(rows)
    assert {s["mode"]: s["accuracy"] for s in summary} == {m: 1.0 for m in by_mode}
    end_summary = next(s for s in summary if s["mode"] == "acs/end·draft·min")
    expected = (full["total_tokens"] - end["total_tokens"]) / (full["total_tokens"] - end["oracle_tokens"])
    assert end_summary["premature"] == 0.0 and 0 < end_summary["capture"] == expected < 1  # gates cost tokens
    bench_plot(summary, tmp_path / "report.png")
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert bench_table(summary).row_count == len(summary)
    json.dumps(rows)  # the results file holds every row


def test_full_context_says_when_the_input_does_not_fit(tmp_path):
    task = niah("single", synthetic_text(40_000, seed=2), 30_000, 0.5, random.Random(4), tmp_path, "n")
    out = full_context(ScriptedModel([], context_window=4096), task)
    assert out["answer"] is None and out["error"].startswith("does not fit (")


def test_an_interrupted_run_stops_the_bench_instead_of_going_on_to_the_next_task(tmp_path):
    import pytest

    from lcread.bench.runner import run_bench

    tasks = [niah("single", synthetic_text(3_000, seed=s), 2_400, 0.5, random.Random(s), tmp_path, f"n{s}")
             for s in (1, 2)]

    def interrupted(messages):
        raise KeyboardInterrupt  # Ctrl-C or SIGTERM while the model works

    model = ScriptedModel([interrupted] * 10, context_window=16384)
    done = []
    with pytest.raises(KeyboardInterrupt):
        run_bench(tasks, model, ["select"], [], AcsConfig(), MemoryTrace(), 1, done.extend)
    assert done == [] and len(model.calls) == 1  # the second task never started


def test_one_real_document_is_a_suite_of_its_own(tmp_path):
    from lcread.bench.command import run
    from lcread.bench.suites import real_documents
    from lcread.errors import LcreadError

    assert {"bashref", "wgetlog"} <= set(real_documents())
    with pytest.raises(LcreadError, match="unknown suite 'real-nosuch': use .*real-bashref, .*real-wgetlog"):
        run(suites="real-wgetlog,real-nosuch", modes="select", stops="acs", tasks=1, lengths="1000", seed=1,
            model="scripted", api_base=None, chunk_chars=None, notes_chars=None, probes="auto", out=tmp_path)


def test_only_keeps_the_tasks_whose_id_or_question_matches_and_refuses_a_pattern_that_matches_none():
    from lcread.bench.command import matching
    from lcread.bench.suites import Task
    from lcread.errors import LcreadError

    tasks = [Task(f"{q}-{p}", "real-x", "?", ["1"], "doc", 0, group=q) for q in ("bash-127", "bash-ifs", "wget-tries")
             for p in "ab"]
    assert [t.id for t in matching(tasks, "bash-*")] == ["bash-127-a", "bash-127-b", "bash-ifs-a", "bash-ifs-b"]
    assert [t.id for t in matching(tasks, "wget-tries, *-127-b")] == ["bash-127-b", "wget-tries-a", "wget-tries-b"]
    assert [t.id for t in matching(tasks, "bash-ifs")] == ["bash-ifs-a", "bash-ifs-b"]  # a question: its phrasings
    assert matching(tasks, None) == tasks
    with pytest.raises(LcreadError, match="matches none of the 6 tasks.*bash-127-a"):
        matching(tasks, "nginx-*")


def test_the_bench_asks_whether_the_first_step_holds_the_evidence_of_as_many_passages_as_a_run_shows(tmp_path):
    """Seven paragraphs match the question alike; the one that answers ranks seventh. The first step shows it (as
    many passages as a run's first step shows, `search.TOP`), and the bench's measure of it says so."""
    from types import SimpleNamespace

    from lcread.bench.runner import _evidence_checks
    from lcread.bench.suites import Task
    from lcread.documents import DocumentStore
    from lcread.tools.search import TOP

    paragraphs = []
    for i in range(7):
        paragraphs.append("Boats of the outer basin settle their harbour fee of 40 euros at the office, after mooring "
                          "there for the night." if i == 6 else
                          f"The harbour fee for the inner basin is posted at pier {i}; the harbour fee is paid daily.")
        paragraphs += [f"Filler line {i} {j} about ropes, knots and sails." for j in range(30)]
    doc = tmp_path / "guide.txt"
    doc.write_text("\n\n".join(paragraphs) + "\n")
    task = Task("fee", "real-guide", "What is the harbour fee?", ["40 euros"], str(doc), doc.stat().st_size,
                evidence_text="harbour fee of 40 euros")
    checks = _evidence_checks(task, DocumentStore.open([str(doc)]), SimpleNamespace(citations=[]))
    assert TOP >= 7 and checks["evidence_found"] and checks["first_step_holds_evidence"]
