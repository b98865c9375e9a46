"""The scored reader on documents built here: what a question asks for, the candidates of what the tools showed,
what lcread works out, the scorer's probabilities and no-answer, its calibration (fit, held-out threshold, the
threshold that settles a run) and where calibrations are looked up. No bench data: every example is made here."""

import json
import random

import pytest

from lcread.documents import DocumentStore
from lcread.grounding.evidence import EvidenceLog
from lcread.models import Scored
from lcread.reader import Reader, asked
from lcread.reader import calibrate as cal
from lcread.reader.features import GENERIC
from lcread.reader.scorer import PRIOR, Scorer, save, scorer_for, trusting
from lcread.tools import ToolRunner, parse


def sets_of(reading) -> dict:
    """The reading's set candidates by their text."""
    return {r.candidate.text: r.candidate for r in reading.ranked if r.candidate.items}


def reading_of(tmp_path, files: dict[str, str], question: str, commands: list[str], scorer=None, free=None,
               model=None):
    """The reader's reading after the given commands ran over files made here (the loop's own wiring); `model`
    (scored reply -> its log-probability and its rank among the model's choices) scores the call's replies."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with DocumentStore.open([str(tmp_path / n) for n in files]) as store:
        tools = ToolRunner(store)
        evidence = EvidenceLog()
        for command in commands:
            observation = tools.run(parse(command))
            evidence.add(observation.shown, observation.search)
        ranker = tools.question_ranker(question)
        reader = Reader(asked(question), evidence, scorer or PRIOR, ranker.score, ranker.spans,
                        count_lines=tools.count_lines, cover=ranker.cover, count_entries=tools.count_entries)
        pool = reader.pool()
        scoring = reader.scoring(pool) if model else None
        scored = Scored(0.0, [[model(t)[0]] for t in scoring.texts], [[model(t)[1]] for t in scoring.texts]) \
            if scoring else None
        return reader.read(pool, scored, free)


@pytest.mark.parametrize("question, kind", [
    ("How many workers does the pool start?", "count"),
    ("Which environment variable sets the default timeout?", "identifier"),
    ("On which page is the warranty given?", "page"),
    ("What is the default timeout in seconds?", "number"),
    ("When was version 2.1 released?", "date"),
    ("Which file holds the user's settings?", "path"),
    ("Which option turns on verbose output?", "option"),
    ("Why does the daemon restart at midnight?", "open"),
])
def test_the_question_says_what_type_of_answer_it_asks_for(question, kind):
    assert asked(question).type == kind


def test_plural_and_pair_questions_are_told_apart():
    assert asked("Which files does the installer write?").plural
    assert not asked("Which file does the installer write?").plural
    assert asked("Which option names does the parser accept?").plural
    assert asked("What severities make a bug urgent?").plural
    assert asked("Which mirrors went offline in May?").plural
    assert asked("On which status codes does the client retry?").plural  # a preposition before the "which"
    assert asked("For which shells can the tool write completion scripts?").plural
    assert not asked("In which directory does the installer write?").plural
    # a singular noun, then its verb in -s: one answer asked for
    for question in ("Which option controls how often the fetch is retried?", "Which page says what the default is?",
                     "Which directory holds temporary files?", "What goes in the first field?",
                     "Which file configures encrypted volumes?", "Which group corresponds to the user nobody?"):
        assert not asked(question).plural, question
    assert asked("What is the range of valid port numbers?").pair
    assert not asked("What is the default port?").pair


def test_a_term_is_taken_whole_from_where_its_word_starts():
    terms = asked("How many ChangeLog entries mention MySQL, PyPI, getValue, $HOME or LC_ALL in 2019?").terms
    assert {"ChangeLog", "MySQL", "PyPI", "getValue", "HOME", "LC_ALL", "2019"} <= set(terms)
    assert not any(t in terms for t in ("hangeLog", "ySQL", "yPI"))


def test_a_set_is_of_one_kind_of_item(tmp_path):
    text = ('Select the type of the progress indicator you wish to use.\nLegal indicators are "dot" and "bar".\n'
            'The "bar" indicator is used by default; see also /etc/wgetrc and ~/.wgetrc.\n')
    reading = reading_of(tmp_path, {"w.txt": text}, "Which progress indicator types does wget support?",
                         ["read w.txt 1 3"])  # "indicators" is a form of the question's "indicator"
    sets = sets_of(reading)
    assert "dot, bar" in sets and "/etc/wgetrc, ~/.wgetrc" in sets
    kinds = {r.candidate.text: r.candidate.type for r in reading.ranked if r.candidate.type != "list"}
    assert all(len({kinds[i] for i in s.items}) == 1 for s in sets.values())  # never "Select, dot, type, ..."


def test_an_enumeration_in_prose_is_a_set_of_its_words(tmp_path):
    text = ("It supports HTTP, HTTPS, and FTP protocols, as well as retrieval through proxies.\n"
            "On Unix the server runs one of prefork, worker, or event, depending on the platform.\n"
            "The archive has main, contrib and non-free areas; this and that are not items.\n")

    def sets(question):
        reading = reading_of(tmp_path, {"e.txt": text}, question, ["read e.txt 1 3"])
        return sets_of(reading)

    found = sets("Which protocols can wget download files over?")
    assert found["HTTP, HTTPS, FTP"].items == ["HTTP", "HTTPS", "FTP"]
    assert found["prefork, worker, event"].spots[0].sentence.line == 2
    assert "main, contrib, non-free" in found and not any("this" in t.split(", ") for t in found)
    assert not [t for t in sets("Which protocol does wget use by default?") if " " in t]  # one value asked for


def test_a_name_of_letters_and_digits_is_a_candidate_only_where_one_thing_is_asked_by_name(tmp_path):
    log = ("2026-03-01 03:12:44 host-eu2 worker-3 out of memory: killed request 1033 (rss 3.9 GB)\n"
           "2026-03-01 03:12:45 eth0 link down; UTF-8 decoding of x86_64 core dump failed\n")

    def found(question):
        reading = reading_of(tmp_path, {"s.log": log}, question, ["read s.log 1 2"])
        return {r.candidate.text: r.candidate.type for r in reading.ranked}

    one = found("Which worker ran out of memory?")
    for name in ("worker-3", "host-eu2", "eth0", "UTF-8", "x86_64"):
        assert one.get(name) == "identifier", name
    assert one["1033"] == "number" and one["2026-03-01 03:12:44"] == "date"
    for question in ("How many requests were killed?", "Which hosts logged an error?"):
        assert not {"worker-3", "host-eu2", "eth0"} & set(found(question)), question  # a count, a set: no names


def test_a_collection_written_out_in_code_is_a_set_of_its_items(tmp_path):
    text = ("RETRY_AFTER_STATUS_CODES = frozenset([413, 429, 503])\n"
            'port_by_scheme = {"http": 80, "https": 443}\n'
            "result = compute(1, 2)\n")
    reading = reading_of(tmp_path, {"retry.py": text}, "On which status codes does Retry honour a Retry-After header?",
                         ["read retry.py 1 3"])
    found = sets_of(reading)
    assert found["413, 429, 503"].items == ["413", "429", "503"] and found["413, 429, 503"].spots[0].sentence.line == 1
    assert "http, https" in found and "80, 443" in found  # a mapping's keys, and its values
    assert "1, 2" not in found  # a call's arguments are no collection


MANUAL = """\
The cache keeps several distinct queues, one for each of the following
kinds of request:

  • lookups of names

  • transfers of zones
    and their notifications

  • updates

