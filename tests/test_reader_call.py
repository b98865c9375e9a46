"""The reader's own call: where the model scores the candidates, the question comes after the shown lines that
match it best (not after the agent's tools and history), once per new evidence; a reading it is sure of ends the
run before the agent's first command. Scripted model, documents made here."""

from lcread.agent.select import SelectReader
from lcread.config import LoopConfig
from lcread.display import SilentDisplay
from lcread.documents import DocumentStore
from lcread.grounding.evidence import EvidenceLog
from lcread.models.scripted import ScriptedModel
from lcread.prompts import render
from lcread.reader import Reader, asked
from lcread.reader.scorer import PRIOR, Scorer
from lcread.tools import ToolRunner, parse
from lcread.trace import MemoryTrace

QUESTION = "How long does the warranty of the Halvorsen pump run?"
READER_SYSTEM = render("reader_system")
CHECK_SYSTEM = render("reader_check_system", none="not stated")
JUDGE_SYSTEM = render("reader_judge_system", yes="yes", no="no")


def notes(tmp_path):
    lines = [f"Routine note {i}: the belts were inspected." for i in range(200)]
    lines[120] = "The warranty of the Halvorsen pump runs for 18 months from delivery."
    (tmp_path / "notes.txt").write_text("\n".join(lines) + "\n")
    return tmp_path / "notes.txt"


def queries(model) -> list[dict]:
    """The calls in which the model wrote (the check's only scores)."""
    return [c for c in model.calls if "continuations" not in c]


def likelihood_scorer(settle: float, threshold: float = 0.999) -> Scorer:
    """Sure of a candidate the model finds likely (mean log-probability near 0) and of the asked type."""
    return Scorer(features=["lm_mean", "type_fits"], weights=[2.0, 2.0], bias=0.0, mean=[0.0, 0.0],
                  scale=[1.0, 1.0], threshold=threshold, settle=settle)


def run(path, outputs, scorer, config=None):
    scored_after: list[str] = []

    def spans(messages, texts):
        scored_after.append(messages[0]["content"])
        return [-0.05 if t.startswith("18 months") else -6.0 for t in texts]

    model = ScriptedModel(outputs, scorer=spans)
    with DocumentStore.open([str(path)]) as store:
        result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), config, scorer).run(QUESTION)
    return result, model, scored_after


def test_a_sure_reading_of_the_readers_own_call_ends_the_run_before_any_command(tmp_path):
    result, model, scored_after = run(notes(tmp_path), ['"18 months"'], likelihood_scorer(settle=0.8))
    assert len(model.calls) == 1 and scored_after == [READER_SYSTEM]  # no check: the confidence does not read it
    prompt = model.calls[0]["messages"]
    assert prompt[0]["content"] == READER_SYSTEM and "Commands:" not in prompt[1]["content"]
    assert "notes.txt:121: The warranty of the Halvorsen pump runs for 18 months" in prompt[1]["content"]
    assert prompt[1]["content"].rstrip().endswith("Question: " + QUESTION)
    assert result.answer == "18 months" and result.citations[0].line == 121
    assert result.verified is False and 0.8 <= result.confidence < 0.999


def test_the_reader_calls_again_only_when_something_new_was_shown(tmp_path):
    outputs = ['"belts"', "read notes.txt 1 3", '"belts"', "read notes.txt 1 3"]
    result, model, scored_after = run(notes(tmp_path), outputs, likelihood_scorer(settle=0.9999),
                                      LoopConfig(max_steps=2))
    systems = [c["messages"][0]["content"] == READER_SYSTEM for c in queries(model)]
    assert systems == [True, False, True, False]  # the repeated read showed nothing new: no third reader call
    assert scored_after == [READER_SYSTEM, READER_SYSTEM]  # the agent's calls are not scored
    assert result.answer == "18 months"  # the reader's best, though the model said "belts"


def test_without_the_readers_call_the_agents_calls_are_scored(tmp_path):
    result, model, scored_after = run(notes(tmp_path), ['answer "18 months"'], likelihood_scorer(settle=0.8),
                                      LoopConfig(reader_call=False))
    assert len(model.calls) == 1 and scored_after and READER_SYSTEM not in scored_after
    assert CHECK_SYSTEM not in scored_after  # the check reads again what the reader's own call read
    assert result.answer == "18 months"


