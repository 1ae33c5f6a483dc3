"""The ranks on a table's curve in fewer passes (issue 15) are the old ones, bit for bit.

The oracle is the code before the rewrite (``absrank_reference``): ``Eq28`` with its bracket
spelt out, the linear tail's constants recomputed per call, pieces selected by index arrays,
``v = v1`` copied. Hypothesis draws tables (ties, a plateau at ``f*``, a registered ``f_max``,
sizes around the exact range), every tail, transform and kind of value (at knots, next to
them, at and below ``f*``, above ``y_N`` and ``f_max``, errors), in any order. Also the
struct-packed float conversion against ``np.asarray``.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.domain import absrank
from app.domain.absrank import RankContext
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.validation import float64_array
from tests.unit.domain.absrank_reference import reference_ranks

F_OPT = 1.0
FIELDS = ("log10_v", "v", "log10_lo", "log10_hi")
OPTIONS = (
    {},
    {"budget": 1000},
    {"runs": 5, "aggregate": "median"},
    {"runs": 4, "aggregate": "order", "order": 3},
    {"runs": 7, "aggregate": "worst"},
    {"values_are": "error"},
    {"budget": 30, "values_are": "error"},
)


def _table(seed: int, n: int, atom: float, ties: bool, k: int) -> absrank.TableData:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, n)
    order = np.argsort(x**2)
    values = F_OPT + 100.0 * x[order] ** 2
    if atom:
        values[: max(1, int(atom * n))] = F_OPT
    if ties:
        values[n // 2 :] = np.round(values[n // 2 :], 1)
    k = min(k, n)
    return absrank.build_table_data(values, x[order][:k, None], k_exact=k)


def _queries(data: absrank.TableData, seed: int, size: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = data.values
    picks = v[rng.integers(0, v.size, size)]
    special = [F_OPT, F_OPT - 1.0, F_OPT + 1e-9, F_OPT + 1e-15, 0.5, 400.0, 600.0, 500.0]
    x = np.concatenate(
        [
            rng.uniform(v[0], v[-1], size),
            np.round(rng.uniform(v[0], v[-1], size), 1),
            picks,
            np.nextafter(picks, np.inf),
            np.nextafter(picks, -np.inf),
            [float(v[0]), float(v[-1]), float(v[min(1, v.size - 1)])],
            special,
        ]
    )
    rng.shuffle(x)
    return x


def _same(got: absrank.RankResult, want: absrank.RankResult) -> None:
    for name in FIELDS:  # bit for bit, -0.0 and NaN included
        assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name
    assert got.method.tolist() == want.method.tolist()
    assert got.tail == want.tail


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    n=st.sampled_from([3, 40, 700, 5000]),
    atom=st.sampled_from([0.0, 0.05]),
    ties=st.booleans(),
    k=st.sampled_from([2, 64, 512]),
    f_max=st.sampled_from([None, 101.0, 500.0]),
    tail=st.sampled_from(["auto", "power", "linear", "paper"]),
    confidence=st.sampled_from([0.95, 0.5]),
    options=st.sampled_from(OPTIONS),
    size=st.integers(1, 300),
    take=st.integers(1, 2000),
)
def test_ranks_on_a_table_are_the_old_ones(
    seed: int,
    n: int,
    atom: float,
    ties: bool,
    k: int,
    f_max: float | None,
    tail: str,
    confidence: float,
    options: dict[str, object],
    size: int,
    take: int,
) -> None:
    data = _table(seed, n, atom, ties, k)
    ctx = RankContext(F_OPT, f_max, atom, 0.5, "test", np.zeros(1), -np.ones(1), np.ones(1))
    try:
        curve = absrank.table_curve(data, ctx, tail=tail, confidence=confidence)
    except (NotApplicable, InvalidInput):
        event("tail refused")
        return  # a tail refused here is refused by both (the same choice code)
    event(f"compared: {tail} tail, {curve.info.lower} lower")
    x = _queries(data, seed + 1, size)[:take]
    if options.get("values_are") == "error":
        x = np.abs(x - F_OPT)
    want = reference_ranks(x, data, ctx, tail=tail, confidence=confidence, **options)  # type: ignore[arg-type]
    got = absrank.ranks_from_curve(x, curve, **options)  # type: ignore[arg-type]
    _same(got, want)
    # sorted, as the service ranks them (pieces are slices there, masks above)
    order = np.argsort(x)
    _same(absrank.ranks_from_curve(x[order], curve, **options), _take(want, order))  # type: ignore[arg-type]


def _take(res: absrank.RankResult, order: np.ndarray) -> absrank.RankResult:
    return absrank.RankResult(
        res.log10_v[order],
        res.v[order],
        res.method[order],
        res.log10_lo[order],
        res.log10_hi[order],
        res.tail,
    )


def test_the_limits_read_at_once_are_the_memoised_ones() -> None:
    data = _table(5, 3000, 0.0, True, 256)
    eq = absrank._eq28.Eq28(data, 0.05, F_OPT)  # type: ignore[attr-defined]
    rng = np.random.default_rng(2)
    for _ in range(5):  # misses first, then hits, then both
        j = rng.integers(0, data.values.size, 200)
        exact = rng.random(200) < 0.5
        lower, upper = eq.cp.at(j, exact)
        nxt = np.minimum(j + 1, data.values.size - 1)
        assert lower.tobytes() == eq.cp.lower(j).tobytes()
        want = np.where(exact, eq.cp.upper(j), eq.cp.upper_below(nxt))
        assert upper.tobytes() == want.tobytes()


@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False),
            st.integers(-(2**64), 2**64),
            st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.0**53 + 1, 1.7976931348623157e308]),
        ),
        max_size=200,
    )
)
def test_float64_array_is_asarray(values: list[float]) -> None:
    got = float64_array(values)
    want = np.asarray(values, dtype=np.float64)
    assert got.dtype == np.float64
    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert not got.flags.writeable  # read-only: nothing downstream writes into the request


def test_float64_array_takes_numbers_only() -> None:
    # a validated request holds floats; text is refused, not parsed as np.asarray would
    with pytest.raises(struct.error):
        float64_array(["1.0"])  # type: ignore[list-item]
    with pytest.raises((OverflowError, struct.error)):  # np.asarray: OverflowError
        float64_array([2**1100])
    assert float64_array([]).shape == (0,)


def _binom_sf_one_matrix(ln_p: np.ndarray, r: int, k: int) -> np.ndarray:
    """``ln_binom_sf`` before it summed in blocks: every value's terms in one matrix."""
    from scipy import special

    from app.domain.absrank._logspace import _log_sum_rows, ln1m_exp

    if k <= 0:
        return np.zeros_like(ln_p)
    j = np.arange(k, r + 1, dtype=np.float64)
    ln_comb = special.gammaln(r + 1.0) - special.gammaln(j + 1.0) - special.gammaln(r - j + 1.0)
    ln_q = ln1m_exp(ln_p)
    with np.errstate(invalid="ignore"):
        fail = np.where(j[None, :] == r, 0.0, (r - j)[None, :] * ln_q[:, None])
        terms = ln_comb[None, :] + j[None, :] * ln_p[:, None] + fail
    out: np.ndarray = np.minimum(_log_sum_rows(terms), 0.0)
    return out


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(0, 300),
    r=st.integers(1, 400),
    k_at=st.floats(0.0, 1.0),
    block=st.sampled_from([1, 7, 64, 1 << 18]),
)
def test_the_binomial_tail_in_blocks_is_the_one_matrix_sum(
    seed: int, n: int, r: int, k_at: float, block: int
) -> None:
    """``ln_binom_sf`` sums each value's terms in blocks of values (bounded memory, a control
    checked between them): bit for bit the sums of one matrix, at every block size, with
    ``p`` = 0, 1 and tiny among the values."""
    from app.domain.absrank import _logspace

    rng = np.random.default_rng(seed)
    ln_p = np.log(rng.uniform(0.0, 1.0, n)) * rng.choice([1.0, 30.0, 1e3], n)
    if n >= 3:
        ln_p[:3] = [-np.inf, 0.0, -1e-300]
    k = min(r, max(1, round(k_at * r)))
    want = _binom_sf_one_matrix(ln_p, r, k)
    old = _logspace.BINOM_BLOCK_TERMS
    _logspace.BINOM_BLOCK_TERMS = block
    try:
        got = _logspace.ln_binom_sf(ln_p, r, k)
    finally:
        _logspace.BINOM_BLOCK_TERMS = old
    assert got.tobytes() == want.tobytes()