The cache drops a request that waits longer than its queue allows.

The following *levels* are recognized by the package tools.

"urgent"
   Requests served before any other. Removing an "urgent" request
   breaks the session.

"normal"
   The default level.

"idle"
   Served when nothing else waits.

[1] The levels were once called priorities.
"""


def test_a_list_laid_out_one_item_a_line_below_its_lead_is_a_set_and_a_count(tmp_path):
    """A bulleted list (an item's own lines indented deeper) and a definition list (terms, each over its indented
    description) below the paragraph that announces them: their items are a set for "which", and how many there
    are a count for "how many"; a line of another shape ends the list."""
    def reading(question):
        return reading_of(tmp_path, {"manual.txt": MANUAL}, question, ["read manual.txt 1 32"])

    queues = reading("How many distinct queues does the cache keep?")
    counts = {r.candidate.text: r.candidate for r in queues.ranked if r.candidate.unit == "items"}
    assert list(counts) == ["3"] and counts["3"].counted == ("manual.txt:2",)
    assert [s.sentence.line for s in counts["3"].spots] == [2, 4, 6, 9]  # the lead, then each item's line
    levels = sets_of(reading("Which levels are recognized by the package tools?"))
    assert levels["urgent, normal, idle"].items == ["urgent", "normal", "idle"]  # not the note [1] below them
    assert levels["urgent, normal, idle"].complete and not levels["urgent, normal, idle"].partial  # shown to its end
    kinds = sets_of(reading("Which kinds of request does the cache keep queues for?"))
    assert kinds["lookups of names, transfers of zones, updates"].spots[2].sentence.line == 6
    # a question for one value takes no list
    assert not sets_of(reading("Which level is the default?"))


def test_a_table_whose_columns_lost_their_gap_is_a_list_of_its_first_cells_without_its_header(tmp_path):
    """Text converted from a PDF: no blank lines, a table's cells joined by single spaces. The sentence that
    announces the table is its lead; the header row is not an item; the next heading ends the list."""
    text = ("Large packages must not use a direct subdirectory.\n4.2. Requirements\n"
            "The following directories, or symbolic links to directories, are required in /opt.\n"
            "Directory Description\nbin Most user commands\nlib Libraries\nlocal Local hierarchy (empty at first)\n"
            "share Architecture-independent data\n4.3. Specific Options\nDirectory Description\ngames Games\n")
    found = sets_of(reading_of(tmp_path, {"fhs.txt": text}, "Which directories are required in /opt?",
                               ["read fhs.txt 1 12"]))
    assert found["bin, lib, local, share"].items == ["bin", "lib", "local", "share"]
    assert not [t for t in found if "games" in t or "Directory" in t]


def test_a_list_the_shown_lines_cut_short_is_read_on_by_lcread_before_it_is_counted(tmp_path):
    """The first step's passage stops at a blank line, so a list below its lead is not shown: the reader names the
    lines lcread reads itself, and counts the list only once a shown line ends it."""
    (tmp_path / "manual.txt").write_text(MANUAL)
    question = "How many distinct queues does the cache keep?"
    with DocumentStore.open([str(tmp_path / "manual.txt")]) as store:
        tools, evidence = ToolRunner(store), EvidenceLog()
        observation = tools.run(parse("read manual.txt 1 6"))  # the lead and the first two items
        evidence.add(observation.shown, observation.search)
        ranker = tools.question_ranker(question)
        reader = Reader(asked(question), evidence, PRIOR, ranker.score, ranker.spans)
        assert not [c for c in reader.pool() if c.unit == "items"]  # the list may go on: no count yet
        assert reader.lists_to_read() == [("manual.txt", 7, 62)]
        observation = tools.run(parse("read manual.txt 7 62"))
        evidence.add(observation.shown, observation.search)
        assert [c.text for c in reader.pool() if c.unit == "items"] == ["3"] and reader.lists_to_read() == []


def test_a_collection_written_out_one_entry_a_line_is_a_set_of_its_keys(tmp_path):
    code = ('_available_shells: t.Dict[str, t.Type[ShellComplete]] = {\n'
            '    "bash": BashComplete,\n    "fish": FishComplete,\n    "zsh": ZshComplete,\n}\n\n'
            'def add_completion_class(cls, name=None):\n    if name is None:\n        name = cls.name\n')
    found = sets_of(reading_of(tmp_path, {"shells.py": code}, "Which shells are available for completion?",
                               ["read shells.py 1 9"]))
    assert found["bash, fish, zsh"].items == ["bash", "fish", "zsh"]
    assert not [t for t in found if "name" in t]  # a block of statements below `if ...:` is no list


def test_the_models_list_answer_is_its_items_once_each(tmp_path):
    text = 'Select the type of the progress indicator.\nLegal indicators are "dot" and "bar".\n'
    listed = reading_of(tmp_path, {"w.txt": text}, "Which progress indicator types does wget support?",
                        ["read w.txt 1 2"], free="bar, dot, bar")
    located = next(r.candidate for r in listed.ranked if r.candidate.text == "bar, dot")
    assert located.items == ["bar", "dot"] and located.spots


def test_candidates_are_typed_spans_of_shown_lines_and_type_is_a_feature(tmp_path):
    text = ("Network settings.\n"
            "The default timeout is 30 seconds; set R_FETCH_TIMEOUT to change it.\n"
            "Logs are written to /var/log/fetch.log every 5 minutes.\n")
    reading = reading_of(tmp_path, {"manual.txt": text}, "Which environment variable sets the default timeout?",
                         ["grep -n timeout manual.txt"])
    by_text = {r.candidate.text: r for r in reading.ranked}
    assert by_text["R_FETCH_TIMEOUT"].candidate.type == "identifier"
    assert by_text["30 seconds"].candidate.type == "number"
    assert by_text["R_FETCH_TIMEOUT"].row["type_exact"] == 1.0 and by_text["30 seconds"].row["type_exact"] == 0.0
    assert "/var/log/fetch.log" not in by_text  # its line was not shown: not a candidate
    spot = by_text["R_FETCH_TIMEOUT"].candidate.spots[0]
    assert (spot.sentence.doc, spot.sentence.line) == ("manual.txt", 2)


def test_a_span_wrapped_onto_the_next_shown_line_is_one_candidate_cited_by_its_first_line(tmp_path):
    text = ("The proposal of naming releases after\n"
            "characters was made by Walter\n"
            "Hargreave, who led the project then.\n"
            "The mirror moved on March\n"
            "4, 2019.  It holds 12 TB.\n"
            "Tea was brought by Ada.\n"
            "Lovelace came later.\n")
    reading = reading_of(tmp_path, {"history.txt": text}, "Who proposed naming the releases after characters?",
                         ["read history.txt 1 7"], free="Walter Hargreave")
    by_text = {r.candidate.text: r.candidate for r in reading.ranked}
    name = by_text["Walter Hargreave"]
    assert name.type == "name" and name.spots
    assert {(p.sentence.line, p.sentence.text[p.start:p.end]) for p in name.spots} == {(2, "Walter")}
    assert by_text["March 4, 2019"].type == "date"  # a date wrapped after its month
    assert "Ada Lovelace" not in by_text and "Ada" in by_text  # a line that ends its sentence does not run on
    # only shown lines join: the free answer across a line that was not shown is not grounded
    unshown = reading_of(tmp_path, {"history.txt": text}, "Who proposed naming the releases after characters?",
                         ["read history.txt 1 2"], free="Walter Hargreave")
    assert not next(r.candidate for r in unshown.ranked if r.candidate.text == "Walter Hargreave").spots


def test_a_constant_defined_as_another_name_resolves_to_its_value_citing_both_lines(tmp_path):
    code = ("import os\n\nLIMIT_ALIAS = 30\n\nDEFAULT_REDIRECT_LIMIT = LIMIT_ALIAS\n\n"
            "def get(url, limit=DEFAULT_REDIRECT_LIMIT):\n    return fetch(url, limit)\n")
    reading = reading_of(tmp_path, {"client.py": code}, "How many redirects does get follow at most?",
                         ["grep -n LIMIT client.py"])
    value = next(r for r in reading.ranked if r.candidate.text == "30" and r.candidate.source)
    assert value.row["resolved"] == 1.0 and value.candidate.source == "DEFAULT_REDIRECT_LIMIT"
    assert {s.sentence.line for s in value.candidate.spots} >= {3, 5}


def test_how_many_counts_the_lines_of_the_whole_input_that_hold_the_question_words(tmp_path):
    log = "\n".join([f"10:0{i} worker {i} started" for i in range(7)] + ["10:09 worker 3 stopped"] +
                    [f"10:1{i} cache flushed" for i in range(4)]) + "\n"
    reading = reading_of(tmp_path, {"app.log": log}, "How many workers started?", ["head -n 2 app.log"])
    counts = {r.candidate.text: r for r in reading.ranked if r.candidate.type == "count"}
    assert "7" in counts and counts["7"].row["computed"] == 1.0
    # a count lcread computed is the kind of value the question asks for; a number shown in a line is not
    assert counts["7"].row["derived_asked"] == 1.0
    assert all(r.row["derived_asked"] == 0.0 for r in reading.ranked if not r.candidate.computed)


def test_how_many_entries_counts_a_log_s_entries_by_the_words_their_headers_hold(tmp_path):
    """"How many entries did A write in 2019" counts the ChangeLog's entries whose header holds the name and the
    year: no line holds "entries" or "write", so a count of lines finds nothing; the entries' headers do."""
    entries = [("2019-05-30", "Ada Byron", "ada@example.org"), ("2019-02-19", "Ada Byron", "ada@example.org"),
               ("2019-01-07", "Tom Kilburn", "tom@example.org"), ("2018-12-31", "Ada Byron", "ada@example.org"),
               ("2019-01-02", "Ada Byron", "ada@example.org")]
    log = "".join(f"{date}  {name}  <{mail}>\n\n\t* spool.c (drain): Count the spool of {date}.\n\n"
                  for date, name, mail in entries)
    reading = reading_of(tmp_path, {"ChangeLog": log}, "How many ChangeLog entries did Ada Byron write in 2019?",
                         ["search How many ChangeLog entries did Ada Byron write in 2019?"])
    counts = {r.candidate.text: r.candidate for r in reading.ranked if r.candidate.type == "count"}
    assert counts["3"].unit == "entries" and "2019" in counts["3"].counted and "entries" not in counts["3"].counted
    assert counts["3"].spots[0].sentence.text.startswith("2019-05-30  Ada Byron")  # cited on an entry's header


