"""The too-few-problems warning of the rank post-hoc tests (issue 13 item 6).

Reference written here: the standard CD (Demšar 2006) with ``scipy.stats.studentized_range`` (df
= ∞) for Nemenyi and ``scipy.stats.norm`` for Bonferroni–Dunn; the rule fires iff
``CD > (k − 1) / 2``, and ``n_needed`` is the first ``N`` (searched one by one) where it does not.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from scipy import stats

from app.domain.ranktests import low_power_warning, posthoc


@cache
def _unit(k: int, alpha: float, comparison: str) -> float:
    if comparison == "all-pairs":
        crit = float(stats.studentized_range.isf(alpha, k, math.inf)) / math.sqrt(2)
    else:
        crit = float(stats.norm.ppf(1 - alpha / (2 * (k - 1))))
    return crit * math.sqrt(k * (k + 1) / 6)


def _fires(n: int, k: int, alpha: float, comparison: str) -> bool:
    return _unit(k, alpha, comparison) / math.sqrt(n) > (k - 1) / 2


def _needed(k: int, alpha: float, comparison: str) -> int:
    n = 1
    while _fires(n, k, alpha, comparison):
        n += 1
    return n


@pytest.mark.parametrize("comparison", ["all-pairs", "vs-control"])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
@pytest.mark.parametrize("k", [2, 3, 5, 8, 11])
def test_rule_against_the_formula(k: int, alpha: float, comparison: str) -> None:
    needed = _needed(k, alpha, comparison)
    for n in sorted({1, 2, 3, needed - 1, needed, needed + 1, 50, 200} - {0}):
        w = low_power_warning(n, k, alpha, comparison)
        assert (w is not None) == _fires(n, k, alpha, comparison), (n, k, alpha)
        if w is not None:
            cd = _unit(k, alpha, comparison) / math.sqrt(n)
            assert w.critical_difference == pytest.approx(cd, rel=1e-9)
            assert w.threshold == (k - 1) / 2
            assert w.n_needed == needed
            assert (w.n_problems, w.n_algorithms, w.alpha) == (n, k, alpha)
            assert w.chi2_rough == (not (n > 10 and k > 5))
            assert ("chi-square" in w.message) == w.chi2_rough
            for part in (f"N = {n}", f"k = {k}", f"alpha = {alpha:g}", f"N >= {needed}"):
                assert part in w.message


def test_three_problems_eleven_algorithms_fires_and_names_the_numbers() -> None:
    rng = np.random.default_rng(0)
    values = rng.random((3, 11)) + np.linspace(0, 2, 11)  # perfectly ordered on each problem
    values = np.sort(values, axis=1)
    res = posthoc(values, method="nemenyi", alpha=0.05)
    w = res.low_power
    assert w is not None
    cd = _unit(11, 0.05, "all-pairs") / math.sqrt(3)
    assert res.critical_difference == pytest.approx(cd, rel=1e-9)
    assert w.critical_difference == pytest.approx(8.716, abs=1e-3)
    assert w.n_needed == _needed(11, 0.05, "all-pairs") == 10
    assert "8.72" in w.message
    # a perfect order on every problem: only pairs 9 or 10 ranks apart (of at most 10) differ
    apart = [(p.i, p.j) for p in res.pairs if p.significant]
    assert apart == [(0, 9), (0, 10), (1, 10)]
    assert all(abs(p.rank_difference) > w.threshold for p in res.pairs if p.significant)


def test_many_problems_do_not_fire_whatever_the_procedure() -> None:
    rng = np.random.default_rng(1)
    values = rng.random((60, 11))
    for method in ("nemenyi", "holm", "shaffer"):
        assert posthoc(values, method=method).low_power is None
    assert posthoc(values, method="holm", control=0).low_power is None
    few = posthoc(values[:4], method="holm", control=0)
    assert few.low_power is not None
    assert few.low_power.comparison == "vs-control"
    assert "Bonferroni–Dunn" in few.low_power.message


def test_the_low_power_rule_uses_the_requested_cd_convention() -> None:
    """Under ``cd_convention='jing-liu'`` the warning states Jing & Liu's CD (z at 1 − α/(2k)),
    the one the post-hoc answer reports, not Nemenyi's."""
    values = np.array([[1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0]])
    res = posthoc(values, method="nemenyi", alpha=0.05, cd_convention="jing-liu")
    assert res.low_power is not None
    z = stats.norm.isf(0.05 / (2 * 3))
    assert res.low_power.critical_difference == pytest.approx(z * math.sqrt(3 * 4 / 18), rel=1e-12)
    assert res.low_power.critical_difference == pytest.approx(res.critical_difference, rel=1e-12)
    assert "Jing & Liu" in res.low_power.message
