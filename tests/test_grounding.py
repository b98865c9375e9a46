"""Grounding: what grep shows, where an answer's evidence is found, and each sufficiency predicate."""

import pytest

from lcread.agent.base import answer_kind
from lcread.agent.select import SelectReader
from lcread.config import LoopConfig, ToolConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.grounding import EvidenceLog, Verifier, classify
from lcread.models.scripted import ScriptedModel
from lcread.tools import ToolRunner, parse
from lcread.tools.evidence import Shown
from lcread.trace import MemoryTrace

FACTS = """Annual report of the county hospitals.
The Oxbury hospital reported 68,564 beds in its last survey.
The Marlow Street hospital reported 12,310 beds in its last survey.
The granary at Kestrel Bay stored 21,812 bushels; its courier was Lucan Prideaux.
Lucan Prideaux carried the grain along the Tollgate Road.
Gale warning logged at Pier 7 on 3 March.
Gale warning logged at Pier 9 on 4 March.
Gale warning logged at Pier 7 on 9 March.
Fog warning logged at Pier 7 on 11 March.
The special magic number for quiet-harbor-42 is 4817263.
The special magic number for quiet-harbor-42 is 5550001.
The special magic number for wild-ember-17 is 7301122.
"""


@pytest.fixture
def tools(write):
    return ToolRunner(DocumentStore.open([str(write("report.txt", FACTS))]))


def verifier(tools, question, *commands):
    log = EvidenceLog()
    for text in commands:
        obs = tools.run(parse(text))
        log.add(obs.shown, obs.search)
    return Verifier(classify(question), log, tools.count)


# --- grep shows every match ---------------------------------------------------------------------------

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


# --- evidence and quotes ------------------------------------------------------------------------------

def test_quotes_are_verified_against_the_document_and_what_was_shown(tools):
    log = EvidenceLog()
    obs = tools.run(parse("grep Oxbury"))
    log.add(obs.shown, obs.search)
    doc = tools.store.docs[0]

    def text_of(name, line):
        return next(iter(doc.read_lines(line, line))).text

    assert log.verify_quote(text_of, "report.txt", 2, "reported 68,564 beds").quote == "reported 68,564 beds"
    assert log.verify_quote(text_of, "report.txt", 2, "reported   68,564\n beds") is not None  # whitespace aside
    assert log.verify_quote(text_of, "report.txt", 2, "reported 99,999 beds") is None  # fabricated
    assert log.verify_quote(text_of, "report.txt", 3, "Marlow Street") is None  # true, but never shown


# --- the predicates -----------------------------------------------------------------------------------

def test_lookup_refuses_a_look_alike_fact_and_names_the_step(tools):
    question = "How many beds did the Marlow Street hospital report?"
    v = verifier(tools, question, "grep -i oxbury")
    wrong = v.check("68,564 beds")
    assert not wrong.ok and "Marlow Street" in wrong.missing and wrong.step == "grep -i -F 'Marlow Street'"
    v = verifier(tools, question, "grep -i beds")
    assert not v.check("68,564").ok  # the number is shown, but on the other hospital's line
    right = v.check("12,310")
    assert right.ok and right.citations[0].line == 3 and "12,310" in right.citations[0].quote


def test_the_kind_of_answer_is_checked(tools):
    v = verifier(tools, "How many bushels did the Kestrel Bay granary store?", "grep -i granary")
    name = v.check("Lucan Prideaux")
    assert not name.ok and not name.kind_ok and "asks for a number" in name.missing
    assert name.step == "grep -i -F 'Lucan Prideaux'"
    assert not v.check("Kestrel Bay granary").ok  # only words of the question
    assert v.check("21,812").ok


def test_an_answer_nobody_showed_is_never_verified(tools):
    v = verifier(tools, "How many bushels did the Kestrel Bay granary store?", "grep -i granary")
    verdict = v.check("21,813")
    assert not verdict.ok and not verdict.citations and "21813" in verdict.missing


def test_a_chain_is_linked_through_the_shared_entity(tools):
    question = "Along which road was the grain of the Kestrel Bay granary carried?"
    v = verifier(tools, question, "grep -i 'Kestrel Bay'")
    first = v.check("the Tollgate Road")
    assert not first.ok and "Tollgate Road" in first.missing
    v = verifier(tools, question, "grep -i 'Kestrel Bay'", "grep -i 'Lucan Prideaux'")
    verdict = v.check("the Tollgate Road")
    assert verdict.ok and sorted(c.line for c in verdict.citations) == [4, 5]


def test_several_values_need_a_citation_each(tools):
    v = verifier(tools, "What are the special magic numbers for quiet-harbor-42 and wild-ember-17?",
                 "grep magic")
    assert v.profile.kind == "parts"
    half = v.check("4817263")
    assert not half.ok and "none cited for 'wild-ember-17'" in half.missing
    assert v.check("4817263 and 7301122").ok


def test_all_values_of_one_thing(tools):
    question = "What are all the special magic numbers for quiet-harbor-42?"
    v = verifier(tools, question, "grep -m 1 quiet-harbor-42")
    assert not v.check("4817263").ok
    v = verifier(tools, question, "grep -i -F quiet-harbor-42")
    lacking = v.check("4817263")
    assert not lacking.ok and "5550001" in lacking.missing
    assert v.check("4817263, 5550001").ok


def test_a_count_is_backed_by_the_lines_shown(tools):
    question = "How many gale warnings did Pier 7 log?"
    v = verifier(tools, question, "grep -m 1 'Pier 7'")
    first = v.check("2")
    assert not first.ok and first.step == "grep -i -F 'Pier 7'"
    v = verifier(tools, question, "grep -i -F 'Pier 7'")
    assert v.check("2").ok and not v.check("3").ok  # the fog warning at Pier 7 is not a gale warning


def test_where_needs_the_enclosing_heading(write):
    doc = write("n.txt", "CHAPTER I\nIt was a dark night.\n\nCHAPTER II\nThe letter was in the piano.\n")
    tools = ToolRunner(DocumentStore.open([str(doc)]))
    question = 'Which chapter holds the sentence "The letter was in the piano"?'
    v = verifier(tools, question, "grep letter")
    verdict = v.check("CHAPTER II")
    assert not verdict.ok and verdict.step.startswith("grep -i -F -p")
    v = verifier(tools, question, verdict.step)
    assert v.check("CHAPTER II").ok and not v.check("CHAPTER I").ok


def test_multiple_choice_checks_the_chosen_options_text(tools):
    log = EvidenceLog()
    obs = tools.run(parse("grep -i beds"))
    log.add(obs.shown, obs.search)
    profile = classify("How many beds did the Marlow Street hospital report?", [("A", "68,564"), ("B", "12,310")])
    v = Verifier(profile, log)
    assert v.check("B").ok and not v.check("A) 68,564").ok


