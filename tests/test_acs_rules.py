import math

import pytest

from lcread.acs.policies import parse_end, parse_verbalized
from lcread.reader.question import parse_options
from lcread.acs.rules import (AnswerState, acs_stop, change, is_abstention, jsd, normalize,
                              posterior_from_top, random_stop_step, stability, token_f1)


def test_normalize_strips_labels_case_punctuation_and_articles():
    assert normalize("Answer: The Red Fox!") == "red fox"
    assert normalize("  final answer - 4,817,263. ") == "4 817 263"


@pytest.mark.parametrize("a, b, f1", [
    ("Maria Okafor", "maria okafor", 1.0),
    ("Answer: Maria Okafor", "Maria", 2 / 3),
    ("the blue house", "a red house", 0.5),
    ("cats", "dogs", 0.0),
    ("", "", 1.0),
    ("", "x", 0.0),
])
def test_token_f1(a, b, f1):
    assert token_f1(a, b) == pytest.approx(f1)


def test_jsd_in_bits():
    assert jsd({"A": 1.0}, {"A": 1.0}) == 0.0
    assert jsd({"A": 1.0, "B": 0.0}, {"A": 0.0, "B": 1.0}) == pytest.approx(1.0)
    p, q = {"A": 0.5, "B": 0.5}, {"A": 1.0, "B": 0.0}
    expected = 0.5 * (0.5 * math.log2(0.5 / 0.75) + 0.5 * math.log2(0.5 / 0.25)) + 0.5 * math.log2(1 / 0.75)
    assert jsd(p, q) == pytest.approx(expected)
    assert jsd(p, q) == pytest.approx(jsd(q, p))


@pytest.mark.parametrize("text, abstains", [
    ("not found", True), ("Unknown.", True), ("The notes do not mention it", True),
    ("cannot be determined from the notes", True), ("", True), ("N/A", True),
    ("4817263", False), ("Maria Okafor", False), ("Nonetheless Paris", False), ("The unknowns", False),
])
def test_abstentions(text, abstains):
    assert is_abstention(text) is abstains


def test_change_uses_jsd_for_posteriors_and_f1_for_drafts():
    a = AnswerState("A", 0.9, posterior={"A": 0.9, "B": 0.1})
    b = AnswerState("A", 0.9, posterior={"A": 0.9, "B": 0.1})
    assert change(a, b) == 0.0
    assert change(AnswerState("red fox", 1), AnswerState("the red fox", 1)) == 0.0
    assert change(AnswerState("red fox", 1), AnswerState("blue fox", 1)) == pytest.approx(0.5)


def _drafts(*answers, confidence=0.999):
    return [AnswerState(a, confidence, eligible=not is_abstention(a)) for a in answers]


def test_stability_windows_over_the_last_min_t_w_states():
    assert stability(_drafts("x"), 3) is None  # one state: no change observed yet
    assert stability(_drafts("p", "q"), 3) == 1.0
    assert stability(_drafts("p", "q", "q"), 3) == 0.5
    assert stability(_drafts("p", "q", "q", "q"), 3) == 0.0  # window of 3 states: q, q, q
    assert stability(_drafts("p", "q", "q", "q"), 4) == pytest.approx(1 / 3)


def test_acs_stop_needs_confidence_stability_and_eligibility():
    assert not acs_stop(_drafts("42"), 0.995, 0.05, 3)  # first state: stability unknown
    assert not acs_stop(_drafts("41", "42"), 0.995, 0.05, 3)  # changed
    assert acs_stop(_drafts("42", "42"), 0.995, 0.05, 3)
    assert not acs_stop(_drafts("42", "42", confidence=0.99), 0.995, 0.05, 3)
    assert not acs_stop(_drafts("not found", "not found", "not found"), 0.995, 0.05, 3)  # abstention
    assert not acs_stop(_drafts("x", "42", "42"), 0.995, 0.05, 3)  # mean change 0.5 over the window
    assert acs_stop(_drafts("x", "42", "42", "42"), 0.995, 0.05, 3)


