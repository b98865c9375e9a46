"""The ranked search, definitions, lcread's first step, continued outputs and searchable text, on real rg."""

import re

import pytest

from lcread.agent.sac import SacReader
from lcread.agent.select import SelectReader
from lcread.config import LoopConfig, ToolConfig
from lcread.convert.formats import searchable
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.language import load

STOPWORDS = set(load().stopwords)
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner, parse
from lcread.tools import grep as grep_module
from lcread.tools.definitions import assigned_names, assigning_pattern
from lcread.tools.search import forms_of, query_terms
from lcread.trace import MemoryTrace

FILLER = [f"Line {i}: the harbour road runs past the orchard and the mill towards the bridge." for i in range(1, 400)]


def hay(write, line: int, text: str, name="log.txt"):
    lines = list(FILLER)
    lines[line - 1] = text
    return write(name, "\n".join(lines) + "\n")


def test_query_terms_cover_word_forms_identifiers_and_joined_words():
    assert {"left", "leaves", "leaving"} <= forms_of("leave")
    terms = {t.key: t for t in query_terms("What is the default buffer limit of HTTPStatus.IM_A_TEAPOT?", STOPWORDS)}
    assert {"default", "buffer", "limit", "teapot", "im_a_teapot"} <= set(terms)
    assert terms["im_a_teapot"].whole and "bufferlimit" in terms  # "buffer limit" may be written BUFFERLIMIT
    assert "what" not in terms and "is" not in terms


def test_search_finds_a_passage_that_uses_other_forms_of_the_question_s_words(write):
    store = DocumentStore.open([str(hay(write, 250, "The harbour log says the ferry left at 6:15 on Tuesday."))])
    out = ToolRunner(store).run(parse("search when did the ferry leave"))
    first = out.text.splitlines()[1]
    assert first.startswith("[1] log.txt:") and "250: The harbour log says the ferry left at 6:15" in out.text
    assert any(s.line == 250 for s in out.shown)


def test_search_shows_the_heading_path_of_each_passage(write):
    text = "# Guide\n\n## Backups\n\n" + "\n".join(FILLER[:50]) + "\n\n## Network\n\nThe backup service listens on " \
           "port 7420 unless BACKUP_PORT is set.\n"
    store = DocumentStore.open([str(write("guide.md", text))])
    out = ToolRunner(store).run(parse("search which port does the backup service listen on"))
    assert "[1] guide.md:" in out.text and "# Guide > ## Network" in out.text.splitlines()[1]


def test_search_on_one_long_line_shows_windows_with_character_offsets(write):
    line = " ".join(["filler words about nothing in particular"] * 3000)
    line = line[:60_000] + " The gale warning count at Brennan Ford was four. " + line[60_000:]
    store = DocumentStore.open([str(write("one.txt", line + "\n"))])
    out = ToolRunner(store).run(parse("search gale warnings Brennan Ford"))
    assert "1: [chars 59," in out.text and "Brennan Ford was four" in out.text
    piece = next(s for s in out.shown if "Brennan" in s.text)
    assert piece.start > 59_000 and len(out.text) <= 6000


def test_search_without_a_match_says_so(write):
    store = DocumentStore.open([str(hay(write, 3, "nothing here"))])
    out = ToolRunner(store).run(parse("search zeppelin airship"))
    assert out.error and "no passage" in out.text


def test_definition_finds_names_in_several_languages(write):
    write("src/streams.py", "import os\n\n_DEFAULT_LIMIT = 2 ** 16  # 64 KiB\n\nclass StreamReader:\n"
                            "    def __init__(self, limit=_DEFAULT_LIMIT):\n        self._limit = limit\n")
    write("src/main.go", "package main\n\nfunc ParseDate(s string) (time.Time, error) {\n\treturn nil\n}\n")
    write("src/conf.h", "#define MAX_NAME_SIZE 256\nint parse(void);\n")
    store = DocumentStore.open([str(write("src/x.txt", "x\n").parent)])
    tools = ToolRunner(store)
    assert "streams.py:3:_DEFAULT_LIMIT = 2 ** 16" in tools.run(parse("definition _DEFAULT_LIMIT")).text
    assert "main.go:3:func ParseDate" in tools.run(parse("definition ParseDate")).text
    assert "conf.h:1:#define MAX_NAME_SIZE 256" in tools.run(parse("definition MAX_NAME_SIZE")).text
    missing = tools.run(parse("definition NoSuchName"))
    assert "no definition of 'NoSuchName'" in missing.text