def test_open_questions_have_no_predicate(tools):
    v = verifier(tools, "Summarize the report.", "grep -i warning")
    verdict = v.check("Warnings at the piers.")
    assert verdict.ok and not verdict.applies


# --- in the loop --------------------------------------------------------------------------------------

MECHANICS = LoopConfig(first_step=False)
"""The gate's mechanics, without lcread's first step (which would show these small documents whole)."""

def test_a_look_alike_answer_is_sent_back_with_the_step_run_and_the_right_one_verified(tools):
    model = ScriptedModel(["grep -i beds -m 1", 'answer "68,564"', 'answer "12,310"'])
    trace = MemoryTrace()
    result = SelectReader(model, tools, SilentDisplay(), trace, MECHANICS).run(
        "How many beds did the Marlow Street hospital report?")
    assert (result.answer, result.final, result.verified) == ("12,310", True, True)
    sent_back = model.calls[2]["messages"][-1]["content"]
    assert "not accepted yet" in sent_back and "lcread ran `grep -i -F 'Marlow Street'`" in sent_back
    assert "report.txt:3:The Marlow Street hospital reported 12,310 beds" in sent_back
    assert trace.of("answer_unverified")[0]["answer"] == "68,564"
    assert result.to_dict()["citations"][0] == {
        "document": "report.txt", "line": 3, "chars": [0, 67],
        "quote": "The Marlow Street hospital reported 12,310 beds in its last survey."}


def test_lcread_runs_the_missing_step_and_accepts_the_answer_it_establishes(tools):
    model = ScriptedModel(["grep -i 'Kestrel Bay'", 'answer "Tollgate Road"'])
    trace = MemoryTrace()
    result = SelectReader(model, tools, SilentDisplay(), trace, MECHANICS).run(
        "Along which road was the grain of the Kestrel Bay granary carried?")
    assert result.verified and result.answer == "Tollgate Road" and len(model.calls) == 2
    assert trace.of("check_step")[0]["command"] == "grep -i -F 'Tollgate Road'"
    assert sorted(c.line for c in result.citations) == [4, 5]  # linked through Lucan Prideaux


def test_a_pending_answer_is_accepted_as_soon_as_the_evidence_arrives(tools):
    model = ScriptedModel(["grep -m 1 quiet-harbor-42", 'answer "4817263, 5550001"'])
    trace = MemoryTrace()
    result = SelectReader(model, tools, SilentDisplay(), trace, MECHANICS).run(
        "What are all the special magic numbers for quiet-harbor-42?")
    assert result.verified and result.answer == "4817263, 5550001" and len(model.calls) == 2
    assert trace.of("check_step")[0]["command"] == "grep -i -F quiet-harbor-42"  # the term, searched in full
    assert trace.of("answer_verified_later")


def test_refusals_are_bounded_and_the_run_ends_unverified(tools):
    model = ScriptedModel(["grep -i beds -m 1"] + ['answer "68,564"'] * 3)
    result = SelectReader(model, tools, SilentDisplay(), MemoryTrace(), LoopConfig(max_refusals=2, first_step=False)).run(
        "How many beds did the Marlow Street hospital report?")
    assert not result.final and result.verified is False and result.reason.startswith("sufficiency limit")
    assert result.missing and "Marlow Street" in result.missing


def test_without_sufficiency_any_answer_is_accepted_and_reported_unverified(tools):
    model = ScriptedModel(["grep -i beds -m 1", 'answer "68,564"'])
    result = SelectReader(model, tools, SilentDisplay(), MemoryTrace(), LoopConfig(sufficiency=False, first_step=False)).run(
        "How many beds did the Marlow Street hospital report?")
    assert (result.answer, result.final, result.verified) == ("68,564", True, False)


# --- answers that cannot be verified, whatever the phrasing ---------------------------------------------

def test_a_page_reference_does_not_verify_a_value():
    log = EvidenceLog()
    log.add([Shown("r.pdf", 40, 0, "See Section B.3.1 [Setting paper size], page 57, for the paper size R uses.")])
    v = Verifier(classify("What paper size does R select at configuration by default?"), log)
    assert not v.check("57").ok


def test_an_answer_with_nothing_to_look_for_is_unverified_not_a_crash():
    log = EvidenceLog()
    log.add([Shown("d.txt", 1, 0, "The unclaimed crates at Dunmere numbered 21,595 in the latest tally.")])
    verdict = Verifier(classify("According to the latest figures, how many unclaimed crates were there?"), log) \
        .check("the")
    assert not verdict.ok and verdict.missing


def test_a_unit_in_the_question_asks_for_a_number():
    assert classify("What is the longest line, in bytes, that http.client accepts?").answer_type == "number"
    assert classify("How long may a package name be?").answer_type == "number"
    log = EvidenceLog()
    log.add([Shown("c.py", 3, 0, "_MAXLINE = 65536 is the longest line http.client accepts, in bytes.")])
    v = Verifier(classify("What is the longest line, in bytes, that http.client accepts?"), log)
    assert not v.check("http.client.connect").ok


# --- competing evidence and counts, checked by lcread over the whole input ------------------------------

SURVEYS = """The arsenal reports follow.
In its spring survey the Oxbury arsenal counted 350 muskets awaiting repair.
Harvest notes and other filler about the weather in the hills.
The Kelton arsenal counted 515 muskets awaiting repair in its spring survey.
In its autumn survey the Oxbury arsenal counted 420 muskets awaiting repair.
"""


def gate(tools, question):
    from lcread.grounding.question import parse_options

    log = EvidenceLog()
    return Verifier(classify(parse_options(question)[0]), log, tools.count, None, tools.occurrences), log


def test_a_second_value_the_question_also_matches_keeps_an_answer_unverified(write):
    tools = ToolRunner(DocumentStore.open([str(write("surveys.txt", SURVEYS))]))
    v, log = gate(tools, "How many muskets awaiting repair did the Oxbury arsenal count in its spring survey and "
                         "in its autumn survey?")
    log.add(tools.run(parse("grep -i oxbury")).shown)
    one = v.check("350")
    assert not one.ok and "420" in one.missing and "autumn" in one.missing
    assert one.step == "read surveys.txt 5 5"
    assert v.check("350 in spring and 420 in autumn").ok


def test_a_look_alike_the_question_tells_apart_does_not_block_the_answer(write):
    tools = ToolRunner(DocumentStore.open([str(write("surveys.txt", SURVEYS))]))
    v, log = gate(tools, "How many muskets awaiting repair did the Kelton arsenal count?")
    log.add(tools.run(parse("grep -i kelton")).shown)
    assert v.check("515").ok  # Oxbury's lines lack Kelton: the question tells them apart


