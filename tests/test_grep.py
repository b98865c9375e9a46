"""What grep shows: a window per match on a long line, merged windows, cut outputs that say so, headings."""

import io
import json

from lcread.config import ToolConfig
from lcread.documents import DocumentStore
from lcread.tools import ToolRunner, parse
from lcread.tools.grep import _hits


def test_every_match_on_a_long_line_gets_its_own_window(write):
    line = "Oxbury 68,564 beds. " + "filler words " * 3000 + "Marlow Street 12,310 beds. " + "more " * 3000
    runner = ToolRunner(DocumentStore.open([str(write("long.txt", "head\n" + line + "\n"))]),
                        ToolConfig(match_window=40))
    obs = runner.run(parse("grep beds"))
    rows = obs.text.splitlines()
    assert len(rows) == 2 and all(r.startswith("long.txt:2:[chars ") for r in rows)
    assert "Oxbury 68,564 beds" in rows[0] and "Marlow Street 12,310 beds" in rows[1]
    start = line.index("Marlow Street 12,310 beds") + len("Marlow Street 12,310 ") - 40
    assert f"[chars {start:,}-" in rows[1]  # offsets are characters of the line
    assert [s.start for s in obs.shown] == [0, start]


def test_windows_that_overlap_are_merged_and_count_counts_matches(write):
    line = "x" * 600 + "alpha beta alpha" + "y" * 600
    runner = ToolRunner(DocumentStore.open([str(write("d.txt", line + "\nalpha\n"))]), ToolConfig(match_window=40))
    assert len(runner.run(parse("grep alpha d.txt")).text.splitlines()) == 2  # one window for line 1, line 2
    assert runner.run(parse("grep -c alpha")).text == "d.txt: 3 matches"


def test_a_match_longer_than_the_cap_is_shown_cut_not_reported_missing(write):
    runner = ToolRunner(DocumentStore.open([str(write("e.log", "ok\nERROR " + "z" * 20_000 + "\n"))]),
                        ToolConfig(read_chars=1000))
    obs = runner.run(parse("grep 'ERROR.*'"))
    assert "ERROR zzz" in obs.text and not obs.text.startswith("no matches") and len(obs.text) <= 1300


def test_a_cut_output_says_how_many_matches_were_not_shown(write):
    runner = ToolRunner(DocumentStore.open([str(write("b.txt", "".join(f"hit {i}\n" for i in range(3000))))]),
                        ToolConfig(read_chars=1000))
    obs = runner.run(parse("grep hit"))
    shown = obs.text.count("\nb.txt:") + 1
    assert obs.truncated and f"{shown:,} matches shown, {3000 - shown:,} more matches not shown" in obs.text


def test_grep_p_shows_the_enclosing_heading_or_definition(write):
    md = write("guide.md", "# Guide\nintro\n## Refunds\nThe refund is capped at 40 euros.\n## Returns\nok\n")
    py = write("mod.py", "class Reader:\n    def __init__(self, limit=LIMIT):\n        self.limit = limit\n")
    novel = write("novel.txt", "CHAPTER I\nIt was a dark night.\n\nChapter 2\nThe letter was hidden.\n")
    runner = ToolRunner(DocumentStore.open([str(md), str(py), str(novel)]))
    assert runner.run(parse("grep -p refund guide.md")).text.splitlines() == [
        "guide.md=3=# Guide > ## Refunds", "guide.md:4:The refund is capped at 40 euros."]
    assert "mod.py=2=class Reader: > def __init__(self, limit=LIMIT):" in runner.run(parse("grep -p self.limit mod.py")).text
    assert runner.run(parse("grep -p letter novel.txt")).text.startswith("novel.txt=4=Chapter 2")


def test_an_event_cut_when_rg_is_killed_is_dropped_and_the_hits_before_it_stand():
    def event(n):
        return json.dumps({"type": "match", "data": {"path": {"text": "a.log"}, "lines": {"text": f"line {n}\n"},
                                                     "line_number": n, "absolute_offset": 7 * n,
                                                     "submatches": [{"start": 0, "end": 4}]}}).encode() + b"\n"

    whole = event(1) + event(2)
    hits = list(_hits(io.BytesIO(whole + event(3)[:40])))  # the time limit killed rg while it wrote line 3
    assert [(h.path, h.number) for h in hits] == [("a.log", 1), ("a.log", 2)]