def test_ranked_search_in_code_shows_the_constant_a_default_hides_behind(write):
    body = "\n".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(80))
    write("lib/streams.py", body + "\n\nclass StreamReader:\n    def __init__(self, limit=_DEFAULT_LIMIT, loop=None):\n"
                            "        # The buffer limit is the line length limit.\n        self._limit = limit\n")
    write("lib/constants.py", "\n".join(f"OTHER_{i} = {i}" for i in range(200)) + "\n_DEFAULT_LIMIT = 2 ** 16\n")
    store = DocumentStore.open([str(write("lib/README", "a library\n").parent)])
    found = ToolRunner(store).ranked("What is the default buffer limit of a StreamReader?")
    assert "def __init__(self, limit=_DEFAULT_LIMIT" in found.text
    assert "definition _DEFAULT_LIMIT" in found.text and "constants.py:201:_DEFAULT_LIMIT = 2 ** 16" in found.text
    assert any(s.doc.endswith("constants.py") and s.line == 201 for s in found.shown)


def test_a_parameter_s_default_is_shown_with_the_docstring_below_its_signature(write):
    """A docstring documents a parameter far below the signature that states its default: the search shows the
    signature's line giving a value to the asked name with the passage, as a line of its own to cite."""
    params = "\n".join(f"    option_{i}: int = {i}," for i in range(12))
    doc = "\n".join(f"    Line {i} of the long description of how a gauge is drawn and refreshed." for i in range(40))
    code = (f"def gauge(\n    label: str = \"\",\n{params}\n    width: int = 36,\n    colour: bool = False,\n"
            f") -> None:\n"
            f'    """Draw a gauge.\n\n{doc}\n\n    :param width: the width of the gauge bar in characters.\n'
            f'    :param colour: whether to colour the gauge.\n    """\n    draw(label, width)\n')
    write("pkg/gauges.py", code)
    write("pkg/other.py", "\n".join(f"def unrelated_{i}(width):\n    return width * {i}\n" for i in range(30)))
    store = DocumentStore.open([str(write("pkg/README", "a package\n").parent)])
    found = ToolRunner(store).ranked("What is the default width of the gauge bar?")
    first = found.text.split("\n[2]")[0]
    assert ":param width:" in first and "15:     width: int = 36," in first
    assert any(s.line == 15 and s.kind == "context" and "36" in s.text for s in found.shown)


def test_a_passage_in_one_method_is_not_shown_another_method_s_values(write):
    code = ("class Panel:\n    def __init__(self):\n        self.margin = 80\n\n    def render(self, text):\n"
            "        # the margin of a rendered panel is measured in columns\n        return text\n")
    store = DocumentStore.open([str(write("ui/panel.py", code))])
    found = ToolRunner(store).ranked("What margin does a rendered panel have?")
    first = found.text.split("\n[2]")[0]
    assert "6:         # the margin of a rendered panel" in first and "self.margin = 80" not in first


def test_a_line_giving_the_asked_name_its_value_is_among_the_passages(write):
    """`__version__ = "4.2.0"` holds one word of "which version of gizmo is this", as every docstring does: a
    passage of code that states a value for a name made of the question's words ranks above them."""
    noise = "\n".join(f"def check_{i}(part):\n    \"\"\"Check that part {i} of gizmo has a recent version and "
                       f"release.\"\"\"\n    return part.ok\n" for i in range(40))
    write("gizmo/cli.py", noise)
    write("gizmo/__init__.py", "\n".join(f"from gizmo.part{i} import thing{i}" for i in range(30))
          + '\n\n__version__ = "4.2.0"\n')
    store = DocumentStore.open([str(write("gizmo/README", "gizmo\n").parent)])
    found = ToolRunner(store).ranked("Which version of gizmo is this?")
    assert '__version__ = "4.2.0"' in found.text.split("\n[2]")[0]


def test_a_name_s_value_is_found_when_its_line_holds_only_a_word_many_lines_hold(write):
    """`width = 36` holds one word of the question, which a hundred comments hold with the other: the best lines
    of the ripgrep pass leave it out; the lines giving a value to a name of the question's words are looked for
    too, scored with the class they are in."""
    write("pkg/gauge.py", "import os\n\n\nclass Gauge:\n    width = 36\n\n    def draw(self):\n        return os.sep\n")
    write("pkg/notes.py", "\n\n".join(f"def note_{i}():\n    # the width of gauge {i} is computed\n    return {i}"
                                       for i in range(100)) + "\n")
    store = DocumentStore.open([str(write("pkg/README", "a package\n").parent)])
    found = ToolRunner(store).ranked("What is the default width of a gauge?")
    assert found.text.splitlines()[1].startswith("[1] pkg/gauge.py:4-5") and "5:     width = 36" in found.text