def test_an_equally_matching_line_with_another_value_is_not_verified(write):
    text = "Filler.\nThe pump at the mill delivers 40 litres a minute.\nMore filler.\n" \
           "The pump at the mill delivers 65 litres a minute.\n"
    tools = ToolRunner(DocumentStore.open([str(write("pump.txt", text))]))
    v, log = gate(tools, "How many litres a minute does the pump at the mill deliver?")
    log.add(tools.run(parse("read pump.txt 1 2")).shown)
    verdict = v.check("40")
    assert not verdict.ok and "matches the question as well" in verdict.missing and "65" in verdict.missing


def test_counts_count_sentences_on_one_long_line_over_the_whole_input(write):
    filler = " ".join(["Nothing of note happened at the quay that week."] * 1200)
    gales = [" The Brennan Ford harbour master logged a gale on 3 May. ", " The Brennan Ford harbour master "
             "logged a gale on 9 June. ", " The Brennan Ford harbour master logged a gale on 1 July. ",
             " The Brennan Ford harbour master logged a gale on 30 August. "]
    line = filler + gales[0] + filler + gales[1] + filler + gales[2] + filler + gales[3] + filler
    tools = ToolRunner(DocumentStore.open([str(write("log.txt", line + "\n"))]))
    assert len(line) > 200_000
    v, log = gate(tools, "How many gales did the Brennan Ford harbour master log?")
    log.add(tools.run(parse("grep -i -F 'Brennan Ford'")).shown)
    assert not v.check("1").ok
    verdict = v.check("4")
    assert verdict.ok and len(verdict.citations) == 4


def test_a_capitalised_first_word_is_not_a_name_and_a_stated_figure_verifies(write):
    text = "Customs notes.\nThe latest tally kept by the customs house at Dunmere lists 21,595 unclaimed crates.\n" \
           "The customs house at Portwick lists 3,112 unclaimed crates.\n"
    tools = ToolRunner(DocumentStore.open([str(write("customs.txt", text))]))
    question = "According to the latest figures, how many unclaimed crates were there at Dunmere's customs house?"
    assert classify(question).terms == ["Dunmere"]
    v, log = gate(tools, question)
    log.add(tools.run(parse("grep -i dunmere")).shown)
    assert v.check("21,595").ok and not v.check("0").ok


def test_with_no_name_in_the_question_the_answer_must_come_from_a_best_matching_passage(write):
    lines = [f"Routine entry {i}: the depot clerk filed the daily sheet." for i in range(1, 200)]
    lines[40] = "The Linux kernel source is often unpacked in a build directory chosen by the user."
    lines[150] = "The operating system kernel must be located in either / or /boot."
    store = DocumentStore.open([str(write("fhs.txt", "\n".join(lines) + "\n"))])
    question = "Where must the operating system kernel be located?"
    wrong = ScriptedModel(["grep -i kernel", 'answer "Linux"', 'answer "Linux"', 'answer "Linux"', 'answer "Linux"'])
    result = SelectReader(wrong, ToolRunner(store), SilentDisplay(), MemoryTrace(), MECHANICS).run(question)
    assert result.verified is not True and result.answer != "/boot"  # "Linux" is no path: never verified
    right = ScriptedModel(["grep -i kernel", 'answer "/boot"'])
    result = SelectReader(right, ToolRunner(store), SilentDisplay(), MemoryTrace(), MECHANICS).run(question)
    assert result.verified and result.citations[0].line == 151


def test_a_text_answer_to_a_question_naming_nothing_ends_unverified_at_once(write):
    store = DocumentStore.open([str(write("p.txt", "Packages create system users with the helper tool.\n" * 3))])
    model = ScriptedModel(['answer "Packages"', 'answer "helper"'])
    result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace()).run(
        "Which tool should packages use to create system users?")
    assert result.answer == "helper" and result.verified is False and len(model.calls) == 2  # no third call
    assert "cannot tell what kind of answer" in result.missing


@pytest.mark.parametrize("question, kind", [
    ("When mapfile is given -C without -c, how often is the callback called?", "number"),
    ("When the shell starts, which file does it read first?", "path"),
    ("When did the ferry leave?", "date"),
    ("An add-on package in /opt has files that change in normal operation: where must they be installed?", "path"),
    ("In which UID range does adduser allocate user accounts by default?", "number"),
    ("What is the default chunk_size of Response.iter_content?", "number"),
    ("What is the longest line, in bytes, that http.client accepts?", "number"),
    ("List every special magic number given for northern-meadow-51.", "number"),
    ("Give the port the backup service listens on.", "number"),
])
def test_the_kind_of_answer_is_read_from_the_whole_question(question, kind):
    assert classify(question).answer_type == kind


# --- values that only look like the answer ----------------------------------------------------------------

def test_a_path_answer_needs_the_path_not_the_word():
    log = EvidenceLog()
    log.add([Shown("fhs.pdf", 427, 0, "Programs necessary to arrange for the boot loader to be able to boot a file "
                                      "must be placed in /sbin.")])
    v = Verifier(classify("In which directory must the programs that set up the boot loader be placed?"), log)
    assert not v.check("/boot").ok  # "boot loader" holds the word, not the path
    assert v.check("/sbin").ok


def test_a_path_the_question_names_is_not_offered_as_an_answer():
    log = EvidenceLog()
    log.add([Shown("fhs.pdf", 682, 0, "Package files that are variable must be installed in /var/opt, not in /opt/."),
             Shown("fhs.pdf", 683, 0, "Static files of a package go in /opt/<package> or /opt/<provider>.")])
    v = Verifier(classify("Where should the variable files of a package installed in /opt go?"), log)
    offered = v.candidates()
    assert "/var/opt" in offered and not any(c.strip("/") == "opt" for c in offered)


def test_zero_is_not_read_in_non_zero_nor_a_footnote_mark_as_a_value():
    log = EvidenceLog()
    log.add([Shown("b.pdf", 10, 0, "A command that ends with a non-zero status is reported as Done(status)."),
             Shown("p.txt", 20, 0, "[14] A flag must start with a lowercase letter and consist of letters.")])
    assert not Verifier(classify("Which exit code does a missing command give?"), log).check("0").ok
    assert not Verifier(classify("How many letters must a flag have at least?"), log).check("14").ok


def test_a_second_path_the_question_also_matches_keeps_a_path_unverified(write):
    text = "Notes.\nThe default history file is ~/.sh_history when the shell runs in posix mode.\nFiller.\n" \
           "The history file defaults to ~/.bash_history when the shell starts.\n"
    tools = ToolRunner(DocumentStore.open([str(write("hist.txt", text))]))
    v, log = gate(tools, "In which file does the shell keep its history by default?")
    log.add(tools.run(parse("read hist.txt 1 2")).shown)
    verdict = v.check("~/.sh_history")
    assert not verdict.ok and "bash_history" in verdict.missing