def test_passages_are_the_best_matching_lines_in_document_order_within_the_budget(tmp_path):
    long_line = "Filler words here. " * 60 + "The pump's warranty runs for 18 months. " + "More filler. " * 60
    text = "\n".join(["Unrelated line about belts.", "The Halvorsen pump was delivered in May.", long_line,
                      "Another unrelated line.", "Warranty claims go to the Halvorsen office."]) + "\n"
    (tmp_path / "pump.txt").write_text(text)
    with DocumentStore.open([str(tmp_path / "pump.txt")]) as store:
        tools = ToolRunner(store)
        evidence = EvidenceLog()
        evidence.add(tools.run(parse("read pump.txt 1 5")).shown)
        ranker = tools.question_ranker(QUESTION)
        reader = Reader(asked(QUESTION), evidence, PRIOR, ranker.score, ranker.spans)
        every = reader.passages()
        few = reader.passages(budget=700)
    numbers = [int(line.split(":")[1]) for line in every.splitlines()]
    assert numbers == sorted(numbers) and set(numbers) == {1, 2, 3, 4, 5}
    cut = next(line for line in every.splitlines() if line.startswith("pump.txt:3:"))
    assert "18 months" in cut and cut.count("...") == 2 and len(cut) < 700
    kept = [int(line.split(":")[1]) for line in few.splitlines()]
    assert 3 in kept and 1 not in kept and len(few) <= 700


def test_passages_give_a_lines_page_and_lcreads_counts_of_the_whole_input(tmp_path):
    lines = [f"2026-03-0{d} 10:0{i} request {'failed' if (d + i) % 3 == 0 else 'served'} for client {i}"
             for d in range(1, 4) for i in range(4)]
    (tmp_path / "app.log").write_text("\n".join(lines) + "\n")
    question = "How many requests failed?"
    with DocumentStore.open([str(tmp_path / "app.log")]) as store:
        tools = ToolRunner(store)
        evidence = EvidenceLog()
        evidence.add(tools.run(parse("read app.log 1 4")).shown)
        ranker = tools.question_ranker(question)
        paged = Reader(asked(question), evidence, PRIOR, ranker.score, ranker.spans,
                       place_of=lambda doc, line: f"app.log.gz, page {line // 2 + 1}", count_lines=tools.count_lines)
        pool = paged.pool()
        text = paged.passages(pool=pool)
        plain = Reader(asked(question), evidence, PRIOR, ranker.score, ranker.spans).passages()
    failed = sum("failed" in line for line in lines)
    assert f"lcread's count: {failed} lines of the input hold all of: requests, failed" in text.splitlines()
    assert f"lcread's count: {len(lines)} lines of the input hold all of: requests" in text.splitlines()
    assert "app.log:3 (page 2): " in text and "app.log:1 (page 1): " in text  # the page, where a line has one
    assert "page" not in plain and "lcread's count" not in plain  # neither, for a plain text without count_lines


def confident_in_the_check(threshold: float = 0.9) -> Scorer:
    """The ranking of `likelihood_scorer`, with a confidence that reads only the check: sure of the best answer when
    it wins the check's view against no answer."""
    scorer = likelihood_scorer(settle=0.5, threshold=threshold)
    scorer.answer = Scorer(features=["a_check_share"], weights=[12.0], bias=-6.0, mean=[0.0], scale=[1.0],
                           threshold=1.0)
    return scorer


def checked_run(path, supports: bool):
    """A run whose check finds the best candidate's line answers (supports) or that no answer does better."""
    seen: list[list[dict]] = []

    def spans(messages, texts):
        seen.append(messages)
        if messages[0]["content"] == CHECK_SYSTEM:
            return [-0.1 if ("18 months" in t) == supports and ("not stated" in t) != supports else -9.0
                    for t in texts]
        return [-0.05 if t.startswith("18 months") else -6.0 for t in texts]

    model = ScriptedModel(['"18 months"', 'read notes.txt 1 3', '"18 months"'], scorer=spans)
    with DocumentStore.open([str(path)]) as store:
        result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig(max_steps=1),
                              confident_in_the_check()).run(QUESTION)
    return result, model, seen


