"""Sobol chunks, regions and chunk evaluation (SPEC §3.2, §3.5)."""

import numpy as np
import pytest
from scipy.stats import qmc

from app.domain import sampling
from app.domain.errors import InvalidInput
from app.domain.sampling import (
    SOBOL_SEED_KEYWORD,
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
