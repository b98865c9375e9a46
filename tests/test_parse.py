import pytest

from lcread.tools.parse import ParseError, parse


def test_grep_flags_patterns_and_documents():
    cmd = parse('grep -n -i -w "special number" a.txt b.txt')
    assert cmd.name == "grep"
    assert cmd.patterns == ["special number"]
    assert cmd.docs == ["a.txt", "b.txt"]
    assert {"-i", "-w", "-n"} <= cmd.flags


def test_grep_bundled_and_joined_options():
    cmd = parse("grep -inF -C2 -m 5 'x' doc")
    assert {"-i", "-n", "-F"} <= cmd.flags
    assert (cmd.before, cmd.after, cmd.max_count) == (2, 2, 5)
    cmd = parse("grep -A 3 -B1 --ignore-case --max-count=2 x")
    assert (cmd.before, cmd.after, cmd.max_count) == (1, 3, 2)
    assert "-i" in cmd.flags and cmd.docs == []


def test_grep_several_e_patterns_and_basic_regex_alternation():
    cmd = parse(r"grep -e alpha -e 'beta\|gamma' doc")
    assert cmd.patterns == ["alpha", "beta|gamma"]
    assert cmd.docs == ["doc"]
    assert parse(r"grep -F 'a\|b'").patterns == [r"a\|b"]


def test_code_fences_and_prompt_sign_are_tolerated():
    cmd = parse("```bash\n$ grep -c foo notes.txt\n```")
    assert cmd.name == "grep" and "-c" in cmd.flags and cmd.docs == ["notes.txt"]


@pytest.mark.parametrize("text, start, end", [
    ("read doc.txt 10 20", 10, 20),
    ("sed -n '5,9p' doc.txt", 5, 9),
    ("sed -n 7p doc.txt", 7, 7),
    ("read doc.txt 30", 30, 89),
])
def test_line_ranges(text, start, end):
    cmd = parse(text)
    assert (cmd.name, cmd.docs, cmd.start, cmd.end) == ("read", ["doc.txt"], start, end)


def test_read_continuation_inside_a_long_line():
    cmd = parse("read doc.txt 4 4 --from 6000")
    assert (cmd.start, cmd.end, cmd.from_char) == (4, 4, 6000)


def test_head_tail_wc_ls():
    assert parse("head -n 5 doc").count == 5
    assert parse("tail -20 doc").count == 20
    assert parse("head doc").count == 10
    assert parse("wc -l a b").docs == ["a", "b"]
    assert parse("ls").name == "ls"


@pytest.mark.parametrize("text, answer", [
    ('answer "4817263"', "4817263"),
    ("answer 'Maria Okafor'", "Maria Okafor"),
    ("answer Maria Okafor", "Maria Okafor"),
    ('answer "He said \\"no\\""', 'He said "no"'),
    ('answer "first line\nsecond line"', "first line\nsecond line"),
])
def test_answer_forms(text, answer):
    assert parse(text).answer == answer


@pytest.mark.parametrize("text, message", [
    ("", "empty reply"),
    ("rm -rf /", "unknown command 'rm'"),
    ("cat doc.txt", "cat would print a whole document"),
    ("grep foo doc | head", "one command per step"),
    ("grep foo doc; ls", "one command per step"),
    ("grep -P foo doc", "grep option -P is not available"),
    ("grep", "grep needs a pattern"),
    ("grep -m x foo", "must be a whole number"),
    ("read doc 20 10", "END (10) is before START (20)"),
    ("read", "usage: read DOC START END"),
    ("sed -n 's/a/b/' doc", "is not supported"),
    ("grep 'unclosed doc", "check the quotes"),
    ("answer", "answer needs the answer text"),
    ("head a b", "one document"),
])
def test_errors_say_what_is_wrong(text, message):
    with pytest.raises(ParseError) as err:
        parse(text)
    assert message in str(err.value)


@pytest.mark.parametrize("text", [
    "search 'when did the ferry leave?': the 5 best passages of 580 lines matched, each as DOC:LINE with its section",
    "search when did the ferry leave? showed 23 lines, log.txt:3599-3609 · page 91 · [page 91] 3599: The ferry",
    "search when did the ferry leave? [log.txt:3491, log.txt:3492, log.txt:3493,]",
])
def test_a_search_copying_its_output_s_header_or_record_is_the_same_search_again(text):
    command = parse(text)
    assert command.text == "search when did the ferry leave?" and command.query == "when did the ferry leave?"


@pytest.mark.parametrize("text, query", [
    ("search Which chapter holds the line 'nobody had inclination to pay'? line 690",
     "Which chapter holds the line 'nobody had inclination to pay'? line 690"),
    ("search 'Which chapter holds the line 'nobody had", "'Which chapter holds the line 'nobody had"),
    ("search 'ferry departure time'", "ferry departure time"),
    ('search the "quiet harbor" number', 'the "quiet harbor" number'),
])
def test_a_search_is_plain_words_whatever_quotes_they_hold(text, query):
    command = parse(text)
    assert command.name == "search" and command.query == query