def test_entries_are_counted_without_a_word_only_one_header_holds(tmp_path):
    """One header naming its release ("the spool release") holds "release": counting by it would count that one
    entry or none, so each word is also left out in turn, as lcread's count of lines does."""
    news = "".join(f"Changes with gadget {version}{' ' * 20}{date}\n\n    *) Bugfix: a fix in {version}.\n\n"
                   for version, date in [("2.4.0", "12 Mar 2024"), ("2.3.1", "02 Jan 2024"),
                                         ("2.3.0, the spool release", "05 Nov 2023"), ("2.2.0", "09 Jun 2023")])
    reading = reading_of(tmp_path, {"CHANGES": news}, "How many gadget releases came out in 2024?",
                         ["search How many gadget releases came out in 2024?"])
    counts = {r.candidate.text: r.candidate for r in reading.ranked if r.candidate.type == "count"}
    assert counts["2"].unit == "entries" and set(counts["2"].counted) == {"2024", "gadget"}


def test_cover_is_the_share_of_the_questions_words_a_candidates_line_holds(tmp_path):
    text = ("The spool directory that holds the mail queue is /var/spool/mq.\n"
            "Temporary mail files go to /var/tmp/mq.\n"
            "Logs go to /var/log/mq.\n")
    reading = reading_of(tmp_path, {"mq.txt": text}, "Which directory holds the mail queue's spool?",
                         ["read mq.txt 1 3"])
    rows = {r.candidate.text.rstrip("."): r.row for r in reading.ranked}
    assert rows["/var/spool/mq"]["cover"] == pytest.approx(1.0)  # every word the question has
    assert 0.0 < rows["/var/tmp/mq"]["cover"] < 0.5  # "mail" alone
    assert rows["/var/log/mq"]["cover"] == 0.0