@pytest.mark.parametrize("line,names", [
    ("    width: int = 36,", ["width"]),
    ('__version__ = "8.1.3"', ["__version__"]),
    ("def wrap_text(text, width=78, indent=''):", ["width", "indent"]),
    ("        self.max_redirects = DEFAULT_REDIRECT_LIMIT", ["self.max_redirects"]),
    ("#define MAX_LINE 80", ["MAX_LINE"]),
    ("const limit = [1, 2];", ["limit"]),
    ("        self.width = width", []),  # no stated value: another name's
    ("    bytes_written = 2 * units.value", []),  # computed
    ("    wrap(width=3)", []),  # a call's argument
    ("    if width == 3:", []),
])
def test_the_names_a_line_of_code_gives_a_stated_value(line, names):
    assert assigned_names(line) == names
    assert bool(re.search(assigning_pattern(["width", "version", "redirect", "line", "limit", "bytes", "indent"]),
                          line, re.I)) == bool(names)


def test_grep_and_search_work_over_more_paths_than_one_rg_argument_list_holds(write, monkeypatch):
    monkeypatch.setattr(grep_module, "ARG_BYTES", 2_000)  # 300 files need several rg processes
    for i in range(300):
        write(f"many/file_with_a_long_name_{i:03d}.txt", f"record {i}\n" + ("the needle is here\n" if i == 277 else ""))
    store = DocumentStore.open([str(write("many/zzz.txt", "last\n").parent)])
    tools = ToolRunner(store)
    assert "file_with_a_long_name_277.txt:2:the needle is here" in tools.run(parse("grep needle")).text
    assert tools.run(parse("grep -c record")).text.count(": 1 matches") == 300
    assert "2: the needle is here" in tools.run(parse("search needle")).text
    assert len(grep_module.batches([str(d.path) for d in store.docs])) > 1


def test_a_folder_file_that_cannot_be_read_is_skipped_with_a_warning(write):
    write("site/empty.html", "<html><body></body></html>")
    write("site/page.html", "<html><body><p>The ferry left at 6:15.</p></body></html>")
    store = DocumentStore.open([str(write("site/notes.txt", "notes\n").parent)])
    assert sorted(d.name for d in store.docs) == ["site/notes.txt", "site/page.html"]
    assert any("skipped 1 files that could not be read" in w and "empty.html" in w for w in store.warnings)


def test_searchable_text_joins_hyphenation_and_folds_ligatures():
    assert searchable("an ASN.1 iden\ufffetifier") == "an ASN.1 identifier"
    assert searchable("de\ufffe\nfinition of the \ufb01le\u00a0size") == "definition of the file size"
    assert searchable("line one\nline two\n").count("\n") == 2


def test_plain_text_with_ligatures_and_soft_hyphens_is_found_by_its_own_words(write):
    store = DocumentStore.open([str(write("t.txt", "The con\u00adfig \ufb01le holds the\u00a0limit.\nsecond line\n"))])
    out = ToolRunner(store).run(parse('grep -F "config file holds the limit"'))
    assert "t.txt:1:The config file holds the limit." in out.text and store.docs[0].lines == 2


# --- lcread's first step, and outputs that continue -------------------------------------------------------

def loop(kind, model, store, **config):
    reader = {"select": SelectReader, "sac": SacReader}[kind]
    trace = MemoryTrace()
    return reader(model, ToolRunner(store), SilentDisplay(), trace, LoopConfig(**config)), trace


def test_a_small_input_is_read_whole_and_answered_in_one_call(write):
    store = DocumentStore.open([str(write("ferry.txt", "The harbour log says the ferry left at 6:15.\n"))])
    model = ScriptedModel(['answer "6:15"'])
    reader, trace = loop("select", model, store)
    result = reader.run("When did the ferry leave?")
    assert (result.answer, result.verified, len(model.calls)) == ("6:15", True, 1)
    assert "1: The harbour log says the ferry left at 6:15." in model.calls[0]["messages"][1]["content"]
    first = trace.of("command")[0]
    assert (first["step"], first["command"], first["auto"]) == (0, "read ferry.txt 1 1", True)