def test_the_check_scores_the_best_candidates_in_their_own_lines_against_no_answer(tmp_path):
    result, model, seen = checked_run(notes(tmp_path), supports=True)
    assert len(queries(model)) == 1 and len(model.calls) > 2  # the check and the judge write nothing: scores only
    assert result.stop.kind.name == "ANSWERED"
    check = [m for m in seen if m[0]["content"] == CHECK_SYSTEM]
    assert len(check) == 1
    lines = check[0][1]["content"]
    assert "notes.txt:121: The warranty of the Halvorsen pump runs for 18 months from delivery." in lines
    assert lines.rstrip().endswith("Question: " + QUESTION) and len(lines) < 1500  # a few lines, not the passages
    assert result.answer == "18 months" and result.verified is True and result.confidence > 0.99


def test_the_check_is_made_when_the_confidence_reads_it_or_when_asked_for(tmp_path):
    path = notes(tmp_path)
    _, _, plain = run(path, ['"18 months"'], likelihood_scorer(settle=0.8))
    _, model, asked_for = run(path, ['"18 months"'], likelihood_scorer(settle=0.8), LoopConfig(reader_check=True))
    assert plain == [READER_SYSTEM] and asked_for[:2] == [READER_SYSTEM, CHECK_SYSTEM]
    assert set(asked_for[2:]) == {JUDGE_SYSTEM} and len(asked_for) <= 4  # the judge, of the two best at most
    assert len(queries(model)) == 1
    _, _, never = run(path, ['"18 months"', "read notes.txt 1 3", '"18 months"'], confident_in_the_check(),
                      LoopConfig(reader_check=False, max_steps=1))
    assert never == [READER_SYSTEM, READER_SYSTEM]


def test_an_answer_the_check_finds_no_line_for_is_not_verified(tmp_path):
    result, _, _ = checked_run(notes(tmp_path), supports=False)
    assert result.answer == "18 months"  # the ranking is the first reading's; the check moves only the confidence
    assert result.verified is False and result.confidence < 0.01


def judged_run(path, says: str):
    """A run whose judge says `says` (yes or no) of the best candidate, with a confidence that reads only the
    judge."""
    seen: list[list[dict]] = []

    def spans(messages, texts):
        seen.append(messages)
        if messages[0]["content"] == JUDGE_SYSTEM:
            return [-0.05 if t.lower() == says else -5.0 for t in texts]
        return [-0.05 if t.startswith("18 months") else -6.0 for t in texts]

    scorer = likelihood_scorer(settle=0.5, threshold=0.9)
    scorer.answer = Scorer(features=["a_check_judge"], weights=[3.0], bias=-6.0, mean=[0.0], scale=[1.0],
                           threshold=1.0)
    model = ScriptedModel(['"18 months"', "read notes.txt 1 3", '"18 months"'], scorer=spans)
    with DocumentStore.open([str(path)]) as store:
        result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), LoopConfig(max_steps=1),
                              scorer).run(QUESTION)
    return result, seen


def test_the_judge_reads_the_best_answers_own_lines_and_its_no_keeps_the_answer_unverified(tmp_path):
    yes, seen = judged_run(notes(tmp_path), "yes")
    judge = [m[1]["content"] for m in seen if m[0]["content"] == JUDGE_SYSTEM]
    assert len(judge) == 2 and len(judge[0]) < 800  # the two best, each in its own lines, not the passages
    assert "Proposed answer: 119" in judge[1] and "notes.txt:120: Routine note 119" in judge[1]
    assert "Halvorsen pump runs" not in judge[1]  # the runner-up's line alone
    assert "notes.txt:121: The warranty of the Halvorsen pump runs for 18 months from delivery." in judge[0]
    assert "Question: " + QUESTION in judge[0] and "Proposed answer: 18 months" in judge[0]
    assert yes.answer == "18 months" and yes.verified is True and yes.confidence > 0.99
    no, _ = judged_run(notes(tmp_path), "no")
    assert no.answer == "18 months"  # the judge moves the confidence, never the answer
    assert no.verified is False and no.confidence < 0.01