def test_a_fit_reads_a_feature_an_example_lacks_as_its_average():
    rng = random.Random(3)
    data = []
    for i in range(200):
        right = i % 2 == 0
        features = {"signal": (1.0 if right else 0.0) + rng.gauss(0, 0.3)}
        if i % 3:  # a third of the examples lack it: they say nothing either way
            features["sometimes"] = features["signal"]
        data.append(cal.Example(f"g{i}", i, features, right))
    scorer = cal.fit(data, ["signal", "sometimes"])
    present = [e.features["sometimes"] for e in data if "sometimes" in e.features]
    assert scorer.mean[1] == pytest.approx(sum(present) / len(present))  # not pulled towards 0 by the missing
    assert scorer.weights[0] > 0 and scorer.weights[1] > 0


def test_a_confident_grounded_best_is_the_answer_and_a_weak_pool_is_no_answer(tmp_path):
    text = "The pump's warranty runs for 18 months from delivery.\nService visits happen twice a year.\n"
    files, question = {"pump.txt": text}, "How long does the pump's warranty run?"
    sure = Scorer(features=["match"], weights=[6.0], bias=-2.0, mean=[0.0], scale=[1.0], threshold=0.9)
    reading = reading_of(tmp_path, files, question, ["read pump.txt 1 2"], scorer=sure)
    assert reading.answer == "18 months" and reading.grounded and reading.verified
    assert reading.citations()[0].line == 1
    doubtful = Scorer(features=["match"], weights=[0.0], bias=-4.0, mean=[0.0], scale=[1.0], threshold=0.9,
                      floor=0.1)
    weak = reading_of(tmp_path, files, question, ["read pump.txt 1 2"], scorer=doubtful)
    assert weak.answer is None and not weak.verified and weak.no_answer > 0.5


def test_an_answer_no_shown_line_holds_is_never_chosen_over_a_grounded_one(tmp_path):
    text = "The cache holds 512 entries by default.\n"
    reading = reading_of(tmp_path, {"cache.txt": text}, "How many entries does the cache hold by default?",
                         ["read cache.txt 1 1"], scorer=trusting(), free="4096")
    made_up = next(r for r in reading.ranked if r.candidate.text == "4096")
    assert not made_up.candidate.spots and reading.ranked[0].candidate.spots
    assert reading.answer != "4096"


