"""The fitting maths the embedding and hybrid tiers calibrate with (no model needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from routing_core.scorers import calibration
from routing_core.scorers.calibration import (
    FLOOR_CAP,
    FLOOR_REFUSED,
    MARGIN_CAP,
    MENU_SHARE,
    MIN_CALIBRATION,
    calibrate_logits,
    fit_floor,
    fit_margin,
    fit_temperature,
    held_out_examples,
    log_loss,
    softmax_rows,
)


def sampled(temperature: float, n: int = 4000, routes: int = 8, seed: int = 3):
    """Cosine-like logits and labels drawn from softmax(logits / temperature)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.4, 0.05, size=(n, routes))
    probabilities = softmax_rows(logits, temperature)
    labels = np.array([rng.choice(routes, p=p) for p in probabilities], np.int64)
    return logits, labels


@pytest.mark.parametrize("temperature", [0.01, 0.03, 0.1])
def test_fit_temperature_recovers_the_temperature_the_labels_were_drawn_at(temperature):
    logits, labels = sampled(temperature)
    assert fit_temperature(logits, labels) == pytest.approx(temperature, rel=0.1)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.01, 0.03, 0.2]))
def test_the_fitted_temperature_has_a_lower_log_loss_than_its_neighbours(seed, temperature):
    logits, labels = sampled(temperature, n=300, routes=5, seed=seed)
    fitted = fit_temperature(logits, labels)
    low, high = calibration.TEMPERATURE_RANGE
    for other in (fitted * 1.2, fitted / 1.2):
        if low <= other <= high:
            assert log_loss(logits, labels, fitted) <= log_loss(logits, labels, other) + 1e-9


def test_texts_all_classified_right_fit_t_near_the_prior_not_zero():
    """Without the prior, perfectly separated texts ask for the smallest temperature."""
    logits = np.eye(3)[np.arange(30) % 3] * 0.3 + 0.2
    labels = np.arange(30, dtype=np.int64) % 3
    assert fit_temperature(logits, labels) == pytest.approx(calibration.TEMPERATURE_RANGE[0])
    with_prior = fit_temperature(logits, labels, prior=0.03)
    assert 0.015 < with_prior <= 0.03


def test_the_prior_barely_moves_a_temperature_many_texts_fit():
    logits, labels = sampled(0.05)
    free = fit_temperature(logits, labels)
    assert fit_temperature(logits, labels, prior=0.02) == pytest.approx(free, rel=0.03)


def test_fit_floor_refuses_the_share_of_held_out_texts_it_is_set_for():
    rng = np.random.default_rng(0)
    tops = rng.uniform(0.5, 0.99, size=2000)
    rows = np.stack([tops, 1.0 - tops], axis=1)
    floor = fit_floor(rows)
    assert floor is not None
    assert np.mean(tops < floor) == pytest.approx(FLOOR_REFUSED, abs=0.003)


def test_fit_floor_never_rises_above_the_cap_and_needs_a_text():
    assert fit_floor(np.array([[1.0, 0.0]] * 50)) == FLOOR_CAP
    assert fit_floor(np.zeros((0, 3))) is None


def test_fit_margin_gives_a_menu_to_its_share_of_the_texts_above_the_floor():
    rng = np.random.default_rng(1)
    top = rng.uniform(0.5, 0.6, size=3000)
    second = top - rng.uniform(0.0, 0.2, size=3000)
    rows = np.stack([top, second, np.zeros(3000)], axis=1)
    margin = fit_margin(rows, floor=None)
    assert margin is not None
    gaps = np.tanh((top - second) / 2)
    assert np.mean(gaps < margin) == pytest.approx(MENU_SHARE, abs=0.003)


def test_fit_margin_ignores_texts_under_the_floor_and_is_capped():
    tied_but_refused = np.array([[0.3, 0.3]] * 100)
    clear = np.array([[0.9, 0.05]] * 100)
    rows = np.concatenate([tied_but_refused, clear])
    assert fit_margin(rows, floor=0.5) == MARGIN_CAP  # only the clear texts count
    assert fit_margin(rows, floor=None) == 0.0  # the ties are half the texts
    assert fit_margin(np.array([[1.0]] * 50), None) is None  # one route: no near-tie


def test_every_tenth_example_of_each_route_is_held_out():
    assert held_out_examples([25, 9, 10]) == [(0, 9), (0, 19), (2, 9)]


def test_too_few_held_out_texts_keep_the_default_and_fit_no_floor():
    logits, labels = sampled(0.05, n=MIN_CALIBRATION - 1)
    small = calibrate_logits(logits, labels, default=0.03)
    assert (small.calibrated, small.temperature, small.floor, small.margin) == (
        False,
        0.03,
        None,
        None,
    )
    big = calibrate_logits(*sampled(0.05, n=500), default=0.03)
    assert big.calibrated and big.floor is not None and big.temperature != 0.03


def test_softmax_rows_are_distributions_and_a_row_of_nothing_stays_zero():
    rows = softmax_rows(np.array([[0.1, 0.2, 0.3], [-math.inf] * 3]), 0.05)
    assert rows[0].sum() == pytest.approx(1.0) and rows[0].argmax() == 2
    assert rows[1].tolist() == [0.0, 0.0, 0.0]


def test_calibrate_logits_searches_the_bounds_it_is_given():
    # Logits too sure of themselves (labels drawn at T 2, as a product of two halves may
    # be): the hybrid's range finds 2; the cosine range stops at its upper bound, 1.
    rng = np.random.default_rng(5)
    logits = rng.normal(0.0, 3.0, size=(3000, 5))
    probabilities = softmax_rows(logits, 2.0)
    labels = np.array([rng.choice(5, p=p) for p in probabilities], np.int64)
    wide = calibrate_logits(logits, labels, 1.0, (0.25, 4.0))
    assert wide.temperature == pytest.approx(2.0, rel=0.1)
    assert calibrate_logits(logits, labels, 1.0).temperature == pytest.approx(1.0, rel=0.01)


def test_fit_weights_recovers_the_weights_the_labels_were_drawn_at():
    rng = np.random.default_rng(5)
    first, second = rng.normal(size=(2, 3000, 6))
    logits = 1.5 * first + 0.4 * second
    labels = np.array([rng.choice(6, p=p) for p in softmax_rows(logits, 1.0)], np.int64)
    theta = calibration.fit_weights([first, second], labels, (1.0, 1.0))
    assert theta == pytest.approx([1.5, 0.4], abs=0.15)


def test_fit_weights_keeps_texts_every_feature_classifies_right_at_a_finite_weight():
    """Without the prior the loss falls for ever as the weights grow (separable texts)."""
    labels = np.arange(40, dtype=np.int64) % 4
    right = np.log(np.where(np.eye(4)[labels] > 0, 0.9, 0.1 / 3))
    theta = calibration.fit_weights([right, right], labels, (0.5, 0.5))
    # the prior's pull (20 texts at 0.5 each) holds them near 0.64: without it they pass 1.8
    assert np.all(np.isfinite(theta)) and theta.sum() < 1.5
    assert theta[0] == pytest.approx(theta[1])  # the same evidence twice: the same share