def test_an_open_question_answered_with_a_path_meets_competing_paths(write):
    text = "Shell variables.\nHISTFILE\nThe name of the file in which command history is saved. The default value " \
           "is ~/.bash_history.\n" + "Filler about other things.\n" * 40 + "POSIX mode.\nIn posix mode the default " \
           "value of HISTFILE is ~/.sh_history.\n"
    tools = ToolRunner(DocumentStore.open([str(write("bash.txt", text))]))
    v, log = gate(tools, "What is the default value of HISTFILE?")
    log.add(tools.run(parse("read bash.txt 45 46")).shown)
    verdict = v.check("~/.sh_history")
    assert v.profile.answer_type == "text" and not verdict.ok and "bash_history" in verdict.missing


# --- what lcread shows after an answer to a question naming nothing is sent back --------------------------

def test_a_refused_answer_is_not_offered_again_and_the_best_lines_are_shown(write):
    lines = [f"Entry {i}: by default key sequence {i} waits long for input in the readline map." for i in range(1, 120)]
    lines += ["An ambiguous binding is reported once."] * 30
    lines[60] = "Readline waits for more input when a key sequence is ambiguous; the default timeout is 500."
    store = DocumentStore.open([str(write("rl.txt", "\n".join(lines) + "\n"))])
    model = ScriptedModel(['answer "7"', 'answer "500"'])
    model.supports_grammar = True  # to see the answer grammar each call was given
    reader = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig())
    # every word of the question is on many lines: a grep of any would bury the answer
    result = reader.run("By default, how long does Readline wait for more input when a key sequence is ambiguous?")
    assert result.answer == "500" and result.verified
    shown = model.calls[1]["messages"][-1]["content"]  # what the model saw after "7" was sent back
    assert "match the question best and hold a number" in shown and "rl.txt:61:" in shown
    offered = [c["grammar"].split("cmd-answer  ::=")[1].splitlines()[0] for c in model.calls]
    assert offered[1] == ' "answer \\"" ("500") "\\""'  # the answer sent back is not among those offered
    assert reader.gate.refused == {"7"}


@pytest.mark.parametrize("question, values", [
    ("What is the default size of the plot's postscript output?", 2),
    ("In which UID range does adduser allocate user accounts?", 2),
    ("How many pixels wide and high is the output by default?", 2),
    ("What is the default pool size of the adapter?", 1),  # a pool size is one number
    ("What is the maximum size of a file?", 1),  # a bound is one number
])
def test_a_range_or_a_size_asked_as_a_whole_asks_for_two_numbers(question, values):
    assert classify(question).values == values


def test_a_two_number_answer_needs_both_in_one_sentence_and_the_grammar_asks_for_two(write):
    text = "Terminal notes.\nThe default size for postscript output is 10 inches x 7 inches.\n" \
           "Margins are 7 points wide on every page.\n"
    tools = ToolRunner(DocumentStore.open([str(write("ps.txt", text))]))
    v, log = gate(tools, "What is the default size of the postscript output?")
    log.add(tools.run(parse("read ps.txt 1 3")).shown)
    assert v.check("10 inches x 7 inches").ok
    assert not v.check("10 x 12").ok  # 12 is nowhere
    assert v.expected_count() == 2
    assert answer_kind(v.profile) == "many-number"


def test_a_line_sharing_only_a_common_word_of_the_question_does_not_compete(write):
    text = "Terminals.\nThe default size for PDF output is 5 inches by 3 inches.\nFiller.\n" \
           "Among the settings of the pdf device, listed with a long description of each one in turn for those " \
           "who change them, are the output encoding, the font, the size of the default font (12 points), the " \
           "line width, the dash pattern, the colour model and the rounding of line ends and joins.\n"
    tools = ToolRunner(DocumentStore.open([str(write("pdf.txt", text))]))
    question = "What is the default size of the pdf output?"
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("read pdf.txt 2 2")).shown)
    # the long line holds every word of the question, scattered: it matches the question much worse
    assert v.check("5 inches by 3 inches").ok


def test_with_no_name_in_the_question_a_value_comes_from_the_best_matching_sentence_stating_one(write):
    lines = [f"Routine entry {i}: the depot clerk filed the daily sheet." for i in range(1, 200)]
    lines[99] = "Package files that are variable (change in normal operation) must be installed in /var/opt."
    lines[100] = "Configuration files of packages that change in operation must be installed in /etc/opt."
    store = DocumentStore.open([str(write("fhs.txt", "\n".join(lines) + "\n"))])
    question = "A package has files that change in normal operation: where must they be installed?"
    assert classify(question).answer_type == "path" and not classify(question).terms
    for answer, verified in (("/etc/opt", False), ("/var/opt", True)):
        model = ScriptedModel([f'answer "{answer}"'] * 5)
        result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace()).run(question)
        assert bool(result.verified) is verified, answer


def test_a_value_labelling_the_next_line_is_read_with_it(write):
    lines = [f"Routine entry {i}: the depot clerk filed the daily sheet." for i in range(1, 200)]
    lines[80:84] = ["65534:", '    User "nobody". The corresponding gid refers to the group "nogroup".',
                    "65535:", "    This value must not be used."]
    store = DocumentStore.open([str(write("uids.txt", "\n".join(lines) + "\n"))])
    model = ScriptedModel(['answer "65534"'])
    result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace()).run(
        "Which user id does the user nobody have?")
    assert result.verified and result.citations[0].line == 81


def test_a_dotted_version_is_one_value_and_a_dunder_name_is_a_term():
    profile = classify("What is requests' __version__?")
    assert profile.terms == ["__version__"] and profile.keywords == ["requests"]
    log = EvidenceLog()
    log.add([Shown("requests/__version__.py", 14, 0, '__version__ = "2.28.1"'),
             Shown("requests/__init__.py", 62, 0, "# Sometimes, urllib3 only reports its version as 16.1.")])
    v = Verifier(profile, log)
    assert v.check("2.28.1").ok and not v.check("2.28").ok


def test_when_many_lines_carry_the_names_the_answer_may_take_the_values_of_the_best_matching_ones(write):
    lines = [f"Harbor client note {i}: shipped in release {100 + i}." for i in range(12)]
    lines.insert(5, "By default the Harbor client retries a failed request 3 times.")
    tools = ToolRunner(DocumentStore.open([str(write("h.txt", "\n".join(lines) + "\n"))]))
    question = "What is the default number of retries of the Harbor client for a failed request?"
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("grep -i harbor")).shown)
    offered = v.candidates()
    assert "3" in offered and len(offered) <= 12 and "111" not in offered[:2]
    assert v.check("3").ok