def test_a_number_written_in_words_is_scored_as_the_digits_a_model_writes_it_in(tmp_path):
    text = "One of the rules: a name must be at least two characters long, and 214 characters at most.\n"
    writes_digits = {'2"': (-0.1, 0), '214"': (-2.0, 1)}  # the model would write 2, and never "two"
    likely = Scorer(features=["lm_mean", "lm_greedy"], weights=[2.0, 1.0], bias=0.0, mean=[0.0, 0.0],
                    scale=[1.0, 1.0], threshold=0.99)
    reading = reading_of(tmp_path, {"names.txt": text}, "How many characters long must a name be, at least?",
                         ["read names.txt 1 1"], scorer=likely, free="2",
                         model=lambda t: writes_digits.get(t, (-6.0, 5)))
    best = reading.ranked[0]
    assert best.candidate.text == "two" and best.candidate.spots  # the answer as the document wrote it, cited
    assert best.row["lm_mean"] == -0.1 and best.row["lm_greedy"] == 1.0 and best.row["free"] == 1.0
    assert not any(r.candidate.text == "2" for r in reading.ranked)  # the model's "2" named it, no candidate of its own
    one = next(r for r in reading.ranked if r.candidate.text.lower() == "one")
    assert one.row["lm_mean"] == -6.0  # "one" is mostly a pronoun: it is not read as 1


@pytest.mark.parametrize("said", [",5d", ":5d,", " 5d)", '"5d";', "“5d”", "‘5d’,"])
def test_the_separators_the_model_copies_around_a_value_do_not_hide_the_shown_value(tmp_path, said):
    text = "maximal_queue_lifetime,5d\nbounce_queue_lifetime,2d\n"
    reading = reading_of(tmp_path, {"main.cf": text}, "How long does a deferred message stay in the queue?",
                         ["read main.cf 1 2"], free=said)
    assert reading.free == "5d"
    said_value = next(r for r in reading.ranked if r.candidate.text == "5d")
    assert said_value.row["free"] == 1.0 and said_value.candidate.spots
    assert not any(r.candidate.text != "5d" and r.row["free"] > 0 for r in reading.ranked)


def test_an_address_keeps_its_colons(tmp_path):
    reading = reading_of(tmp_path, {"net.txt": "The daemon listens on ::1 by default.\n"},
                         "Which address does the daemon listen on by default?", ["read net.txt 1 1"], free="::1")
    assert reading.free == "::1"


def test_settled_means_confidence_at_the_settle_threshold_and_verified_implies_it(tmp_path):
    text = "The pump's warranty runs for 18 months from delivery.\n"
    scorer = Scorer(features=["match"], weights=[2.0], bias=0.0, mean=[0.0], scale=[1.0], threshold=0.99,
                    settle=0.6)
    reading = reading_of(tmp_path, {"pump.txt": text}, "How long does the pump's warranty run?",
                         ["read pump.txt 1 1"], scorer=scorer)
    assert 0.6 <= reading.confidence < 0.99 and reading.settled and not reading.verified


# --- calibration -------------------------------------------------------------------------------------------

def make_rows(tmp_path, n: int, seed: int) -> list[dict]:
    """Bench-like rows from documents made here: each holds the asked value in the sentence that matches the
    question, and other values of the same type in sentences that do not; candidates are labelled as the bench
    labels them (the right one is the asked value)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        folder = tmp_path / f"d{seed}-{i}"
        folder.mkdir()
        thing = rng.choice(["pump", "valve", "boiler", "fan", "meter"]) + str(i)
        value = rng.randint(10, 99)
        lines = [f"The {rng.choice(['door', 'lamp', 'belt'])} is checked every {rng.randint(10, 99)} months."
                 for _ in range(4)]
        lines.insert(rng.randrange(5), f"The warranty of the {thing} runs for {value} months.")
        question = f"How many months does the warranty of the {thing} run?"
        reading = reading_of(folder, {"m.txt": "\n".join(lines) + "\n"}, question, ["read m.txt 1 5"])
        rows.append(bench_row(reading, value, i, "made"))
    return rows


def bench_row(reading, value: int, i: int, suite: str) -> dict:
    """A reading as the bench records it, its candidates labelled as the bench labels them (the right one is the
    asked value)."""
    readings = [{"step": 1, "free": None, "candidates": [
        {"text": r.candidate.text, "features": r.row, "right": r.candidate.text.split()[0] == str(value)}
        for r in reading.ranked]}]
    return {"task": f"t{i}", "suite": suite, "group": f"g{i}", "readings": readings}


def test_calibration_learns_generic_features_and_its_threshold_holds_on_held_out_documents(tmp_path):
    scorer = cal.calibrate(make_rows(tmp_path, 30, seed=1), GENERIC, precision=0.9)
    assert set(scorer.features) <= set(GENERIC) and len(scorer.features) <= 3  # chosen: what earns its place
    reads = [f for f in scorer.features if f in ("match", "match_top", "near")]
    assert reads and all(scorer.weights[scorer.features.index(f)] > 0 for f in reads)  # the sentence that matches
    measured = scorer.measured["held_out"]
    assert measured["readings"] == 30 and measured["accuracy"] >= 0.9
    assert measured["verified"] >= 10 and measured["precision"] >= 0.9
    fresh = make_rows(tmp_path, 20, seed=2)  # documents the fit never saw
    best = [max(r["readings"][0]["candidates"], key=lambda c: scorer.probability(c["features"])) for r in fresh]
    assert sum(c["right"] for c in best) >= 18
    verified = [c for c, r in zip(best, fresh) if confidence_of(scorer, r) >= scorer.threshold]
    assert verified and sum(c["right"] for c in verified) / len(verified) >= 0.9


def confidence_of(scorer, row) -> float:
    """The scorer's confidence in the best answer of a bench row's first reading."""
    pool = [(scorer.probability(c["features"]), c["features"]) for c in row["readings"][0]["candidates"]]
    return scorer.confidence(sorted(pool, key=lambda t: -t[0]))


def ambiguous_rows(tmp_path, n: int, seed: int) -> list[dict]:
    """Rows as make_rows', but every other document states the asked thing twice with two values (an old and a
    new warranty), of which the bench calls one right: the two candidates are alike to the ranking's features, so
    only how far the best beats the runner-up tells the sure readings from the coin flips."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        folder = tmp_path / f"a{seed}-{i}"
        folder.mkdir()
        thing = rng.choice(["pump", "valve", "boiler", "fan", "meter"]) + str(i)
        value, other = rng.sample(range(10, 99), 2)
        lines = [f"The {rng.choice(['door', 'lamp', 'belt'])} is checked every {rng.randint(10, 99)} days."
                 for _ in range(3)]
        lines.insert(rng.randrange(4), f"The warranty of the {thing} runs for {value} months.")
        if i % 2:
            lines.insert(rng.randrange(5), f"The warranty of the {thing} runs for {other} months.")
        question = f"How many months does the warranty of the {thing} run?"
        reading = reading_of(folder, {"m.txt": "\n".join(lines) + "\n"}, question, [f"read m.txt 1 {len(lines)}"])
        rows.append(bench_row(reading, value, i, f"made{i % 7}"))
    return rows


