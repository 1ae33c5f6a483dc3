"""Absolute ranks of the mean of r runs (app/domain/aggregates/): shared FFT chains vs the
per-value chains they replace and vs direct convolution.

In process, on a warm table curve (the 3-D sphere on [-1, 1]^3, N = 2^14 Sobol points, power
tail off so every value is convolved): ``aggregate_ranks(..., aggregate="mean")`` on four paths,
all in the same run:

* ``ours``: the lattices shared by the request's values (one tilted FFT chain per octave of L,
  tilt bin, curve and level: ``_mean.SHARED_LATTICES``);
* ``before``: the per-value lattices (``SHARED_LATTICES = False``: one chain per value, curve and
  level, all values batched per FFT call; the previous path);
* ``direct``: the per-value lattices convolved directly (``numpy.convolve``, the oracle:
  ``_mean.DIRECT_RUNS`` raised), on a subset of the values (per value);
* ``same-direct``: the shared lattices convolved directly (``FFT_MAX_REL < 0``: every read from
  the direct chain), on the subset: the FFT's rounding alone.

(a) 200 values at r = 25 (v from ~1e-15 to ~1). Goal: 200 values < 1 s.
(b1) r = 256, one value alone; (b) r = 256, 4 values. Goal: < 50 ms per value (both).
Limits: the bare ``numpy.fft.rfft``/``irfft`` calls of the chains each FFT path runs (the shapes
of its ``_fft.power`` calls, recorded; no bounds, no reads, no curve evaluations), timed in the
same run: ours / our limit, before / its limit, and ours / before's limit.

Cold = the first request at that r in this process (a: the first request of the process);
warm = the median of the repeats. Agreement: each path's point inside the other's rigorous
bracket (both brackets hold the true value), ``|Δ log10 v|`` and its ratio to the sum of the two
error estimates; against ``same-direct`` also ``|Δ| <= 1e-9`` and our bracket containing the
direct one. Raw figures: ``bench/results/aggregates-<quick|full>.json``. Benchmarks report, they
do not assert. Usage::

    .venv/bin/python bench/aggregates.py            # full: 3 repeats, peer on 20 values (a)
    .venv/bin/python bench/aggregates.py --quick    # 2 repeats, peer on 6 values (a)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import _common as c
import numpy as np

GOAL_200_AT_25_S = 1.0
GOAL_256_PER_VALUE_S = 0.05


def _curve() -> Any:
    from app.domain import absrank
    from app.domain.sampling import scale_to_box, sobol_chunk

    d = 3
    x = scale_to_box(sobol_chunk(d, 7, 0, 2**14), np.full(d, -1.0), np.full(d, 1.0))
    f = np.sum(x * x, axis=1)
    low = x[np.argsort(f, kind="stable")[:200]]
    table = absrank.build_table_data(f, low, k_exact=512, n_knots=1024)
    ctx = absrank.RankContext(
        f_opt=0.0,
        f_max=3.0,
        atom=0.0,
        beta=1.5,
        beta_derivation="bench: sphere",
        x_opt=np.zeros(d),
        region_lower=np.full(d, -1.0),
        region_upper=np.full(d, 1.0),
    )
    return dataclasses.replace(absrank.table_curve(table, ctx), power=None)


@contextlib.contextmanager
def _path(path: str) -> Iterator[None]:
    """``ours`` (shared lattices), ``before`` (per-value lattices, the previous path), ``direct``
    (per-value lattices convolved directly, the oracle) or ``same-direct`` (the shared lattices
    convolved directly: every read falls back, ``FFT_MAX_REL < 0``)."""
    from app.domain.aggregates import _mean

    saved = (_mean.DIRECT_RUNS, _mean.SHARED_LATTICES, _mean.FFT_MAX_REL)
    if path == "before":
        _mean.SHARED_LATTICES = False
    elif path == "direct":
        _mean.DIRECT_RUNS = 10**9
    elif path == "same-direct":
        _mean.FFT_MAX_REL = -1.0
    try:
        yield
    finally:
        _mean.DIRECT_RUNS, _mean.SHARED_LATTICES, _mean.FFT_MAX_REL = saved


def _rank(curve: Any, t: np.ndarray, r: int, path: str) -> tuple[Any, float]:
    from app.domain.aggregates import aggregate_ranks

    with _path(path):
        t0 = time.perf_counter()
        res = aggregate_ranks(t, curve, budget=1, runs=r, aggregate="mean")
        return res, time.perf_counter() - t0


def _recorded_power_calls(curve: Any, t: np.ndarray, r: int, path: str) -> list[tuple[int, int]]:
    """``(rows, size)`` of every ``_fft.power`` call of one request on ``path``."""
    from app.domain.aggregates import _fft

    calls: list[tuple[int, int]] = []
    real = _fft.power

    def spy(vec: np.ndarray, delta: np.ndarray, runs: int, size: int) -> Any:
        calls.append((int(vec.shape[0]), int(size)))
        return real(vec, delta, runs, size)

    _fft.power = spy
    try:
        _rank(curve, t, r, path)
    finally:
        _fft.power = real
    return calls


def _fft_limit(calls: list[tuple[int, int]], r: int, repeats: int) -> float:
    """Seconds of the bare ``numpy.fft`` calls of these chains (every ``rfft``/``irfft`` of the
    repeated squaring, the same shapes; no bounds, no reads, no curve evaluations)."""
    from scipy import fft as sfft

    squarings, products = r.bit_length() - 1, bin(r).count("1") - 1
    times = []
    for _ in range(repeats):
        total = 0.0
        for rows, size in calls:
            n_fft = int(sfft.next_fast_len(2 * size - 1, real=True))
            x = np.random.default_rng(0).random((rows, size))
            y = x.copy()
            t0 = time.perf_counter()
            for _ in range(squarings):
                f = np.fft.rfft(x, n_fft, axis=-1)
                x = np.fft.irfft(f * f, n_fft, axis=-1)[:, :size]
                x /= x.max(axis=-1, keepdims=True)
            f = np.fft.rfft(x, n_fft, axis=-1)
            for _ in range(products):
                g = np.fft.rfft(y, n_fft, axis=-1)
                y = np.fft.irfft(g * f, n_fft, axis=-1)[:, :size]
            total += time.perf_counter() - t0
        times.append(total)
    return c.median(times)


def _agree(new: Any, old: Any, idx: np.ndarray) -> dict[str, Any]:
    """Answers of ``new`` at ``idx`` against ``old`` (all of it): each point inside the other's
    rigorous bracket, ``|Δ log10 v|`` and its ratio to the sum of both error estimates."""
    jn, jo = new.tail.as_json()["aggregate"], old.tail.as_json()["aggregate"]
    en = np.array([jn["numerical_error_log10"][i] or 0.0 for i in idx.tolist()])
    eo = np.array([x or 0.0 for x in jo["numerical_error_log10"]])
    vn, vo = new.log10_v[idx], old.log10_v
    d = np.abs(vn - vo)
    bn = np.array([jn["bracket_log10"][i] for i in idx.tolist()], dtype=float)
    bo = np.array(jo["bracket_log10"], dtype=float)
    tol = 1e-12
    cross = bool(
        np.all((bo[:, 0] - tol <= vn) & (vn <= bo[:, 1] + tol))
        and np.all((bn[:, 0] - tol <= vo) & (vo <= bn[:, 1] + tol))
    )
    return {
        "max_abs_delta_log10": float(d.max()),
        "max_delta_over_errors": float(np.max(d / np.maximum(en + eo, 1e-300))),
        "points_in_each_others_bracket": cross,
        "bracket_contains_other_bracket": bool(
            np.all((bn[:, 0] <= bo[:, 0] + tol) & (bn[:, 1] >= bo[:, 1] - tol))
        ),
        "max_bracket_width_log10": float(np.max(bn[:, 1] - bn[:, 0])),
        "other_max_bracket_width_log10": float(np.max(bo[:, 1] - bo[:, 0])),
    }


def part(
    label: str, curve: Any, t: np.ndarray, r: int, peer_n: int, repeats: int
) -> dict[str, Any]:
    """``ours`` (cold: the first request at this r in the process; warm: median of repeats) and,
    in the same run, ``before`` (per-value lattices), ``direct`` (per value, on ``peer_n`` of the
    values) and the numpy FFT limits of both FFT paths' chains."""
    print(f"({label}) r = {r}, {t.size} values (direct peer: {peer_n} of them)", flush=True)
    res, cold = _rank(curve, t, r, "ours")
    ours = [_rank(curve, t, r, "ours")[1] for _ in range(repeats)]
    before_res, before_cold = _rank(curve, t, r, "before")
    before = [_rank(curve, t, r, "before")[1] for _ in range(repeats)]
    idx = np.linspace(0, t.size - 1, peer_n).round().astype(int)
    peer = [_rank(curve, t[idx], r, "direct") for _ in range(max(1, repeats - 1))]
    ours_pv, peer_pv = c.median(ours) / t.size, c.median([p[1] for p in peer]) / peer_n
    calls = _recorded_power_calls(curve, t, r, "ours")
    before_calls = _recorded_power_calls(curve, t, r, "before")
    limit, before_limit = _fft_limit(calls, r, repeats), _fft_limit(before_calls, r, repeats)
    same_direct, _ = _rank(curve, t[idx], r, "same-direct")
    out = {
        "r": r,
        "values": int(t.size),
        "peer_values": peer_n,
        "cold_total_s": cold,
        "ours_total_s": ours,
        "ours_per_value_s": ours_pv,
        "before_cold_total_s": before_cold,
        "before_total_s": before,
        "peer_per_value_s": peer_pv,
        "speedup_per_value": peer_pv / ours_pv,
        "speedup_over_before": c.median(before) / c.median(ours),
        "fft_calls": len(calls),
        "fft_rows": sum(x[0] for x in calls),
        "before_fft_rows": sum(x[0] for x in before_calls),
        "fft_limit_total_s": limit,
        "ours_over_fft_limit": c.median(ours) / limit,
        "before_fft_limit_total_s": before_limit,
        "before_over_its_fft_limit": c.median(before) / before_limit,
        "ours_over_before_fft_limit": c.median(ours) / before_limit,
        "cells": [
            min(res.tail.as_json()["aggregate"]["cells"]),
            max(res.tail.as_json()["aggregate"]["cells"]),
        ],
        "agreement": _agree(res, peer[0][0], idx),
        "agreement_before": _agree(res, before_res, np.arange(t.size)),
        "agreement_same_lattice_direct": _agree(res, same_direct, idx),
    }
    print(
        f"  ours: cold {cold:.3f} s, warm {c.spread(ours)} s = {ours_pv * 1e3:.2f} ms/value "
        f"({out['fft_rows']} FFT chains in {len(calls)} calls)\n"
        f"  before (per-value lattices): cold {before_cold:.3f} s, warm {c.spread(before)} s "
        f"({out['before_fft_rows']} chains): ours {out['speedup_over_before']:.1f}x faster\n"
        f"  direct (per value): {peer_pv * 1e3:.1f} ms/value: ours "
        f"{out['speedup_per_value']:.1f}x faster\n"
        f"  numpy FFT limit of our chains {limit:.4f} s: ours/limit "
        f"{out['ours_over_fft_limit']:.2f}; of the per-value chains {before_limit:.3f} s: "
        f"before/its limit {out['before_over_its_fft_limit']:.2f}, ours/that limit "
        f"{out['ours_over_before_fft_limit']:.2f}"
    )
    for name, key in (
        ("direct (per value)", "agreement"),
        ("before", "agreement_before"),
        ("the same lattices convolved directly", "agreement_same_lattice_direct"),
    ):
        a: dict[str, Any] = out[key]  # type: ignore[assignment]
        print(
            f"  vs {name}: max |Δ log10 v| {a['max_abs_delta_log10']:.2g} "
            f"({a['max_delta_over_errors']:.2g} of the two error estimates), points in each "
            f"other's bracket: {a['points_in_each_others_bracket']}, our bracket contains "
            f"theirs: {a['bracket_contains_other_bracket']} (widest "
            f"{a['max_bracket_width_log10']:.2g} vs {a['other_max_bracket_width_log10']:.2g})",
            flush=True,
        )
    return out