@pytest.mark.parametrize("kind", ["select", "sac"])
def test_the_first_observation_is_lcread_s_ranked_search(write, kind):
    store = DocumentStore.open([str(hay(write, 321, "Drafting rules: the ferry departed from pier 9 at 6:15."))])
    model = ScriptedModel(['answer "6:15"'])
    reader, _ = loop(kind, model, store)
    result = reader.run("When did the ferry leave?")
    first = model.calls[0]["messages"][-1]["content"]
    assert "search When did the ferry leave?" in first and "321: Drafting rules: the ferry departed" in first
    assert result.verified and len(model.calls) == 1


def test_a_grep_that_finds_nothing_is_answered_with_the_ranked_search(write):
    store = DocumentStore.open([str(hay(write, 200, "The ferry left the harbour at 6:15."))])
    model = ScriptedModel(['grep "departure"', 'answer "6:15"'])
    reader, _ = loop("select", model, store, first_step=False)
    reader.run("When did the ferry leave?")
    seen = model.calls[1]["messages"][-1]["content"]
    assert "no matches for 'departure'" in seen and "lcread searched for the passages" in seen
    assert "200: The ferry left the harbour at 6:15." in seen


@pytest.mark.parametrize("kind", ["select", "sac"])
def test_a_cut_read_asked_again_continues_where_it_stopped(write, kind):
    line = "x" * 7000 + " The answer is 4817263. " + "y" * 8000
    store = DocumentStore.open([str(write("long.txt", "head\n" + line + "\n"))])
    state = '\n{"current_step": "reading", "plan": [], "completion_requirements": [], "findings": [], "next_steps": []}'
    reply = "read long.txt 2 2" + (state if kind == "sac" else "")
    model = ScriptedModel([reply, reply, reply, 'answer "4817263"'])
    reader, trace = loop(kind, model, store, first_step=False)
    result = reader.run("What is the answer?")
    second = model.calls[2]["messages"][-1]["content"]
    assert "continues where it stopped" in second and "The answer is 4817263" in second
    assert result.answer == "4817263" and result.verified
    third = model.calls[3]["messages"][-1]["content"]
    assert "yyyy" in third and "xxxx" not in third.split("continues where it stopped", 1)[1]


def test_a_cut_grep_asked_again_shows_the_next_matches(write):
    store = DocumentStore.open([str(write("m.txt", "".join(f"match number {i} {'z' * 60}\n" for i in range(200))))])
    model = ScriptedModel(["grep match", "grep match", 'answer "none"'])
    reader, _ = loop("select", model, store, first_step=False, max_refusals=0)
    reader.run("What is the last match number?")
    first, again = model.calls[1]["messages"][-1]["content"], model.calls[2]["messages"][-1]["content"]
    last_first = max(int(n) for n in __import__("re").findall(r"m\.txt:(\d+):", first))
    shown_again = [int(n) for n in __import__("re").findall(r"m\.txt:(\d+):", again)]
    assert shown_again and min(shown_again) == last_first + 1


def test_tool_config_cap_bounds_the_ranked_search(write):
    store = DocumentStore.open([str(hay(write, 10, "The ferry left at 6:15."))])
    out = ToolRunner(store, ToolConfig(read_chars=600)).run(parse("search ferry harbour road orchard"))
    assert len(out.text) <= 600


def test_joined_words_that_occur_nowhere_do_not_crowd_the_rare_words_out_of_the_prefilter(write):
    for i in range(400):
        write(f"logs/part{i % 10}/log-{i:04d}.txt", f"2026-11-30T10:00:00 INFO worker-{i % 32} request {i} served\n")
    write("logs/part7/log-0277.txt", "2026-11-30T23:59:59 ERROR worker-3 disk quota exceeded on volume 9\n")
    store = DocumentStore.open([str(write("logs/README", "logs\n").parent)])
    out = ToolRunner(store).run(parse("search which volume ran out of disk quota"))
    assert "1: 2026-11-30T23:59:59 ERROR worker-3 disk quota exceeded on volume 9" in out.text