def test_the_confidence_tells_a_clear_winner_from_a_tie_the_ranking_cannot_see(tmp_path):
    scorer = cal.calibrate(ambiguous_rows(tmp_path, 60, seed=5), ["match", "type_fits", "near"], precision=0.9,
                           choose=False)
    assert scorer.answer is not None and {"a_margin", "a_share"} & set(scorer.answer.features)
    measured = scorer.measured["held_out"]
    assert measured["verified"] >= 20 and measured["precision"] >= 0.9  # the clear half, not the ties
    assert scorer.measured["confidence"]["log_loss"] < scorer.measured["confidence"]["log_loss_of_probability"]
    fresh = ambiguous_rows(tmp_path, 20, seed=6)
    sure = [confidence_of(scorer, r) for r in fresh]
    assert all(c < scorer.threshold for c, i in zip(sure, range(20)) if i % 2)  # a tie is never verified
    assert sum(c >= scorer.threshold for c, i in zip(sure, range(20)) if not i % 2) >= 8
    again = Scorer(**json.loads(json.dumps(scorer.to_dict())))  # as stored and loaded
    assert again.answer.features == scorer.answer.features and again.confidence([(0.5, {})]) == \
        scorer.confidence([(0.5, {})])


def test_an_answers_standing_is_its_margin_over_the_runner_up():
    from lcread.reader.features import LOGIT_CAP, answer_features

    tie = answer_features([(0.6, {"lm_share": -0.7, "free": 1.0}), (0.6, {"lm_share": -0.7})])
    assert tie["a_margin"] == 0.0 and tie["a_share"] == 0.5 and tie["a_lm_margin"] == 0.0 and tie["a_free"] == 1.0
    clear = answer_features([(0.6, {"lm_share": -0.01}), (0.05, {"lm_share": -4.6}), (0.01, {})])
    assert clear["a_margin"] > 3 and clear["a_share"] > 0.9 and clear["a_lm_margin"] > 4
    alone = answer_features([(0.6, {})])
    assert alone["a_margin"] == pytest.approx(LOGIT_CAP + alone["a_best"]) and alone["a_lm_margin"] == 0.0
    assert answer_features([]) == {} and Scorer(**PRIOR.to_dict()).confidence([(0.3, {})]) == 0.3


def test_the_threshold_is_the_lowest_confidence_reaching_the_precision():
    best = [(0.95, True), (0.9, True), (0.8, True), (0.7, False), (0.6, True), (0.5, False), (0.4, False)]
    assert cal.threshold(best, 0.95) == 0.8  # 0.7 would take a wrong one in: 3 of 4
    assert cal.threshold(best, 0.75) == 0.6  # 4 of 5 right at 0.6
    assert cal.threshold([(0.9, False)], 0.95) == 1.0  # nothing reaches it: nothing is verified
    m = cal.measure(best, 0.8)
    assert m["verified"] == 3 and m["precision"] == 1.0 and m["coverage"] == 0.75


def test_a_run_settles_where_reading_on_no_longer_makes_answers_right_more_often():
    sequences = [
        [(0.9, True), (0.9, True)],    # sure and right at once
        [(0.8, True), (0.85, True)],
        [(0.3, False), (0.7, True)],   # reading on found it
        [(0.2, False), (0.4, False)],
    ]
    theta, measured = cal.settle_threshold(sequences, tolerance=0.0)
    assert measured["read_to_the_end"] == 0.75 and measured["accuracy"] == 0.75
    assert 0.3 < theta <= 0.7  # 0.3 would stop the third run at its wrong first reading
    assert cal.settled(sequences, theta)[1] < 1.0  # and it reads less than reading every run to the end
    first = [[(0.9, True)], [(0.05, False)], [(0.4, True)]]  # runs that all ended at their first reading
    assert cal.settle_threshold(first)[0] == 0.0  # nothing says reading on helps: every reading settles