def test_the_gate_returns_decisions_and_keeps_the_refused_answers(tools):
    from lcread.agent.gate import Accepted, AnswerGate, Halted, SentBack
    from lcread.result import Stop

    v = verifier(tools, "How many beds did the Oxbury hospital report?")
    checks = []

    def run_check(step):  # as the loop does: run it, keep what it showed as evidence
        checks.append(step)
        shown = tools.run(parse(step))
        v.log.add(shown.shown, shown.search)
        return shown

    gate = AnswerGate(v, LoopConfig(max_unread_answers=1, max_refusals=1), run_check, tools.count, MemoryTrace(),
                      "Oxbury")
    assert isinstance(gate.answer("68,564", 0, read_anything=False), SentBack)
    assert isinstance(gate.answer("68,564", 0, read_anything=False), Halted)  # a second answer before reading
    back = gate.answer("12,310", 1, read_anything=True)  # Marlow Street's figure, nothing shown yet
    assert isinstance(back, SentBack) and gate.refused == {"12310"} and gate.offered(["12,310", "68,564"]) == \
        ["68,564"]
    assert checks == ["grep -i -F Oxbury"] and "68,564" in back.observation.text  # the focused step it ran
    assert gate.recheck(2) is None  # Marlow Street's figure is still not Oxbury's
    done = gate.answer("68,564", 2, read_anything=True)
    assert isinstance(done, Accepted) and done.verdict.ok
    assert isinstance(gate.answer("7", 3, read_anything=True), Halted) and \
        gate.answer("7", 3, read_anything=True).stop.kind is Stop.SUFFICIENCY_LIMIT


def test_a_pair_needs_two_different_values_and_placeholders_are_no_values(write):
    text = "Notes.\nThe default size for postscript output is 10 inches x 7 inches.\n" \
           "size 4#4scale5#5 sets the plot size to 4#4scale5#5 times the default.\n"
    tools = ToolRunner(DocumentStore.open([str(write("ps.txt", text))]))
    v, log = gate(tools, "What is the default size of the postscript output?")
    log.add(tools.run(parse("read ps.txt 1 3")).shown)
    assert not v.check("10, 10").ok and v.check("10, 7").ok
    assert "4" not in v.candidates() and "5" not in v.candidates()


def test_a_number_does_not_answer_a_question_asking_for_a_name():
    log = EvidenceLog()
    log.add([Shown("p.txt", 5, 0, "100-999: Packages use adduser to create such users dynamically.")])
    for question in ("Which tool should packages use to create dynamic users?",
                     "What is the name of the group of the user nobody?"):
        verdict = Verifier(classify(question), log).check("999")
        assert not verdict.ok and not verdict.kind_ok


def test_a_value_comes_from_the_best_matching_line_among_those_naming_the_question_s_names(write):
    text = ("# /opt : Add-on application software packages\n\n"
            "Host-specific configuration files of a package must be installed in /etc/opt.\n\n"
            "# /var/opt : Variable data for /opt\n\n"
            "Files that are variable (they change in normal operation) must be installed in /var/opt.\n")
    tools = ToolRunner(DocumentStore.open([str(write("fhs.md", text))]))
    question = "Where should the variable files of a package installed in /opt go?"
    assert classify(question).terms == ["/opt"]
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("grep -p -F /opt")).shown)
    assert not v.check("/etc/opt").ok and v.check("/var/opt").ok


def test_a_number_comes_from_a_line_about_as_good_as_the_best_one_naming_the_question_s_name(write):
    text = "Notes.\nThe Harbor retry count for a failed request is 3 by default.\nFiller.\n" \
           "Harbor client retry: 12 of them changed in a release.\n"
    tools = ToolRunner(DocumentStore.open([str(write("h.txt", text))]))
    question = "How many retries does the Harbor client make for a failed request by default?"
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("grep -i harbor")).shown)
    weak = v.check("12")  # its line names the client too, but says far less of what is asked
    assert not weak.ok and v.check("3").ok


@pytest.mark.parametrize("question, answer", [
    ("What product name does the client use in its default User-Agent header?", "default_user_agent"),
    ("What product name does the client use in its default User-Agent header?", "default_headers()"),  # plural
    ("Where should the variable files of a package installed in /opt go?", "/opt/"),
])
def test_an_identifier_or_path_made_of_the_question_s_own_words_repeats_it(question, answer):
    log = EvidenceLog()
    log.add([Shown("u.py", 1, 0, 'headers = {"User-Agent": default_user_agent()} and /opt/ and /var/opt')])
    verdict = Verifier(classify(question), log).check(answer)
    assert not verdict.ok and "only repeats words of the question" in verdict.missing


@pytest.mark.parametrize("question", [
    "What is the name of the group whose gid matches the uid of nobody?",
    "What command creates a system user whose id is allocated on each system?",
    "With pipefail enabled, whose exit status does a pipeline return?",
])
def test_a_question_asking_for_a_name_asks_for_text_whatever_numbers_it_mentions(question):
    assert classify(question).answer_type == "text"
    log = EvidenceLog()
    log.add([Shown("p.txt", 5, 0, "65534: the user nobody, whose group is nogroup; 100-999: made by adduser.")])
    assert not Verifier(classify(question), log).check("65534").ok


@pytest.mark.parametrize("question, kind", [
    ("How many times does the adapter retry a failed connection by default?", "lookup"),  # a stated number
    ("How many times is Oxbury mentioned?", "count"),
    ("How many gale warnings were logged at Pier 7?", "count"),
])
def test_how_many_times_counts_only_what_the_documents_hold(question, kind):
    assert classify(question).kind == kind


def test_a_name_holding_digits_is_no_number():
    log = EvidenceLog()
    log.add([Shown("README.md", 18, 0, "For offline use lcread embeds a small model: Qwen2.5-Coder-0.5B-Instruct.")])
    v = Verifier(classify("Which model does lcread embed for offline use?"), log)
    assert "0" not in v.atoms("Qwen2.5-Coder-0.5B-Instruct") and v.check("Qwen2.5-Coder-0.5B-Instruct").ok


def test_a_range_or_a_size_is_offered_as_the_pairs_one_sentence_states(write):
    text = "Terminal notes.\nThe default size for postscript output is 10 inches x 7 inches.\n" \
           "Margins are 2 points and 3 points.\n"
    tools = ToolRunner(DocumentStore.open([str(write("ps.txt", text))]))
    model = ScriptedModel(['answer "10, 7"'])
    model.supports_grammar = True
    result = SelectReader(model, tools, SilentDisplay(), MemoryTrace()).run(
        "What is the default size of the postscript output?")
    offered = model.calls[0]["grammar"].split("cmd-answer  ::=")[1].splitlines()[0]
    assert '"10, 7"' in offered and '"10, 10"' not in offered and '"7, 2"' not in offered
    assert result.answer == "10, 7" and result.verified


MANUAL = """8.3.1 Readline Init File Syntax
bell-style
Controls what happens when Readline wants to ring the terminal bell. If set
to 'none', Readline never rings the bell. The default is 'audible'.
completion-query-items
The number of possible completions that determines when the user is asked
whether the list of possibilities should be displayed. The default limit is
100 items.
keyseq-timeout
Specifies the duration Readline will wait for a character when reading an
ambiguous key sequence (one that can form a complete key sequence using the
input read so far). If no input is received within the timeout, Readline will
use the shorter but complete key sequence. The value is specified in
milliseconds, so a value of 1000 means that Readline will wait one second for
additional input. If this variable is set to a value less than or equal to zero,
Readline will wait until another key is pressed to decide which key
sequence to complete. The default value is 500.
mark-directories
If set to 'on', completed directory names have a slash appended. The default
is 'on'.
"""