def test_states_without_an_answer_do_not_count_towards_stability():
    # "not found" twice, then the evidence: two agreeing answers suffice, the abstentions are not changes
    states = _drafts("not found", "not found", "42", "42")
    assert stability(states, 3) == 0.0
    assert acs_stop(states, 0.995, 0.05, 3)
    assert not acs_stop(states[:3], 0.995, 0.05, 3)  # one answer so far: stability unknown
    assert stability(_drafts("not found", "41", "not found", "42"), 3) == 1.0  # 41 -> 42 still moves


def test_posterior_renormalises_top_logprobs_over_the_options():
    top = {"B": math.log(0.6), " B": math.log(0.1), "A": math.log(0.2), "The": math.log(0.05)}
    post = posterior_from_top(top, ["A", "B", "C", "D"])
    assert post == pytest.approx({"A": 0.2 / 0.9, "B": 0.7 / 0.9, "C": 0.0, "D": 0.0})
    assert posterior_from_top({"The": -0.1}, ["A", "B"]) == {"A": 0.5, "B": 0.5}


def test_random_stop_is_fixed_by_the_seed_and_in_range():
    steps = [random_stop_step(10, seed) for seed in range(50)]
    assert steps == [random_stop_step(10, seed) for seed in range(50)]
    assert min(steps) >= 1 and max(steps) <= 10 and len(set(steps)) > 3


def test_gate_replies():
    assert parse_verbalized("Confidence: 87") == 87.0
    assert parse_verbalized("150") == 100.0 and parse_verbalized("none") is None
    assert parse_end("END") and parse_end("end, the notes suffice") and not parse_end("CONTINUE")
    assert not parse_end("CONTINUE until the END")


def test_options_from_the_question_or_the_flag():
    q, opts = parse_options("Who hid the letter? A) Anne B) Elinor C) Marianne D) Lucy")
    assert q == "Who hid the letter?" and opts == [("A", "Anne"), ("B", "Elinor"), ("C", "Marianne"), ("D", "Lucy")]
    assert parse_options("Who hid it?", ["A) Anne", "B) Elinor"])[1] == [("A", "Anne"), ("B", "Elinor")]
    assert parse_options("Who hid it?", ["Anne", "Elinor"])[1] == [("A", "Anne"), ("B", "Elinor")]
    assert parse_options("What is plan A? It failed.")[1] == []


def test_calibration_picks_the_most_saving_safe_theta_and_reports_held_out_figures(tmp_path):
    from lcread.acs.calibrate import Trajectory, calibrate, calibrated_theta, evaluate, save
    from lcread.acs.rules import AnswerState

    def reading(i, evidence, early_conf):
        # before the evidence: a wrong answer held at early_conf; from the evidence on: right and sure
        states = [AnswerState("A", early_conf, {"A": early_conf, "B": 1 - early_conf}) for _ in range(evidence - 1)]
        states += [AnswerState("B", 0.999, {"A": 0.001, "B": 0.999}) for _ in range(6 - evidence + 1)]
        return Trajectory(f"t{i}", "likelihood", evidence, [100] * 6, [10] * 6, states,
                       [False] * (evidence - 1) + [True] * (6 - evidence + 1))

    readings = [reading(i, 1 + i % 3, 0.9 if i % 4 == 0 else 0.6) for i in range(12)]
    chosen, sweep, held = calibrate(readings, target=0.05)
    # 0.9-confident wrong answers stop early at 0.9 and below; every θ from 0.93 saves the same: the highest
    assert chosen == 0.999
    assert [p.premature for p in sweep if p.theta < 0.9] != [0.0] * len([p for p in sweep if p.theta < 0.9])
    assert held.premature == 0.0 and held.accuracy == 1.0 and held.saving > 0
    full = evaluate(readings, 1.01)
    assert full.saving < 0 and full.accuracy == 1.0  # never stopping pays every probe on top of reading all
    save("local", "likelihood", chosen, held)
    assert calibrated_theta("local", "likelihood") == (0.999, "calibrated")  # the user's, over the shipped one
    assert calibrated_theta("local", "letters") is None and calibrated_theta("openai/other", "likelihood") is None
    theta, source = calibrated_theta("local", "draft·min")  # the embedded model's, shipped with lcread
    assert source == "shipped calibration" and 0 < theta <= 1