def test_several_bench_folders_are_fitted_as_one_and_models_are_not_mixed(tmp_path):
    from lcread.errors import LcreadError

    rows = make_rows(tmp_path, 4, seed=3)
    for name, model, part in (("a", "local", rows[:2]), ("b", "local", rows[2:]), ("c", "gpt", rows[:1])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps({"settings": {"model": model}, "rows": part}))
    model, found = cal.load_rows([tmp_path / "a", tmp_path / "b"])
    assert model == "local" and len(found) == 4
    with pytest.raises(LcreadError, match="one model at a time"):
        cal.load_rows([tmp_path / "a", tmp_path / "c"])


def test_a_users_calibration_overrides_the_shipped_one_and_unknown_models_fall_back(tmp_path, monkeypatch):
    path = tmp_path / "reader.json"
    monkeypatch.setenv("LCREAD_READER_CALIBRATION", str(path))
    mine = Scorer(features=["match"], weights=[1.0], bias=0.0, mean=[0.0], scale=[1.0], threshold=0.77,
                  source="mine")
    save("gpt-x:generic", mine)
    assert scorer_for("gpt-x", likelihood=False).source == "mine"
    other = scorer_for("never-calibrated", likelihood=False)
    assert other.source != "mine" and set(other.features) <= set(GENERIC)  # the shipped generic one, or the prior
    path.write_text("{not json")
    assert scorer_for("gpt-x", likelihood=False).source != "mine"  # a damaged file is ignored


def test_a_settled_reading_ends_the_run_at_once_unverified(tmp_path):
    from lcread.agent.select import SelectReader
    from lcread.display import SilentDisplay
    from lcread.models.scripted import ScriptedModel
    from lcread.trace import MemoryTrace

    lines = [f"Routine note {i}: the belts were inspected." for i in range(200)]
    lines[120] = "The warranty of the Halvorsen pump runs for 18 months from delivery."
    (tmp_path / "notes.txt").write_text("\n".join(lines) + "\n")
    scorer = Scorer(features=["match_top", "type_fits"], weights=[3.0, 3.0], bias=-4.0, mean=[0.0, 0.0],
                    scale=[1.0, 1.0], threshold=0.99, settle=0.8)
    model = ScriptedModel(['grep -n belts notes.txt', 'answer "18 months"'])
    with DocumentStore.open([str(tmp_path / "notes.txt")]) as store:
        result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), scorer=scorer).run(
            "How long does the warranty of the Halvorsen pump run?")
    assert result.answer == "18 months" and result.final and len(model.calls) == 1  # the grep never ran
    assert result.verified is False and 0.8 <= result.confidence < 0.99
    assert result.citations[0].line == 121


def test_held_out_probabilities_come_from_fits_that_never_saw_the_examples_document(monkeypatch):
    data = [cal.Example(f"s{d}/q{q}", d * 10 + q, {"match": float(q % 2)}, q % 2 == 1, d * 10 + q, f"s{d}")
            for d in range(7) for q in range(4)]
    fitted = cal.fit
    seen: list[set[str]] = []

    def recording(train, names, **kw):
        seen.append({e.document for e in train})
        scorer = fitted(train, names, **kw)
        scorer.source = str(len(seen) - 1)
        return scorer

    monkeypatch.setattr(cal, "fit", recording)
    cal.held_out(data, ["match"])
    assert len(seen) == cal.FOLDS and all(len(docs) < 7 for docs in seen)
    held = [{f"s{d}" for d in range(7)} - docs for docs in seen]
    assert all(a.isdisjoint(b) for i, a in enumerate(held) for b in held[i + 1:])  # each document held out once
    assert set().union(*held) == {f"s{d}" for d in range(7)}


def test_calibrate_fits_the_features_it_is_given_or_chooses_them_and_refuses_unknown_ones(tmp_path):
    from lcread.errors import UsageError

    (tmp_path / "runs").mkdir()
    rows = make_rows(tmp_path, 12, seed=4)
    (tmp_path / "runs" / "results.json").write_text(json.dumps({"settings": {"model": "m"}, "rows": rows}))
    out = tmp_path / "reader.json"
    cal.show([tmp_path / "runs"], 0.9, out, features=["match", "type_fits"])
    saved = json.loads(out.read_text())
    assert saved["m"]["features"] == ["match", "type_fits"] == saved["m:generic"]["features"]
    cal.show([tmp_path / "runs"], 0.9, out)
    chosen = json.loads(out.read_text())["m:generic"]
    assert [f for f, _ in chosen["measured"]["chosen"]] == chosen["features"]  # what selection chose, in order
    with pytest.raises(UsageError, match="no feature bogus"):
        cal.show([tmp_path / "runs"], 0.9, out, features=["match", "bogus"])


