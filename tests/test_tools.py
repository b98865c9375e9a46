import pytest

from lcread.config import ToolConfig
from lcread.documents import DocumentStore
from lcread.tools import ToolRunner, parse

TEXT = "".join(f"line {i} filler text\n" for i in range(1, 201))
TEXT = TEXT.replace("line 120 filler text", "line 120 The Refund is capped at 40 euros")


@pytest.fixture
def runner(write):
    a = write("contract.txt", TEXT)
    b = write("notes.txt", "nothing here\nrefund policy see contract\n")
    return ToolRunner(DocumentStore.open([str(a), str(b)]))


def run(runner, text):
    return runner.run(parse(text))


def test_grep_shows_document_line_and_text(runner):
    obs = run(runner, 'grep -i "refund" contract.txt')
    assert obs.text == "contract.txt:120:line 120 The Refund is capped at 40 euros"
    assert not obs.truncated and not obs.error


def test_grep_over_all_documents_and_case(runner):
    assert run(runner, "grep refund").text == "notes.txt:2:refund policy see contract"
    both = run(runner, "grep -i refund").text.splitlines()
    assert both == ["contract.txt:120:line 120 The Refund is capped at 40 euros",
                    "notes.txt:2:refund policy see contract"]


def test_grep_context_marks_groups(runner):
    lines = run(runner, "grep -C 1 -e 'line 50 ' -e 'line 60 ' contract.txt").text.splitlines()
    assert lines == ["contract.txt-49-line 49 filler text", "contract.txt:50:line 50 filler text",
                     "contract.txt-51-line 51 filler text", "--", "contract.txt-59-line 59 filler text",
                     "contract.txt:60:line 60 filler text", "contract.txt-61-line 61 filler text"]


def test_grep_word_fixed_max_count_and_count(runner):
    assert run(runner, "grep -w 'line 1' contract.txt").text.startswith("contract.txt:1:line 1 filler")
    assert len(run(runner, "grep -w 'line 1' contract.txt").text.splitlines()) == 1
    assert run(runner, "grep -F 'at 40.' contract.txt").text.startswith("no matches")
    assert len(run(runner, "grep -m 3 filler contract.txt").text.splitlines()) == 3
    assert run(runner, "grep -c filler").text == "contract.txt: 199 matches\nnotes.txt: 0 matches"
    assert run(runner, r"grep 'line 7 \|line 9 ' contract.txt").text.count("\n") == 1


def test_no_match_and_bad_regex_go_back_as_observations(runner):
    obs = run(runner, "grep zebra")
    assert obs.text.startswith("no matches for 'zebra' in 2 documents") and not obs.error
    bad = run(runner, "grep 'a(b' contract.txt")
    assert bad.error and "grep failed" in bad.text and "-F" in bad.text


def test_unknown_document_lists_the_real_ones(runner):
    obs = run(runner, "grep refund /etc/passwd")
    assert obs.error and "no document named '/etc/passwd'" in obs.text and "contract.txt" in obs.text


def test_grep_output_is_capped_with_a_way_to_narrow(write):
    doc = write("big.txt", "".join(f"match number {i}\n" for i in range(5000)))
    runner = ToolRunner(DocumentStore.open([str(doc)]), ToolConfig(read_chars=1000))
    obs = run(runner, "grep match")
    assert obs.truncated and len(obs.text) <= 1000 + 200
    assert "output cut at 1,000 characters" in obs.text and "-m N" in obs.text


def test_grep_hit_on_a_giant_line_shows_a_window(write):
    doc = write("min.json", "{" + "a" * 200_000 + "SECRET=42" + "b" * 200_000 + "}\n")
    runner = ToolRunner(DocumentStore.open([str(doc)]), ToolConfig(match_window=50))
    obs = run(runner, "grep SECRET")
    assert "SECRET=42" in obs.text and len(obs.text) < 400
    assert "[chars 199,951-200,057 of 400,011]" in obs.text


def test_read_numbers_lines_and_cuts_with_a_continuation(write):
    doc = write("d.txt", "".join(f"row {i:04d} " + "x" * 40 + "\n" for i in range(1, 1001)))
    runner = ToolRunner(DocumentStore.open([str(doc)]), ToolConfig(read_chars=500))
    assert run(runner, "read d.txt 3 4").text.splitlines() == [f"3: row 0003 {'x' * 40}", f"4: row 0004 {'x' * 40}"]
    cut = run(runner, "read d.txt 1 1000")
    assert cut.truncated and len(cut.text) <= 600
    assert cut.text.splitlines()[-1] == "[cut at 500 characters; continue with: read d.txt 10 1000]"
    assert run(runner, "sed -n '7,7p' d.txt").text.startswith("7: row 0007")
    assert run(runner, "read d.txt 2000 2001").error


def test_read_a_long_line_in_pieces(write):
    doc = write("d.txt", "start\n" + "0123456789" * 1000 + "\n")
    runner = ToolRunner(DocumentStore.open([str(doc)]), ToolConfig(read_chars=300))
    first = run(runner, "read d.txt 2 2")
    assert first.truncated and "continue with: read d.txt 2 2 --from 300" in first.text
    nxt = run(runner, "read d.txt 2 2 --from 9990")
    assert nxt.text == "2: 0123456789"


def test_head_tail_wc_ls(runner):
    assert run(runner, "head -n 2 contract.txt").text == "1: line 1 filler text\n2: line 2 filler text"
    assert run(runner, "tail -n 1 contract.txt").text == "200: line 200 filler text"
    assert "200 lines" in run(runner, "wc contract.txt").text
    assert run(runner, "ls").text.splitlines()[1].startswith("notes.txt  (2 lines")


def test_a_grep_that_runs_too_long_is_stopped_with_a_hint(write):
    doc = write("big.txt", ("abcdefghij" * 10 + "\n") * 400_000)  # 40 MB; the pattern has no literal to skip by
    runner = ToolRunner(DocumentStore.open([str(doc)]), ToolConfig(grep_timeout=0.005))
    obs = run(runner, r"grep '\p{L}+\d'")
    assert obs.error and "grep stopped after 0.005 s (the limit for one command)" in obs.text


def test_a_term_is_counted_over_the_documents_once_per_runner(write, monkeypatch):
    import lcread.tools as tools_module

    store = DocumentStore.open([str(write("log.txt", "disk quota exceeded\nDisk full\nquota warning\n"))])
    scans = []
    real = tools_module.count_matches
    monkeypatch.setattr(tools_module, "count_matches", lambda *a, **k: scans.append(a) or real(*a, **k))
    runner = ToolRunner(store)
    assert [runner.count("quota"), runner.count("QUOTA"), runner.count("disk")] == [2, 2, 2]
    assert len(scans) == 2  # "quota" once, whatever its case; "disk" once