def test_the_judges_feature_is_the_log_odds_of_yes_over_no_in_any_spelling():
    import math

    from lcread.reader.features import LOGIT_CAP, judged

    assert abs(judged([math.log(0.3), math.log(0.3)], [math.log(0.2), math.log(0.2)])["check_judge"]
               - math.log(0.6 / 0.4)) < 1e-9
    assert judged([-0.01, -0.02], [-90.0, -95.0])["check_judge"] == LOGIT_CAP


def test_the_judges_margin_is_the_best_answers_log_odds_over_the_runner_ups_where_it_judged_both():
    from lcread.reader.features import answer_features

    ranked = [(0.6, {"lm_share": -0.2, "check_judge": 2.5}), (0.3, {"lm_share": -1.0}),
              (0.1, {"lm_share": -3.0, "check_judge": -1.0})]
    assert answer_features(ranked)["a_judge_margin"] == 3.5  # over the best-ranked other the judge asked about
    assert "a_judge_margin" not in answer_features(ranked[:2])  # it judged the best alone: no margin


def test_the_checks_features_compare_each_candidate_with_the_others_and_with_no_answer():
    from lcread.reader.features import LOGIT_CAP, checked

    rows = checked([-1.0, -3.0, -40.0, -2.0])  # three candidates, then no answer
    assert [r["check_top"] for r in rows] == [1.0, 0.0, 0.0]
    shares = [r["check_share"] for r in rows]
    assert shares[0] > shares[1] > shares[2] and abs(sum(shares) + rows[0]["check_none"] - 1.0) < 1e-9
    assert abs(rows[0]["check_margin"] - 1.0) < 1e-9  # over no answer, the likeliest other
    assert abs(rows[1]["check_margin"] + 2.0) < 1e-9 and rows[2]["check_margin"] == -LOGIT_CAP


def test_the_confidence_reads_the_checks_features_of_the_best_answer_only_where_the_check_was_made():
    from lcread.reader.features import answer_features, checked

    rows = checked([-0.5, -4.0, -6.0])
    ranked = [(0.7, {"lm_share": -0.2, **rows[0]}), (0.2, {"lm_share": -2.0, **rows[1]}), (0.1, {"lm_share": -3.0})]
    a = answer_features(ranked)
    assert a["a_check_top"] == 1.0 and a["a_check_share"] == rows[0]["check_share"] and a["a_check_none"] < 0.01
    assert not any(k.startswith("a_check_") for k in answer_features([(0.7, {"lm_share": -0.2})]))


def test_a_list_the_first_step_cut_short_is_read_on_before_the_readers_call_and_counted_there(tmp_path):
    """The first step's passage ends at the blank line below the list's lead. lcread reads on itself before the
    reader's call, so the call reads the items with their lead and lcread's count of them, and scores that count."""
    lines = [f"Routine note {i}: the belts were inspected." for i in range(200)]
    lines[120:121] = ["The depot keeps several distinct spare kits, one for each of the following", "machines:", "",
                      "  • the Halvorsen pump", "", "  • the boiler", "", "  • the fan", "", "Kits are checked."]
    (tmp_path / "depot.txt").write_text("\n".join(lines) + "\n")
    scored: list[list[str]] = []

    def spans(messages, texts):
        scored.append(list(texts))
        return [-0.05 if t == '3"' else -6.0 for t in texts]

    model = ScriptedModel(['"3"'], scorer=spans)
    with DocumentStore.open([str(tmp_path / "depot.txt")]) as store:
        result = SelectReader(model, ToolRunner(store), SilentDisplay(), MemoryTrace(), None,
                              likelihood_scorer(settle=0.5)).run("How many distinct spare kits does the depot keep?")
    prompt = model.calls[0]["messages"][1]["content"]
    assert "depot.txt:124: • the Halvorsen pump" in prompt and "depot.txt:128: • the fan" in prompt
    assert "lcread's count: 3 items in the list that depot.txt:122 opens" in prompt
    assert '3"' in scored[0] and result.answer == "3"
    assert [c.line for c in result.citations][:2] == [122, 124]  # the lead, then the first item