@pytest.mark.parametrize("question", [
    "What is the default keyseq-timeout?",
    "How many milliseconds does Readline wait by default for more input when a key sequence is ambiguous?",
])
def test_an_entry_s_default_stated_at_its_end_is_found_and_verified(write, question):
    filler = "".join(f"option-{i}\nA setting of the shell that does thing {i} when it is set to on.\n"
                     f"The default is off.\n" for i in range(300))
    store = DocumentStore.open([str(write("manual.txt", filler + MANUAL + filler))])
    model = ScriptedModel(['answer "1000"', 'answer "500"'])
    result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig()).run(question)
    first = model.calls[0]["messages"][-1]["content"]
    assert "sequence to complete. The default value is 500." in first  # the entry shown to its end
    assert (result.answer, result.verified) == ("500", True)  # 1000 (the example) refused, 500 verified
    assert any("The default value is 500." in c.quote for c in result.citations)


def test_yes_or_no_is_verified_by_what_the_best_matching_line_says(write):
    text = "The /bin directory.\nThere must be no subdirectories in /bin.\nFiller about /usr and /var.\n" \
           "The /opt directory may hold subdirectories for each package.\n"
    tools = ToolRunner(DocumentStore.open([str(write("fhs.txt", text))]))
    v, log = gate(tools, "May /bin contain subdirectories?")
    log.add(tools.run(parse("grep -F /bin")).shown)
    assert v.profile.kind == "yesno"
    refused = v.check("yes")
    assert not refused.ok and "reads as 'no'" in refused.missing
    assert v.check("no, there must be none").ok


def test_a_default_stated_across_a_line_break_in_an_entry_competes_with_another_default(write):
    text = "Bash Variables\nHISTCONTROL A list of values.\nHISTFILE The name of the file to which the command " \
           "history is saved. The default value\nis ~/.bash_history.\n" + "Filler about other settings.\n" * 60 + \
           "Bash POSIX Mode\n12. The default history file is ~/.sh_history (this is the default value of $HISTFILE).\n"
    tools = ToolRunner(DocumentStore.open([str(write("bash.txt", text))]))
    question = "What is the default value of HISTFILE?"
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("read bash.txt 66 66")).shown)
    verdict = v.check("~/.sh_history")
    assert not verdict.ok and "bash_history" in verdict.missing  # two defaults: neither is established alone


TERMINAL_PAGE = """# Postscript
Several options may be given. The default size for postscript output is 10 inches x 7 inches. The default for eps \
output is 5 x 3.5 inches. The fontscale is 0.5 by default.
where res may be 75, 100, 150 or 300 dots per inch; the default is 75.
# Dumb
where xchars and ychars set the size of the text block. The default is 79 by 24.
"""


@pytest.mark.parametrize("question, right, wrong", [
    ("What is the default size of the postscript output?", "10, 7", "5, 3.5"),  # the next sentence is eps
    ("What is the default resolution in dots per inch?", "75", "150"),  # the value the default is said of
    ("How many dots per inch does the driver print at by default?", "75", "300"),  # not the value before the ';'
    ("What is the default size of the dumb terminal's text block?", "79, 24", None),  # a short sentence
])
def test_a_default_is_the_value_its_clause_states_and_the_next_sentence_does_not_compete(write, question, right,
                                                                                         wrong):
    filler = "".join(f"Filler line {i} about plotting styles and colours.\n" for i in range(200))
    tools = ToolRunner(DocumentStore.open([str(write("gnuplot.txt", filler + TERMINAL_PAGE + filler))]))
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("read gnuplot.txt 201 206")).shown)
    assert v.check(right).ok, v.check(right).missing
    assert wrong is None or not v.check(wrong).ok


@pytest.mark.parametrize("name, text, question, answer", [
    ("sixel.txt", "Sixel terminal.\nBy default the sixel output uses 16 indexed colors.\n",
     "How many indexed colours does the sixel terminal use by default?", "16"),  # British and American spelling
    ("models.py", "class Response:\n    def iter_content(self, chunk_size=1, decode_unicode=False):\n        pass\n",
     "How many bytes does iter_content yield per chunk when no chunk size is given?", "1"),  # chunk_size=1: a chunk
])
def test_spelling_and_a_code_name_carry_the_question_s_words(write, name, text, question, answer):
    filler = "".join(f"# filler line {i} about other matters\n" for i in range(100))
    tools = ToolRunner(DocumentStore.open([str(write(name, filler + text))]))
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("read " + name + " 101 102")).shown)
    assert v.check(answer).ok, v.check(answer).missing


def test_every_kind_has_one_entry_in_the_kinds_table_and_questions_are_recognised_in_its_order():
    from lcread.grounding.kinds import KINDS
    from lcread.grounding.question import Kind

    assert list(KINDS) == [Kind.CHOICE, Kind.PAGE, Kind.WHERE, Kind.SUMMARY, Kind.COUNT, Kind.YESNO, Kind.PARTS,
                           Kind.ALL, Kind.LIST, Kind.LOOKUP] and set(KINDS) == set(Kind)
    asked = {"On which page is the warranty given?": Kind.PAGE,
             'Which section holds the line "refunds are capped"?': Kind.WHERE,
             "Summarise the refund policy.": Kind.SUMMARY, "How many gale warnings were logged at Pier 7?": Kind.COUNT,
             "May /bin contain subdirectories?": Kind.YESNO, "What are the ages of Anne and Bob?": Kind.PARTS,
             "What is the refund limit?": Kind.LOOKUP, "Which is older, the Ritz or the Savoy?": Kind.CHOICE}
    for question, kind in asked.items():
        assert classify(question).kind is kind, question
    log = EvidenceLog()
    where = Verifier(classify('Which section holds the line "refunds are capped"?'), log)
    assert KINDS[Kind.WHERE].next_step(where) == "grep -i -F -p 'refunds are capped'"


def test_a_piece_of_a_path_as_answer_meets_the_paths_that_compete_with_it(write):
    text = "Bash Variables\nHISTFILE The name of the file to which the command history is saved. The default value\n" \
           "is ~/.bash_history.\n" + "Filler about other settings.\n" * 60 + \
           "Bash POSIX Mode\n12. The default history file is ~/.sh_history (this is the default value of $HISTFILE).\n"
    tools = ToolRunner(DocumentStore.open([str(write("bash.txt", text))]))
    question = "What is the default value of HISTFILE?"
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse("read bash.txt 65 65")).shown)
    verdict = v.check("sh_history")  # a name, but the cited line holds it as ~/.sh_history
    assert not verdict.ok and "bash_history" in verdict.missing


