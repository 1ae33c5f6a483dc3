"""Sobol chunks, regions and chunk evaluation (SPEC §3.2, §3.5)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.stats import qmc

from app.domain import sampling
from app.domain.errors import InvalidInput
from app.domain.functions import get_function
from app.domain.sampling import (
    SOBOL_SEED_KEYWORD,
    _lowest,
    chunk_plan,
    evaluate_chunk,
    merge_chunk_results,
    region_box,
    scale_to_box,
    sobol_chunk,
)

N = 2**12
DIM = 3
SEED = 20240611


def _sphere(X: np.ndarray) -> np.ndarray:
    return np.sum(X * X, axis=1)


@pytest.mark.parametrize("log2_size", range(4, 11))
def test_chunks_equal_one_shot_byte_for_byte(log2_size: int) -> None:
    whole = qmc.Sobol(DIM, scramble=True, rng=SEED).random_base2(12)
    size = 2**log2_size
    parts = [sobol_chunk(DIM, SEED, j, size) for j in range(chunk_plan(N, size))]
    assert np.concatenate(parts).tobytes() == whole.tobytes()


def test_chunk_zero_never_fast_forwards(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = qmc.Sobol.fast_forward

    def spy(self: qmc.Sobol, n: int) -> qmc.Sobol:
        calls.append(int(n))
        return original(self, n)

    monkeypatch.setattr(qmc.Sobol, "fast_forward", spy)
    sobol_chunk(DIM, SEED, 0, 64)
    assert calls == []
    sobol_chunk(DIM, SEED, 3, 64)
    assert calls == [192]


def test_seed_keyword_is_rng_and_differs_from_legacy_seed() -> None:
    assert SOBOL_SEED_KEYWORD == "rng"
    ours = sobol_chunk(DIM, 7, 0, 16)
    legacy = qmc.Sobol(DIM, scramble=True, seed=7).random_base2(4)
    assert not np.array_equal(ours, legacy)


def test_chunk_plan_validates() -> None:
    assert chunk_plan(2**20, 2**14) == 64
    for n, size in [(1000, 16), (1024, 24), (16, 32), (2**31, 2**10)]:
        with pytest.raises(InvalidInput):
            chunk_plan(n, size)


def test_sobol_chunk_rejects_non_power_of_two() -> None:
    with pytest.raises(InvalidInput, match="power of 2") as err:
        sobol_chunk(2, 1, 1, 24)
    assert err.value.field == "size"


def test_scale_to_box() -> None:
    U = np.array([[0.0, 0.5], [0.25, 1.0]])
    X = scale_to_box(U, np.array([-5.0, 0.0]), np.array([5.0, 2.0]))
    np.testing.assert_array_equal(X, [[-5.0, 1.0], [-2.5, 2.0]])
    with pytest.raises(InvalidInput):
        scale_to_box(U, np.array([-5.0]), np.array([5.0]))


def test_region_box_intersects_domain() -> None:
    lo, hi = np.full(3, -5.0), np.full(3, 5.0)
    x = np.array([0.0, 4.0, -4.5])
    r_lo, r_hi = region_box(lo, hi, x, 1.0)
    np.testing.assert_array_equal(r_lo, [-1.0, 3.0, -5.0])
    np.testing.assert_array_equal(r_hi, [1.0, 5.0, -3.5])
    full_lo, full_hi = region_box(lo, hi, None, None)
    np.testing.assert_array_equal(full_lo, lo)
    np.testing.assert_array_equal(full_hi, hi)


@pytest.mark.parametrize(
    ("x_opt", "delta", "field"),
    [
        (None, 1.0, "x_opt"),
        (np.zeros(3), 0.0, "delta"),
        (np.zeros(3), -1.0, "delta"),
        (np.zeros(3), float("nan"), "delta"),
        (np.array([0.0, 0.0, 7.0]), 1.0, "delta"),  # empty intersection
    ],
)
def test_region_box_errors(x_opt: np.ndarray | None, delta: float, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        region_box(np.full(3, -5.0), np.full(3, 5.0), x_opt, delta)
    assert err.value.field == field


def test_region_box_per_coordinate() -> None:
    lo, hi = np.full(3, -5.0), np.full(3, 5.0)
    x = np.array([0.0, 4.0, -4.5])
    r_lo, r_hi = region_box(lo, hi, x, [1.0, 0.5, 2.0])
    np.testing.assert_array_equal(r_lo, [-1.0, 3.5, -5.0])
    np.testing.assert_array_equal(r_hi, [1.0, 4.5, -2.5])
    for same in ([0.3] * 3, np.full(3, 0.3), (0.3, 0.3, 0.3)):  # equal entries: the cube's bytes
        v_lo, v_hi = region_box(lo, hi, x, same)
        s_lo, s_hi = region_box(lo, hi, x, 0.3)
        assert v_lo.tobytes() == s_lo.tobytes()
        assert v_hi.tobytes() == s_hi.tobytes()
    assert region_box(lo, hi, x, np.float64(0.3))[0].tobytes() == s_lo.tobytes()
    assert region_box(lo, hi, x, np.array(0.3))[0].tobytes() == s_lo.tobytes()


@pytest.mark.parametrize(
    "delta",
    [
        [1.0, 1.0],  # wrong length
        [1.0, 0.0, 1.0],
        [1.0, -1.0, 1.0],
        [1.0, float("nan"), 1.0],
        [1.0, True, 1.0],
        [1.0, "1", 1.0],
        np.ones((3, 1)),
        "abc",
        True,
    ],
)
def test_region_box_per_coordinate_errors(delta: object) -> None:
    with pytest.raises(InvalidInput) as err:
        region_box(np.full(3, -5.0), np.full(3, 5.0), np.zeros(3), delta)  # type: ignore[arg-type]
    assert err.value.field == "delta"


def test_evaluate_chunk_keeps_lowest_by_value_then_index() -> None:
    lo, hi = np.full(2, -1.0), np.full(2, 1.0)

    def rounded(X: np.ndarray) -> np.ndarray:  # many ties
        return np.round(_sphere(X), 1)

    res = evaluate_chunk(rounded, lo, hi, SEED, 2, 64, 10)
    X = scale_to_box(sobol_chunk(2, SEED, 2, 64), lo, hi)
    np.testing.assert_array_equal(res.values, rounded(X))
    expected = sorted(range(64), key=lambda i: (res.values[i], i))[:10]
    assert res.low_index.tolist() == expected
    assert res.low_index.dtype == np.int64
    np.testing.assert_array_equal(res.low_x, X[expected])


def test_evaluate_chunk_rejects_non_finite_values() -> None:
    def bad(X: np.ndarray) -> np.ndarray:
        out = _sphere(X)
        out[5] = np.nan
        return out

    with pytest.raises(InvalidInput, match="Sobol index 69") as err:
        evaluate_chunk(bad, np.zeros(2), np.ones(2), 1, 1, 64, 4)
    assert err.value.field == "values"


def test_merge_equals_one_shot() -> None:
    lo, hi = np.full(DIM, -2.0), np.full(DIM, 3.0)
    size, k = 256, 40
    chunks = [evaluate_chunk(_sphere, lo, hi, SEED, j, size, k) for j in range(chunk_plan(N, size))]
    values, low_x, low_values = merge_chunk_results(chunks, k)
    X = scale_to_box(qmc.Sobol(DIM, scramble=True, rng=SEED).random_base2(12), lo, hi)
    np.testing.assert_array_equal(values, _sphere(X))
    order = np.argsort(_sphere(X), kind="stable")[:k]
    np.testing.assert_array_equal(low_x, X[order])
    np.testing.assert_array_equal(low_values, _sphere(X)[order])


def test_module_exports() -> None:
    assert set(sampling.__all__) >= {"sobol_chunk", "region_box", "evaluate_chunk", "ChunkResult"}


# ------------------------------------------ the fast paths give the reference bytes ----------
# Recorded tables' bytes depend on these two steps: each is compared with the straightforward
# implementation it replaced, kept here as the reference.


def _ref_scale(U: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo + U * (hi - lo)


def _ref_lowest(values: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(values, kind="stable")[:k].astype(np.int64)


#: few distinct values, both zeros: ties everywhere
_TIED = st.sampled_from([-3.0, -1.0, -0.0, 0.0, 0.0, 1e-300, 0.5, 2.0, 2.0, 7.25])
_ANY = st.floats(-1e6, 1e6, allow_subnormal=True)


@st.composite
def _chunks(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    n = draw(st.integers(1, 300))
    values = draw(hnp.arrays(np.float64, n, elements=st.one_of(_TIED, _TIED, _ANY)))
    return values, draw(st.integers(0, n + 2))


@given(_chunks())
def test_lowest_equals_full_stable_argsort(chunk: tuple[np.ndarray, int]) -> None:
    values, k = chunk
    got = _lowest(values, min(k, values.size))
    assert got.dtype == np.int64
    assert got.tobytes() == _ref_lowest(values, k).tobytes()
    assert got.tolist() == sorted(range(values.size), key=lambda i: (values[i], i))[:k]


@pytest.mark.parametrize("decimals", [0, 1, 3, None])
@pytest.mark.parametrize("k", [1, 17, 4096, 65535])
def test_lowest_equals_full_stable_argsort_on_chunk_sizes(decimals: int | None, k: int) -> None:
    rng = np.random.default_rng(k)
    values = rng.standard_normal(2**16) ** 2 * rng.choice([-1.0, 1.0], 2**16)
    if decimals is not None:
        values = np.round(values, decimals)  # ties, and -0.0 among them
        assert np.any(np.signbit(values) & (values == 0))
    assert _lowest(values, k).tobytes() == _ref_lowest(values, k).tobytes()


_BOUND = st.one_of(st.sampled_from([-0.0, 0.0, -5.0, 5.0, -1e-300, 1e300]), st.floats(-1e9, 1e9))


@st.composite
def _boxes(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d, n = draw(st.integers(1, 6)), draw(st.integers(1, 40))
    unit = st.one_of(
        st.sampled_from([0.0, 0.5, 1.0 - 2**-53]), st.floats(0.0, 1.0, exclude_max=True)
    )
    U = draw(hnp.arrays(np.float64, (n, d), elements=unit))
    a = draw(hnp.arrays(np.float64, d, elements=_BOUND))
    b = draw(hnp.arrays(np.float64, d, elements=_BOUND))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    hi = np.where(hi > lo, hi, lo + 1.0)
    return U, lo, hi


@given(_boxes())
def test_scale_to_box_bytes_equal_reference(box: tuple[np.ndarray, np.ndarray, np.ndarray]):
    U, lo, hi = box
    before = U.tobytes()
    assert scale_to_box(U, lo, hi).tobytes() == _ref_scale(U, lo, hi).tobytes()
    assert U.tobytes() == before  # the caller's points are not scaled in place


@pytest.mark.parametrize(
    ("function_id", "delta"),
    [
        ("bbob/f1/i1/d10", None),
        ("bbob/f15/i1/d10", None),
        ("bbob/f21/i3/d5", None),
        ("bbob/f7/i2/d3", 0.5),  # steps: ties
        ("classic/step/d2", None),  # a plateau: thousands of tied zeros
        ("classic/sphere/d3", 0.25),
        ("classic/schwefel226/d2", 40.0),
    ],
)
def test_chunks_equal_reference_on_registered_functions(function_id: str, delta: float | None):
    fn = get_function(function_id)
    lo, hi = region_box(fn.lower, fn.upper, fn.x_opt, delta)
    size, k = 2**10, 100
    for index in (0, 3):
        res = evaluate_chunk(fn.evaluate, lo, hi, SEED, index, size, k)
        X = _ref_scale(sobol_chunk(lo.size, SEED, index, size), lo, hi)
        values = np.asarray(fn.evaluate(X), dtype=np.float64)
        low = _ref_lowest(values, k)
        assert res.values.tobytes() == values.tobytes()
        assert res.low_index.tobytes() == low.tobytes()
        assert res.low_x.tobytes() == X[low].tobytes()