def test_a_passage_holding_a_value_of_the_asked_kind_ranks_first(write):
    lines = list(FILLER)
    lines[99] = "How long the ferry to the island takes depends on the tide at the island ferry pier."
    lines[299] = "The ferry to the island takes 40 minutes."
    store = DocumentStore.open([str(write("t.txt", "\n\n".join(lines) + "\n"))])
    tools = ToolRunner(store)
    plain = tools.ranked("how long does the ferry to the island take", top=2)
    typed = tools.ranked("how long does the ferry to the island take", top=2, kind="number")
    assert "ferry pier" in plain.passages[0].text  # more of the words, no value
    assert "40 minutes" in typed.passages[0].text  # the one that states a number
    # lcread's own searches in a run ask for the question's kind
    model = ScriptedModel(['answer "40"'])
    result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace()).run(
        "How many minutes does the ferry to the island take?")
    assert result.answer == "40" and result.verified
    first = model.calls[0]["messages"][-1]["content"]
    assert first.index("40 minutes") < first.index("ferry pier")


def test_a_question_s_words_bring_in_the_words_documents_use_for_the_same_thing(write):
    paragraphs = [[f"Entry {i}: a package of goods holds many names and labels of characters.",
                   f"Entry {i}: the command ran and its exit was printed with a code on the screen.",
                   f"Entry {i}: a plot of the data appears in the window at a given scale."][i % 3] for i in range(200)]
    paragraphs[120] = "Names of packages need at least two letters."  # minimum: at least
    paragraphs[150] = "When a command is not found, the shell exits with status 127."  # doesn't exist, exit code
    paragraphs[170] = "By default a plot is 10 inches wide and 7 inches high."  # unless given: default; how big
    tools = ToolRunner(DocumentStore.open([str(write("policy.txt", "\n\n".join(paragraphs) + "\n"))]))
    first = lambda q: tools.ranked(q, top=1).passages[0].start  # noqa: E731
    assert first("What is the minimum number of characters in a package name?") == 241
    assert first("If I run a command that doesn't exist, which exit code will I get?") == 301
    assert first("How big is a plot unless a size is given?") == 341


def test_related_words_count_less_than_the_question_s_own():
    terms = {t.key: t for t in query_terms("What is the minimum length of a name?", STOPWORDS)}
    assert terms["minimum"].related is False and terms["less"].related is True
    assert "unless" not in {t.key for t in query_terms("How wide is the plot unless told otherwise?", STOPWORDS)}


def test_a_table_of_contents_says_nothing_and_a_passage_is_shown_under_its_heading_path(write):
    contents = ["Contents", "3.7.5 Exit Status . . . . . . . . . . . . . . . 44",
                "5.11. /var/mail : User mailbox files (optional) . . . . . . . . . 43"]
    body = ["5.11. /var/mail : User mailbox files (optional)", "5.11.1. Purpose",
            "The mail spool must be accessible through the spool directory and the mail spool files",
            "must take the form <username>.",
            "User mailbox files in this location must be stored in the standard UNIX mailbox format.",
            "Rationale", "The logical location for this directory was changed in order to bring"]
    lines = contents + FILLER[:150] + body + FILLER[150:300]
    store = DocumentStore.open([str(write("fhs.txt", "\n".join(lines) + "\n"))])
    out = ToolRunner(store).run(parse("search Where are user mailbox files kept?"))
    first = out.text.splitlines()[1]
    section = 3 + 150 + 1  # the line of the section's heading
    start = int(first.split(":", 1)[1].split("-", 1)[0])
    assert section <= start <= section + 4  # the section's lines, not the contents' line 3
    assert "5.11. /var/mail : User mailbox files (optional) > 5.11.1. Purpose" in first  # what the section is about
    assert "stored in the standard UNIX mailbox format" in out.text


def test_when_every_word_is_common_the_lines_holding_them_are_still_found(write):
    lines = [f"2026-11-30T10:00:{i % 60:02d} INFO worker-{i % 32} request {i} served in 12 ms" for i in range(30_000)]
    store = DocumentStore.open([str(write("app.log", "\n".join(lines) + "\n"))])
    out = ToolRunner(store).run(parse("search which worker served request"))
    assert not out.error and "[1] app.log:" in out.text and "served in 12 ms" in out.text