def test_keeping_the_ranking_fits_only_the_confidence_and_thresholds(tmp_path, monkeypatch):
    from lcread.errors import UsageError

    shipped = shipped_scorer()
    rows = ambiguous_rows(tmp_path, 60, seed=5)
    kept = cal.keep_ranking(shipped, rows, precision=0.9)
    assert (kept.features, kept.weights, kept.bias) == (shipped.features, shipped.weights, shipped.bias)
    assert kept.answer is not None and kept.threshold < 1.0  # the clear winners are verified, the ties are not
    measured = kept.measured["held_out"]
    assert measured["verified"] >= 20 and measured["precision"] >= 0.9
    assert shipped.answer is None and shipped.threshold == 1.0  # the scorer handed in is not changed
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "results.json").write_text(json.dumps({"settings": {"model": "m"}, "rows": rows}))
    out = tmp_path / "reader.json"
    save("m", shipped, out)
    monkeypatch.setenv("LCREAD_READER_CALIBRATION", str(out))
    cal.show([tmp_path / "runs"], 0.9, out, keep=True)
    saved = Scorer(**json.loads(out.read_text())["m"])
    assert saved.weights == shipped.weights and saved.answer.features == kept.answer.features
    assert saved.threshold == kept.threshold and "--keep-ranking" in saved.source
    # the confidence is chosen among the features given (left to choose, it reads the margins)
    assert not set(kept.answer.features) <= {"a_pool", "a_members"}
    only = cal.keep_ranking(shipped, rows, precision=0.9, pool=["a_pool", "a_members"])
    assert only.answer is None or set(only.answer.features) <= {"a_pool", "a_members"}
    cal.show([tmp_path / "runs"], 0.9, out, features=["a_margin"], keep=True)
    saved = Scorer(**json.loads(out.read_text())["m"])
    assert saved.answer is None or saved.answer.features == ["a_margin"]
    # without --keep-ranking, the confidence's features named beside the ranking's: the ranking is fitted over
    # exactly its own, the confidence chosen among the others only
    cal.show([tmp_path / "runs"], 0.9, out, features=["match", "type_fits", "near"])
    free = Scorer(**json.loads(out.read_text())["m"]).answer.features  # left to choose, it reads these
    cal.show([tmp_path / "runs"], 0.9, out, features=["match", "type_fits", "near", "a_pool", "a_members"])
    saved = Scorer(**json.loads(out.read_text())["m"])
    assert saved.features == ["match", "type_fits", "near"] and not set(free) <= {"a_pool", "a_members"}
    assert saved.answer is not None and set(saved.answer.features) <= {"a_pool", "a_members"}
    with pytest.raises(UsageError, match="no feature match"):  # a ranking feature is not the confidence's
        cal.show([tmp_path / "runs"], 0.9, out, features=["match"], keep=True)


def shipped_scorer() -> Scorer:
    """A ranking as a shipped calibration holds one, with no confidence and a threshold nothing reaches."""
    return Scorer(features=["match", "type_fits", "near"], weights=[1.5, 1.0, 0.5], bias=-2.0, mean=[0.0] * 3,
                  scale=[1.0] * 3, threshold=1.0, settle=1.0, source="shipped")


def told_apart_rows(n: int, feature: str, wrong: float) -> list[dict]:
    """Bench rows whose readings differ only in one feature of the best answer: every other one has it at `wrong`
    (and is wrong), the others at the opposite (and are right). The ranking's features are alike, so only that
    feature tells them apart."""
    rows = []
    for i in range(n):
        odd = bool(i % 2)
        best = {"text": "warranty" if odd else "42", "right": not odd,
                "features": {"match": 1.0, "type_fits": 1.0, "near": 1.0, "echo": 0.0, "match_top": 1.0,
                             "type_exact": 1.0, feature: wrong if odd else 1.0 - wrong}}
        other = {"text": "7", "right": False,
                 "features": {"match": 0.2, "type_fits": 1.0, "near": 0.1, "echo": 0.0, "match_top": 0.0,
                              "type_exact": 1.0}}
        rows.append({"task": f"e{i}", "suite": f"made{i % 7}", "group": f"e{i}",
                     "readings": [{"step": 1, "free": None, "candidates": [best, other]}]})
    return rows


def learns_to_distrust(feature: str, wrong: float) -> None:
    """A confidence fitted with the ranking kept on `told_apart_rows` reads the best answer's `feature`, weighted
    away from `wrong`, and then verifies every fresh right answer and none of the wrong ones."""
    from lcread.reader.features import OF_THE_BEST

    name = next(a for a, f in OF_THE_BEST.items() if f == feature)
    kept = cal.keep_ranking(shipped_scorer(), told_apart_rows(60, feature, wrong), precision=0.9)
    assert kept.answer is not None and name in kept.answer.features
    assert (kept.answer.weights[kept.answer.features.index(name)] < 0) == (wrong > 0.5)
    sure = [confidence_of(kept, r) for r in told_apart_rows(20, feature, wrong)]
    assert all(c < kept.threshold for c, i in zip(sure, range(20)) if i % 2)  # a wrong one is never verified
    assert all(c >= kept.threshold for c, i in zip(sure, range(20)) if not i % 2)


def test_an_answer_that_echoes_the_question_is_not_verified_once_the_confidence_has_learnt_so():
    from lcread.reader.features import answer_features

    assert answer_features([(0.9, {"echo": 1.0, "type_exact": 1.0})])["a_echo"] == 1.0
    learns_to_distrust("echo", wrong=1.0)


def test_an_answer_outside_the_line_the_question_matches_best_is_trusted_less_once_learnt():
    """The retrieval's view of the answer's line is among the confidence's features: whether it is the shown line
    that matches the question best, how well it matches against that one, how near the answer sits to a question
    word, and how many shown lines hold the answer."""
    from lcread.reader.features import answer_features

    row = {"match": 0.4, "match_top": 0.0, "near": 0.8, "mentions": 1.1}
    got = answer_features([(0.9, row), (0.1, {"match": 1.0, "match_top": 1.0})])
    assert (got["a_match"], got["a_match_top"], got["a_near"], got["a_mentions"]) == (0.4, 0.0, 0.8, 1.1)
    learns_to_distrust("match_top", wrong=0.0)