@pytest.mark.parametrize("question", ["What is the largest value an exit status can have?",
                                      "Which mode should a package give the directories it creates?"])
def test_a_bound_or_a_mode_asks_for_a_number(question):
    assert classify(question).answer_type == "number"


def test_a_number_the_question_states_is_not_offered_as_its_answer(write):
    text = "Exit status.\nExit statuses fall between 0 and 255. They are stored in eight bits, so the maximum value " \
           "is 255.\n"
    tools = ToolRunner(DocumentStore.open([str(write("bash.txt", text))]))
    v, log = gate(tools, "Exit statuses are restricted to eight bits: what is the maximum?")
    log.add(tools.run(parse("read bash.txt 1 2")).shown)
    offered = v.candidates()
    assert "255" in offered and not {"8", "eight"} & set(offered)


def test_an_assignment_line_heads_no_paragraph(write):
    text = "Prose before.\nVAR COPPERHARBOR = 7471578\nElinor kept her concern and her censure to herself; and was very\n" \
           "thankful that Marianne was not present.\n"
    tools = ToolRunner(DocumentStore.open([str(write("vt.txt", text))]))
    v, log = gate(tools, "Which variables are assigned the value 7471578, directly or through other variables?")
    log.add(tools.run(parse("read vt.txt 1 4")).shown)
    assert [s.line for s in log.sentences() if v.carries(s, bridges=False) is not None] == [2]


# --- conditions, clauses and bindings: which of several values a sentence or a line of code gives ------------------

def _checked(write, name, text, question, greps=()):
    """A verifier over `text` set in filler (a manual's common words among others: rarity is the corpus'), with
    lcread's ranked search and the text's lines shown."""
    filler = "".join(f"Filler line {i} about the weather over the hills and the river.\n" if i % 3 else
                     f"Line {i}: the shell runs and executes each command of the script in turn.\n" for i in range(150))
    tools = ToolRunner(DocumentStore.open([str(write(name, filler + text + filler))]))
    log = EvidenceLog()
    v = Verifier(classify(question), log, tools.count, None, tools.occurrences, lambda: tools.ranked(question, top=3))
    log.add(tools.run(parse(f"read {name} 151 {150 + text.count(chr(10))}")).shown)
    for word in greps:
        found = tools.run(parse(f"grep -i -F -w {word}"))
        log.add(found.shown, found.search)
    return v


@pytest.mark.parametrize("name, text, question, right, wrong", [
    # the condition the question names is in the sentence that answers, in the document's words
    ("shell.txt", "A script's exit status is the exit status of the last command executed in the script. If no "
                  "commands are executed, the exit status is 0.\n"
                  "The return status is 127 if the command cannot be found, and the exit status of the command "
                  "otherwise.\n",
     "If I run a command that doesn't exist, which exit code will bash give me?", "127", "0"),
    # of two values in one sentence, the one in the clause that matches the question
    ("status.txt", "Exit statuses fall between 0 and 255, though, as explained below, the shell may use values above "
                   "125 specially.\n",
     "What is the largest value an exit status can have?", "255", "125"),
    ("status.txt", "Exit statuses fall between 0 and 255, though, as explained below, the shell may use values above "
                   "125 specially.\n",
     "What is the largest value an exit status can have?", "255", "0"),  # the largest of the clause's two
    # the case "unless" sets aside is described by the other sentence
    ("sixel.txt", "By default the sixel output uses 16 indexed colors. The truecolor option instead creates a "
                  "TrueColor png image that is mapped down onto 256 colors in the output sixel image.\n",
     "How many indexed colours does the sixel terminal use unless truecolor is set?", "16", "256"),
    # a number the text calls a section is a reference wherever it appears
    ("policy.txt", "Packages must not create sub-directories in the directory /usr/local itself, except those listed "
                   "in FHS, section\n4.9. You must not remove any of the directories listed in 4.9, even if you\n"
                   "created them. All subdirectories created by packages should have permissions 0755.\n",
     "Which mode should a package give the directories it creates under /usr/local?", "0755", "4.9"),
    # a sentence saying the asked action does not happen gives no answer; a label is read with its indented block
    ("uids.txt", "1000-59999:\n    Dynamically allocated user accounts. By default adduser will\n    choose UIDs and "
                 "GIDs for user accounts in this range.\n65536-4294967293:\n    Dynamically allocated user accounts. "
                 "By default adduser will not\n    allocate UIDs and GIDs in this range, to ease compatibility.\n",
     "In which UID range does adduser allocate user accounts by default?", "1000, 59999", "65536, 4294967293"),
    # one end of a range the sentence states is not the range
    ("ids.txt", "32bit UIDs in the range 65536-4294967293 are reserved for dynamically allocated user accounts.\n",
     "What user IDs are reserved for dynamically allocated accounts?", "65536, 4294967293", "65536"),
    # a default is what the term's own line binds the asked name to, not another function's parameter of that name
    ("models.py", "ITER_CHUNK_SIZE = 512\nclass Response:\n    def iter_content(self, chunk_size=1, decode_unicode=False):"
                  "\n        pass\n    def iter_lines(\n        self, chunk_size=ITER_CHUNK_SIZE, decode_unicode=False\n"
                  "    ):\n        for chunk in self.iter_content(chunk_size=chunk_size, decode_unicode=decode_unicode):"
                  "\n            yield chunk\n",
     "What chunk size does Response.iter_lines read with by default?", "512", "1"),
    # max_retries names retries: the default is DEFAULT_RETRIES', not the pool size another parameter takes
    ("adapters.py", "DEFAULT_POOLSIZE = 10\nDEFAULT_RETRIES = 0\nclass HTTPAdapter:\n    def __init__(\n        self,\n"
                    "        pool_connections=DEFAULT_POOLSIZE,\n        max_retries=DEFAULT_RETRIES,\n    ):\n"
                    "        self.max_retries = max_retries\n",
     "How many times does an HTTPAdapter retry a failed connection by default?", "0", "10"),
])
def test_of_several_values_the_one_the_question_s_case_names_is_verified(write, name, text, question, right, wrong):
    v = _checked(write, name, text, question)
    assert v.check(right).ok, v.check(right).missing
    assert not v.check(wrong).ok


def test_numbers_in_a_list_leave_its_commas_and_thousands_keep_theirs():
    from lcread.grounding.patterns import NUMBER

    assert NUMBER.findall("res may be 75, 100, 150 or 300 dpi; 21,595 crates; chunk_size=1, x") == \
        ["75", "100", "150", "300", "21,595", "1"]


