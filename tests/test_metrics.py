import pytest

from lcread.bench.metrics import (Outcome, Reference, accuracy, accuracy_regret, mean_over_read, premature_rate,
                                  savings_capture, token_saving)

# Three tasks of 10 chunks, 100 tokens per chunk; evidence in chunks 3, 5 and 10.
REFS = [Reference(3, 1000, 300, True), Reference(5, 1000, 500, True), Reference(10, 1000, 1000, False)]
POLICY = [Outcome(4, 400, True), Outcome(2, 200, False), Outcome(10, 1000, False)]


def test_premature_and_over_read():
    assert premature_rate(POLICY, REFS) == pytest.approx(1 / 3)  # task 2 stopped at 2 < 5
    assert mean_over_read(POLICY, REFS) == pytest.approx((1 + 0) / 2)  # tasks 1 and 3


def test_savings_capture_counts_premature_stops_as_zero_and_skips_nothing_to_save():
    # task 1: saved 600 of an available 700; task 2: premature, 0; task 3: nothing available, left out
    assert savings_capture(POLICY, REFS) == pytest.approx((600 / 700 + 0) / 2)


def test_accuracy_regret_and_saving():
    assert accuracy(POLICY) == pytest.approx(1 / 3)
    assert accuracy_regret(POLICY, REFS) == pytest.approx(2 / 3 - 1 / 3)
    assert token_saving(POLICY, REFS) == pytest.approx(1 - 1600 / 3000)


def test_full_reading_is_the_zero_point():
    full = [Outcome(10, 1000, r.full_correct) for r in REFS]
    assert (premature_rate(full, REFS), savings_capture(full, REFS), accuracy_regret(full, REFS),
            token_saving(full, REFS)) == (0.0, 0.0, 0.0, 0.0)