def test_a_large_document_s_heading_path_is_found_in_the_lines_above(write, monkeypatch):
    from lcread.tools import headings

    text = "# Guide\n\n## Backups\n\n" + "\n".join(FILLER[:50]) + "\n\n## Network\n\nThe backup service listens on " \
           "port 7420 unless BACKUP_PORT is set.\n"
    store = DocumentStore.open([str(write("guide.md", text))])
    monkeypatch.setattr(headings, "SCAN_BYTES", 0)  # as if it were a 2 GB log: no whole scan
    tools = ToolRunner(store)
    out = tools.run(parse("search which port does the backup service listen on"))
    assert tools.sections(store.docs[0]).nearby
    assert "[1] guide.md:" in out.text and "# Guide > ## Network" in out.text.splitlines()[1]
    assert tools.sections(store.docs[0]).enclosing(30) == (3, "# Guide > ## Backups")


def test_a_word_of_letters_and_digits_is_looked_for_whole_and_its_digits_alone_are_not(write):
    terms = {t.key: t for t in query_terms("Since which release is the proxy built with LZ77 and IPv6 support?",
                                           STOPWORDS)}
    assert terms["lz77"].whole and terms["ipv6"].whole and "77" not in terms and "6" not in terms
    lines = list(FILLER)
    lines[100] = "Build notes: the proxy may be built with zlib; 6 modules changed, 77 tests added."
    lines[300] = "Change: the proxy is now built with LZ77 by default."
    store = DocumentStore.open([str(write("notes.txt", "\n".join(lines) + "\n"))])
    out = ToolRunner(store).run(parse("search is the proxy built with LZ77 by default"))
    assert out.text.splitlines()[1].startswith("[1] notes.txt:301")


RELEASES = """GADGET NEWS

Changes with gadget 2.4.0                                        12 Mar 2024

    *) Feature: the "spool_limit" directive.

    *) Bugfix: a crash when the spool was empty; the bug had appeared in 1.9.2.

Changes with gadget 2.3.1                                        02 Jan 2024

    *) Change: now gadget is built with the LZ77 library by default.
{filler}
    *) Bugfix: gadget could not be built without zlib; the bug had appeared in 2.2.8.

Changes with gadget 2.0

    *) Feature: the "spool_path" directive.
"""


def test_a_release_log_s_line_is_shown_with_the_release_it_belongs_to(write):
    """A release log's lines say what changed, the header above them in which release: the search shows that
    header with each passage, as a line of its own (so it can be the answer and be cited), as far as the next
    release's header, dated or not."""
    filler = "\n".join(f"    *) Bugfix: minor fix number {i} in the harbour module." for i in range(60))
    store = DocumentStore.open([str(write("CHANGES", RELEASES.format(filler=filler)))])
    tools = ToolRunner(store)
    out = tools.run(parse("search since which version is gadget built with LZ77 by default"))
    first = out.text.splitlines()[1:4]
    assert first[0].startswith("[1] CHANGES:11") and first[1].startswith("9: Changes with gadget 2.3.1")
    assert any(s.line == 9 and s.text.startswith("Changes with gadget 2.3.1") for s in out.shown)
    sections = tools.sections(store.docs[0])
    far = 11 + 62  # the last line of 2.3.1's entries, 60 lines below its header
    assert sections.release(far)[0] == 9 and sections.release(5)[0] == 3
    assert sections.release(far + 4) is None  # under "Changes with gadget 2.0": no date, but a release of its own


@pytest.mark.parametrize("line", [
    "2026-11-30 10:00:01 status installed gadget:amd64 2.3.1",  # a log's line: a time of day
    "This manual documents gadget 2.3.1, last updated 12 March 2024.",  # prose
    "Version 2.3.1 came out in 2024",  # no full date
])
def test_a_line_with_a_version_and_a_date_that_is_no_release_header_is_no_heading(write, line):
    text = line + "\n" + "\n".join(FILLER[:20]) + "\n"
    tools = ToolRunner(DocumentStore.open([str(write("notes.txt", text))]))
    sections = tools.sections(tools.store.docs[0])
    assert not sections.dated and sections.release(10) is None


def test_a_changelog_s_entries_are_dated_by_their_header(write):
    text = "2024-03-12  Ada Byron  <ada@example.org>\n\n\t* spool.c (drain): Count empty spools.\n\n" \
           "2024-01-02  Tom Kilburn  <tom@example.org>\n\n\t* spool.c (fill): Check the limit.\n\n" \
           "gadget (2.3.1-1) unstable; urgency=medium\n\n  * New upstream release.\n"
    tools = ToolRunner(DocumentStore.open([str(write("ChangeLog", text))]))
    sections = tools.sections(tools.store.docs[0])
    assert sections.release(3) == (1, "2024-03-12  Ada Byron  <ada@example.org>")
    assert sections.release(7)[0] == 5 and sections.release(11)[0] == 9