def test_an_assignment_line_does_not_run_on_into_the_next_line(write):
    text = "VAR PATIENTMEADOW = 9848137\nresolutions.\nVAR QUIETORCHARD = VAR PATIENTMEADOW\n"
    question = "Which variables are assigned the value 9848137, directly or through other variables?"
    v = _checked(write, "vars.txt", text, question, greps=("9848137", "PATIENTMEADOW", "QUIETORCHARD"))
    verdict = v.check("PATIENTMEADOW, QUIETORCHARD")
    assert verdict.ok, verdict.missing  # "resolutions." is no item-less line of the chain


def test_who_answered_with_the_thing_the_question_describes_is_not_verified():
    log = EvidenceLog()
    log.add([Shown("qa.txt", 1, 0, "Based on the Adoption and Safe Families Act of 1997, the aim of the program was to "
                                   "lower barriers to adoption. President Bill Clinton signed the act into law.")])
    v = Verifier(classify("Who signed into law the act made to lower barriers to adoption?"), log)
    verdict = v.check("The Adoption and Safe Families Act")
    assert not verdict.ok and "asks who" in verdict.missing
    number = v.check("105-89")  # the act's public law number
    assert not number.ok and "names no one" in number.missing


def test_every_value_of_a_term_once_searched_is_offered_once_each_in_order(write):
    text = ("The special magic number for northern-meadow-51 is 1324742.\nFiller about the hills.\n"
            "The special magic number for northern-meadow-51 is 8514175.\n"
            "The special magic number for northern-meadow-51 is 7675082.\n")
    question = "What are all the special magic numbers for northern-meadow-51?"
    v = _checked(write, "hay.txt", text, question)
    assert v.slots() is None  # no complete search for the term shown yet: nothing is known to be every value
    v = _checked(write, "hay.txt", text, question, greps=("northern-meadow-51",))
    assert v.slots() == [["1324742"], ["8514175"], ["7675082"]]
    from lcread import prompts
    grammar = prompts.command_grammar(["hay.txt"], ["1324742", "8514175", "7675082"], "many-number", 3, [], v.slots())
    assert 'cmd-answer  ::= "answer \\"" ("1324742") ", " ("8514175") ", " ("7675082") "\\""' in grammar
    assert v.check("1324742, 8514175, 7675082").ok


@pytest.mark.parametrize("question", [
    "Give the special magic number of distant-cipher-69 as well as that of golden-quarry-87.",
    "Which special magic numbers belong to distant-cipher-69 and to golden-quarry-87?",
    "What are the special magic numbers for distant-cipher-69 and golden-quarry-87?",
])
def test_two_named_parts_joined_in_any_words_ask_for_a_value_each(question):
    profile = classify(question)
    assert profile.kind.value == "parts" and profile.parts == ["distant-cipher-69", "golden-quarry-87"]


@pytest.mark.parametrize("question", ["What is the number of power outages recorded for Substation 13?",
                                      "What is the total number of power outages logged at Substation 13?",
                                      "How many power outages were recorded for Substation 13?"])
def test_the_number_of_things_recorded_asks_for_a_count_of_them(question):
    from lcread.grounding.question import Kind

    profile = classify(question)
    assert profile.kind is Kind.COUNT and profile.count_words == ["power", "outages"]


@pytest.mark.parametrize("question", ["What is the phone number of the Oxbury office?",
                                      "What is the number of the ferry that left at 6:15?"])
def test_the_number_of_one_thing_is_a_lookup(question):
    from lcread.grounding.question import Kind

    assert classify(question).kind is Kind.LOOKUP


FHS = """Filesystem Hierarchy Standard
3.9. /lib : Essential shared libraries and kernel modules
The /lib directory contains those shared library images needed to boot the system.
If a C preprocessor is installed, /lib/cpp must be a reference to it, for historical reasons.
""" + "\n".join(f"Filler line {i} about directories and the files they hold." for i in range(300))


@pytest.mark.parametrize("answer, verified", [
    ("It is kept for historical reasons and refers to the C preprocessor", None),
    ("The name of the signer", False),  # the example of lcread's own prompt, copied back
    ("It launches the graphical login manager at boot", False),  # nothing shown says so
])
def test_an_open_answer_must_come_from_what_was_shown_and_is_cited_never_verified(write, answer, verified):
    store = DocumentStore.open([str(write("fhs.txt", FHS))])
    model = ScriptedModel(["grep -F /lib/cpp", f'answer "{answer}"'] + ['answer "x"'] * 6)
    result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(),
                          LoopConfig(first_step=False)).run("Why does /lib/cpp exist, and what does it point to?")
    assert classify("Why does /lib/cpp exist, and what does it point to?").kind.value == "summary"
    if verified is None:
        assert (result.answer, result.verified, result.final) == (answer, None, True)
        assert [c.line for c in result.citations][:1] == [4]
    else:
        assert result.answer != answer and result.verified is not True


def test_the_definition_of_the_asked_name_answers_whatever_words_the_question_puts_around_it(write):
    body = "\n".join(f"def helper_{i}(value):\n    return value + {i}\n" for i in range(60))
    write("lib/utils.py", body + '\n\ndef default_user_agent(name="python-requests"):\n'
          '    """Return a string representing the default user agent."""\n    return f"{name}/2.28"\n')
    store = DocumentStore.open([str(write("lib/README", "a library\n").parent)])
    model = ScriptedModel(["grep -F default_user_agent", 'answer "python-requests"'] + ['answer "x"'] * 4)
    result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig(first_step=False)).run(
        "What name does default_user_agent put in the User-Agent string?")
    assert (result.answer, result.verified) == ("python-requests", True)
    assert result.citations[0].quote.startswith("def default_user_agent(")


def test_the_value_assigned_to_the_name_the_question_asks_for_is_unbeaten(write):
    filler = "\n".join(f"def helper_{i}(value):\n    return value + {i}\n" for i in range(40))
    write("requests/__init__.py", filler + '\n\ndef _check_cryptography(cryptography_version):\n'
          '    cryptography_version = list(map(int, cryptography_version.split(".")))\n'
          '    if cryptography_version < [1, 3, 4]:\n'
          '        warning = "Old version of cryptography ({}) may cause slowdown.".format(cryptography_version)\n'
          '        warnings.warn(warning, RequestsDependencyWarning)\n')
    write("requests/__version__.py", '__title__ = "requests"\n__description__ = "Python HTTP for Humans."\n'
          '__version__ = "2.28.1"\n__build__ = 0x022801\n')
    write("requests/cookies.py", filler + '\n\ndef morsel_to_cookie(morsel):\n    return create_cookie(\n'
          '        name=morsel.key,\n        version=morsel["version"] or 0,\n    )\n')
    store = DocumentStore.open([str(write("requests/README", "requests\n").parent)])
    question = "Which version of requests is this?"
    for answer, verified in (("4", False), ("2.28.1", True)):
        model = ScriptedModel([f'answer "{answer}"'] + ['answer "x"'] * 6)
        result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig()).run(question)
        assert (result.answer == answer and result.verified is True) is verified, (answer, result.missing)
