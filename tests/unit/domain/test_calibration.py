"""Seeded calibration: under H0 the tests reject at about their level, never more.

Exact tests on continuous data are valid at any level: P(p <= α) <= α. With 600 simulated data
sets the rejection rate at α = 0.05 and 0.10 must stay below α + 3 standard errors and, for
continuous data, not far below α (a test that never rejects would pass the first check).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from app.domain.paired import sign_test, wilcoxon_signed_rank
from app.domain.permutation import permutation_test
from app.domain.ranktests import friedman
from app.domain.twosample import ks_2samp, rank_sum

pytestmark = pytest.mark.slow

N_SETS = 600


def _rates(p_of: Callable[[np.random.Generator], float], seed: int) -> dict[float, float]:
    rng = np.random.default_rng(seed)
    p = np.array([p_of(rng) for _ in range(N_SETS)])
    assert np.all((p >= 0) & (p <= 1))
    return {alpha: float(np.mean(p <= alpha)) for alpha in (0.05, 0.10)}


CASES: dict[str, tuple[Callable[[np.random.Generator], float], float]] = {
    # name: (one simulated p-value under H0, smallest acceptable share of alpha)
    "wilcoxon-exact": (lambda r: wilcoxon_signed_rank(r.normal(size=12)).p_value, 0.5),
    "sign": (lambda r: sign_test(r.normal(size=15)).p_value, 0.3),  # discrete: conservative
    "rank-sum-exact": (lambda r: rank_sum(r.normal(size=8), r.normal(size=9)).p_value, 0.5),
    "ks-exact": (lambda r: ks_2samp(r.normal(size=10), r.normal(size=12)).p_value, 0.3),
    "permutation-median-exact": (
        lambda r: permutation_test(r.normal(size=9), r.normal(size=10)).p_value,
        0.5,
    ),
    "permutation-mean-monte-carlo": (
        lambda r: (
            permutation_test(
                r.normal(size=15),
                r.normal(size=15),
                statistic="mean",
                method="monte_carlo",
                n_resamples=199,
                seed=int(r.integers(2**31)),
            ).p_value
        ),
        0.5,
    ),
    "friedman": (lambda r: friedman(r.normal(size=(12, 4))).p_value, 0.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejection_rate_under_h0(name: str) -> None:
    p_of, floor = CASES[name]
    for alpha, rate in _rates(p_of, seed=sorted(CASES).index(name)).items():
        se = math.sqrt(alpha * (1 - alpha) / N_SETS)
        assert rate <= alpha + 3 * se, (name, alpha, rate)
        assert rate >= floor * alpha - 3 * se, (name, alpha, rate)
