import io

from rich.console import Console

from lcread.display import RichDisplay, gauge, preview


def console():
    return Console(file=io.StringIO(), width=100, color_system=None)


def test_gauge_fills_in_proportion():
    assert gauge(8192, 16384, width=10).plain == "▕█████·····▏ 8,192/16,384 tokens"
    assert gauge(20000, 16384, width=4).plain == "▕████▏ 20,000/16,384 tokens"


def test_preview_keeps_the_first_lines_and_counts_the_rest():
    text = "\n".join(f"line {i}" for i in range(10))
    assert preview(text, lines=2) == "line 0\nline 1\n… 8 more lines"
    assert preview("x" * 300, width=10) == "x" * 9 + "…"


def test_step_compaction_and_finish_render():
    c = console()
    d = RichDisplay(c)
    d.step(number=3, command='grep -i "refund"', observation="a.txt:1:refund\na.txt:9:refund", truncated=True,
           error=False, context=1200, limit=16384)
    d.compaction(handoff="Task: q\nFindings:\n- x", before=12400, after=900)
    d.finish(answer="40 euros", final=False, reason="step limit (40)", summary="40 steps")
    out = c.file.getvalue()
    assert '  3 $ grep -i "refund"' in out
    assert "→ 29 chars (cut)" in out and "1,200/16,384 tokens" in out
    assert "      a.txt:1:refund" in out
    assert "compacted 12,400 → 900 tokens" in out and "- x" in out
    assert "best answer so far (step limit (40))" in out and "40 euros" in out and "40 steps" in out
