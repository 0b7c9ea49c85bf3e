"""benchmarks/matched_rate_tau.py: the threshold that keeps another detector's false-alarm rate."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def matched_tau(load_benchmark):
    return load_benchmark("matched_rate_tau").matched_tau


def test_it_flags_exactly_the_allowed_share_of_negatives_and_every_positive_above(matched_tau):
    # negatives 0.2, 0.5, 0.7, 0.9 (four); a rate of 0.25 allows one of them: 0.9 flagged, 0.7 not
    scores = np.array([0.2, 0.5, 0.7, 0.9, 0.75, 0.3])
    labels = np.array([0, 0, 0, 0, 1, 1], dtype=bool)
    tau = matched_tau(scores, labels, 0.25)
    assert 0.7 < tau < 0.7001
    assert int((scores[~labels] >= tau).sum()) == 1
    assert (scores[labels] >= tau).tolist() == [True, False]  # the positive at 0.75 is kept


def test_a_rate_between_two_counts_rounds_down_and_ties_stay_together(matched_tau):
    scores = np.array([0.6, 0.6, 0.4, 0.1])
    labels = np.zeros(4, dtype=bool)
    tau = matched_tau(scores, labels, 0.3)  # 1.2 negatives allowed: one, but the two at 0.6 tie, so neither
    assert int((scores >= tau).sum()) == 0
    assert matched_tau(scores, labels, 0.5) > 0.4 and int((scores >= matched_tau(scores, labels, 0.5)).sum()) == 2


def test_a_rate_of_one_flags_everything(matched_tau):
    scores, labels = np.array([0.3, 0.8, 0.5]), np.array([0, 0, 1], dtype=bool)
    assert matched_tau(scores, labels, 1.0) == 0.3