def goals(results: dict[str, Any]) -> dict[str, bool]:
    a, b = results["a"], results["b"]
    return {
        "200_values_r25_under_1s": c.median(a["ours_total_s"]) * 200 / a["values"]
        < GOAL_200_AT_25_S,
        "r256_under_50ms_per_value": max(b["ours_per_value_s"], results["b1"]["ours_per_value_s"])
        < GOAL_256_PER_VALUE_S,
        "answers_within_error_and_bracket": all(
            x[key]["points_in_each_others_bracket"]
            for x in (a, b, results["b1"])
            for key in ("agreement", "agreement_before")
        )
        and all(
            x["agreement_same_lattice_direct"]["max_abs_delta_log10"] <= 1e-9
            and x["agreement_same_lattice_direct"]["bracket_contains_other_bracket"]
            for x in (a, b, results["b1"])
        ),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    repeats = 2 if args.quick else 3
    t0 = time.perf_counter()
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": c.machine()}
    curve = _curve()
    results["a"] = part(
        "a", curve, np.linspace(0.3, 1.6, 200), 25, 6 if args.quick else 20, repeats
    )
    results["b1"] = part("b1", curve, np.array([1.0]), 256, 1, repeats)
    results["b"] = part("b", curve, np.linspace(0.85, 1.15, 4), 256, 1, repeats)
    results["seconds"] = time.perf_counter() - t0
    g = goals(results)
    print(
        f"\ngoals: 200 values at r = 25 < {GOAL_200_AT_25_S} s: "
        f"{c.verdict(g['200_values_r25_under_1s'])}; r = 256 < "
        f"{GOAL_256_PER_VALUE_S * 1e3:.0f} ms per value (alone and 4 together): "
        f"{c.verdict(g['r256_under_50ms_per_value'])}; answers in each other's rigorous "
        "bracket (direct and before), within 1e-9 of the same lattices convolved directly: "
        f"{c.verdict(g['answers_within_error_and_bracket'])}"
    )
    c.finish("aggregates", results, None, goals)


if __name__ == "__main__":
    main()
