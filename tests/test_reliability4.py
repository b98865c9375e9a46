"""Reliability round 4: the crashes real questions hit, and the classes of the adversarial probe."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import lcread
from lcread.documents import DocumentStore
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner, parse

WORDS = ["crate", "crates", "tally", "customs", "house", "unclaimed", "harbour", "the", "of", "was", "kept", "at",
         "Dunmere", "recent", "most", "12", "40", "ledger"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.lists(st.sampled_from(WORDS + ["lorem ipsum dolor sit amet " * 30]), min_size=1,
                               max_size=200).map(" ".join), min_size=1, max_size=30),
       repeat=st.integers(1, 4),
       query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join))
def test_ranked_search_of_any_document_and_query_never_fails(tmp_path_factory, lines, repeat, query):
    """Equal scores (the windows of one long line repeating itself) never leave the ranking to compare passages."""
    path = tmp_path_factory.mktemp("doc") / "doc.txt"
    path.write_text("\n".join(lines * repeat) + "\n")
    out = ToolRunner(DocumentStore.open([str(path)])).run(parse(f"search {query}"))
    assert out.text and all(line.startswith(("[", " ", "  ")) or line for line in out.text.splitlines())
    assert out.error or out.shown  # passages, or a message saying none matched


def test_windows_of_one_long_line_that_score_alike_are_all_ranked(write):
    filler = "lorem ipsum dolor sit amet " * 30  # more than two windows apart: each match its own window
    line = "".join([filler + "the most recent tally of unclaimed crates kept by the customs house at Dunmere "] * 20)
    doc = write("log.txt", "header\n" + line + "\n" + line + "\n")
    out = ToolRunner(DocumentStore.open([str(doc)])).run(
        parse("search most recent tally of unclaimed crates customs house Dunmere"))
    assert not out.error and "log.txt:2" in out.text


HOSTILE_ANSWERS = ["--log-file=<path>", "-o pipefail", "--quiet-mode", "-x nowhere", "--regexp", "-e", "--", "-", "-i -F", "--regexp=x", "'", '"',
                   "a\nb", "line one\n--two", "$(rm -rf /)", "x | y", "-C 5", "\\", "--from 3"]


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS)
def test_no_answer_text_makes_ask_raise(write, answer):
    doc = write("manual.txt", "".join(f"Option {i} sets the level of detail.\n" for i in range(40))
                + "Use --log-file=<path> to write the log to a file; set -o pipefail in scripts.\n")
    model = ScriptedModel([f"answer {answer!r}"] * 12 + ['answer "none"'] * 12)
    for question in ("Which option writes the log to a file?", "What does --quiet-mode do?", "How many options?"):
        result = lcread.ask(str(doc), question, model=model, first_step=True)
        assert isinstance(result.answer, str) and result.answer
