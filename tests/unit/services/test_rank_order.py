"""The values path ranks the values sorted and puts the ranks back in the order sent
(``_ranks_in_order``, for speed): the same ranks as ``ranks_from_curve`` on the values as sent
(the oracle), for every tail, transform and kind of value (ties, at and below f*, tails)."""

from __future__ import annotations

import numpy as np
import pytest

from app.domain import absrank
from app.domain.absrank import RankContext
from app.services.ranks._values import _ranks_in_order

F_OPT = 1.0
FIELDS = ("log10_v", "v", "log10_lo", "log10_hi")


def _curve(tail: str) -> absrank.V1Curve:
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.0, 1.0, 6000)
    order = np.argsort(x**2)
    values = F_OPT + 100.0 * x[order] ** 2  # v1(t) = sqrt((t - f*)/100): beta = 1/2
    values[3000:] = np.round(values[3000:], 1)  # ties above the median
    data = absrank.build_table_data(values, x[order][:512, None], k_exact=512)
    ctx = RankContext(F_OPT, None, 0.0, 0.5, "test", np.zeros(1), -np.ones(1), np.ones(1))
    return absrank.table_curve(data, ctx, tail=tail)


def _queries(curve: absrank.V1Curve) -> np.ndarray:
    rng = np.random.default_rng(11)
    inside = rng.uniform(F_OPT, 120.0, 400)
    special = [F_OPT, F_OPT - 1.0, F_OPT + 1e-9, 0.5, 400.0, 1.01, 1.01, 50.0, 50.0]
    x = np.concatenate([inside, np.round(inside[:100], 1), special, inside[:50]])
    rng.shuffle(x)
    return x


@pytest.mark.parametrize("tail", ["auto", "power", "linear", "paper"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"budget": 1000},
        {"runs": 5, "aggregate": "median"},
        {"runs": 4, "aggregate": "order", "order": 3},
        {"values_are": "error"},
    ],
)
def test_sorted_ranks_are_the_ranks_as_sent(tail: str, options: dict[str, object]) -> None:
    curve = _curve(tail)
    x = _queries(curve)
    if options.get("values_are") == "error":
        x = np.abs(x - F_OPT)
    want = absrank.ranks_from_curve(x, curve, **options)  # type: ignore[arg-type]
    got = _ranks_in_order(x, curve, sort=True, **options)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert got.method.tolist() == want.method.tolist()
    assert got.tail == want.tail
    assert [w.message for w in got.warnings] == [w.message for w in want.warnings]