def _log(write, name="big.log", lines=40_000):
    rows = [f"2026-11-30T10:00:{i % 60:02d} INFO worker-{i % 32} request {i} served in 12 ms from shard {i % 16}"
            for i in range(lines)]
    rows[31_337] = "2026-11-30T23:59:59 ERROR worker-3 disk quota exceeded on volume 9"
    rows[12_000] = "2026-11-30T11:00:00 WARN worker-8 volume 4 is 91% full; quota warnings start at 90%"
    return write(name, "\n".join(rows) + "\n")


def test_a_large_document_is_searched_through_its_word_index_as_ripgrep_would(write, tmp_path, monkeypatch):
    from lcread.tools import search as search_module, wordindex

    monkeypatch.setenv("LCREAD_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("LCREAD_INDEX", "0")
    path = _log(write)
    store = DocumentStore.open([str(path)])
    queries = ["search which volume ran out of disk quota", "search how full is volume 4",
               "search which worker served request 20001"]
    scanned = [ToolRunner(store).run(parse(q)).text for q in queries]
    monkeypatch.setenv("LCREAD_INDEX", "1")
    monkeypatch.setenv("LCREAD_INDEX_BYTES", "1000")
    monkeypatch.setenv("LCREAD_CONVERT_DIR", str(path.parent))  # as a converted text in the cache is
    folder = wordindex.build(path)
    assert (folder / wordindex.META).is_file() and folder == wordindex.folder_for(path)
    link = path.parent / "a-run-s-own-link.txt"  # read through a link of each run's own: the same index
    link.hardlink_to(path)
    assert wordindex.open_index(link) is not None

    def no_scan(*args, **kwargs):
        raise AssertionError("an indexed document was scanned")

    monkeypatch.setattr(search_module, "rg_stream", no_scan)
    indexed = [ToolRunner(store).run(parse(q)).text for q in queries]
    assert "31338: 2026-11-30T23:59:59 ERROR worker-3 disk quota exceeded on volume 9" in indexed[0]
    assert "12001: 2026-11-30T11:00:00 WARN worker-8 volume 4 is 91% full" in indexed[1]
    assert "request 20001 served" in indexed[2]
    # the same passages, first to last, as the scan found (the counts of lines matched may differ)
    for a, b in zip(scanned, indexed):
        assert [line for line in a.splitlines() if line.startswith("[")] == \
            [line for line in b.splitlines() if line.startswith("[")]


def test_an_index_of_a_file_that_changed_is_not_used_and_a_missing_one_is_built_in_the_background(
        write, tmp_path, monkeypatch):
    import time

    from lcread.tools import wordindex

    monkeypatch.setenv("LCREAD_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setenv("LCREAD_INDEX_BYTES", "1000")
    path = _log(write)
    wordindex.build(path)
    with open(path, "a") as f:
        f.write("2026-11-30T23:59:59 ERROR worker-5 the tape library jammed on slot 12\n")
    assert wordindex.open_index(path) is None  # keyed by size and modification time: the old index is no index
    store = DocumentStore.open([str(path)])
    out = ToolRunner(store).run(parse("search which slot jammed in the tape library"))
    assert "40001: 2026-11-30T23:59:59 ERROR worker-5 the tape library jammed on slot 12" in out.text  # scanned
    deadline = time.monotonic() + 60
    while wordindex.open_index(path) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    index = wordindex.open_index(path)
    blocks, count = index.best_blocks([(["jammed"], 1.0)], 5)
    assert count == 1 and blocks[0].end == path.stat().st_size  # the new line is in the last block


def test_lcread_index_builds_it_now_and_the_cache_commands_count_and_clear_it(write, tmp_path):
    from conftest import run_cli

    env = {"LCREAD_INDEX_DIR": str(tmp_path / "index"), "LCREAD_CONVERT_DIR": str(tmp_path / "converted"),
           "LCREAD_KV_DIR": str(tmp_path / "kv")}
    built = run_cli("index", str(_log(write)), env=env)
    assert built.returncode == 0 and "big.log: " in built.stdout.decode() and " indexed in " in built.stdout.decode()
    assert "1 word indexes" in run_cli("cache", "info", env=env).stdout.decode()
    assert "1 word indexes" in run_cli("cache", "clear", env=env).stdout.decode()
    assert not list((tmp_path / "index").iterdir())
