"""Absolute ranks of the mean of r runs (app/domain/aggregates/): FFT chains vs direct convolution.

In process, on a warm table curve (the 3-D sphere on [-1, 1]^3, N = 2^14 Sobol points, power
tail off so every value is convolved): ``aggregate_ranks(..., aggregate="mean")``

(a) 200 values at r = 25 (spread over the mean's range, v from ~1e-15 to ~1): ours (tilted FFT
    chains, all values batched) vs the peer, today's direct convolution (``numpy.convolve``,
    the oracle: ``_mean.DIRECT_RUNS`` raised) on a subset of the same values (per value).
    Goal: 200 values < 1 s.
(b) r = 256 per value (4 values; peer: 1 value). Goal: < 50 ms per value.
(c) the numpy FFT limit for the same grids: the bare ``numpy.fft.rfft``/``irfft`` calls the
    chains need (every squaring and product of the 3 curves' chains at n, n/2, n/4 cells, one
    batch per step, no bounds, no reads), timed in the same run: ours / limit.

Cold = the first call in this (fresh) process; warm = the median of the repeats. Every answer is
checked against the peer's: ``|Δ log10 v|`` within the peer's numerical error estimate and the
new bracket containing the peer's. Raw figures: ``bench/results/aggregates-<quick|full>.json``.
Benchmarks report, they do not assert. Usage::

    .venv/bin/python bench/aggregates.py            # full: 3 repeats, peer on 20 values (a)
    .venv/bin/python bench/aggregates.py --quick    # 2 repeats, peer on 6 values (a)
"""

from __future__ import annotations

import argparse
import dataclasses
import time
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


def _rank(curve: Any, t: np.ndarray, r: int, direct: bool) -> tuple[Any, float]:
    from app.domain.aggregates import _mean, aggregate_ranks

    old = _mean.DIRECT_RUNS
    _mean.DIRECT_RUNS = 10**9 if direct else old
    try:
        t0 = time.perf_counter()
        res = aggregate_ranks(t, curve, budget=1, runs=r, aggregate="mean")
        return res, time.perf_counter() - t0
    finally:
        _mean.DIRECT_RUNS = old


def _agree(new: Any, old: Any, idx: np.ndarray) -> dict[str, Any]:
    """New answers at ``idx`` against the peer's (all of ``old``)."""
    jn, jo = new.tail.as_json()["aggregate"], old.tail.as_json()["aggregate"]
    err = np.array([x or 0.0 for x in jo["numerical_error_log10"]])
    d = np.abs(new.log10_v[idx] - old.log10_v)
    bn = np.array([jn["bracket_log10"][i] for i in idx.tolist()], dtype=float)
    bo = np.array(jo["bracket_log10"], dtype=float)
    contains = bool(np.all((bn[:, 0] <= bo[:, 0] + 1e-12) & (bn[:, 1] >= bo[:, 1] - 1e-12)))
    return {
        "max_abs_delta_log10": float(d.max()),
        "max_delta_over_error": float(np.max(d / np.maximum(err, 1e-300))),
        "within_error": bool(np.all(d <= np.maximum(err, 1e-12))),
        "bracket_contains_peer_bracket": contains,
        "max_bracket_widening_log10": float(np.max((bo[:, 0] - bn[:, 0]) + (bn[:, 1] - bo[:, 1]))),
    }


def _fft_limit(res: Any, r: int, repeats: int) -> float:
    """Seconds of the bare numpy FFT calls of the chains of ``res``'s values (final grids)."""
    from scipy import fft as sfft

    cells = res.tail.as_json()["aggregate"]["cells"]
    squarings, products = r.bit_length() - 1, bin(r).count("1") - 1
    times = []
    for _ in range(repeats):
        total = 0.0
        for n in sorted(set(cells)):
            rows = 3 * cells.count(n)
            for size in (n + 1, n // 2 + 1, n // 4 + 1):
                n_fft = int(sfft.next_fast_len(2 * size - 1, real=True))
                x = np.random.default_rng(0).random((rows, size))
                t0 = time.perf_counter()
                for _ in range(squarings):
                    f = np.fft.rfft(x, n_fft, axis=-1)
                    x = np.fft.irfft(f * f, n_fft, axis=-1)[:, :size]
                    x /= x.max(axis=-1, keepdims=True)
                for _ in range(products):
                    g = np.fft.rfft(x, n_fft, axis=-1)
                    x = np.fft.irfft(g * f, n_fft, axis=-1)[:, :size]
                total += time.perf_counter() - t0
        times.append(total)
    return c.median(times)


def part(
    label: str, curve: Any, t: np.ndarray, r: int, peer_n: int, repeats: int, first: bool
) -> dict[str, Any]:
    print(f"({label}) r = {r}, {t.size} values (peer: {peer_n} of them)", flush=True)
    cold = None
    if first:
        _, cold = _rank(curve, t[:1], r, direct=False)  # first call in this process
    ours = [_rank(curve, t, r, direct=False)[1] for _ in range(repeats)]
    res, _ = _rank(curve, t, r, direct=False)
    idx = np.linspace(0, t.size - 1, peer_n).round().astype(int)
    peer = [_rank(curve, t[idx], r, direct=True) for _ in range(max(1, repeats - 1))]
    ours_pv, peer_pv = c.median(ours) / t.size, c.median([p[1] for p in peer]) / peer_n
    limit = _fft_limit(res, r, repeats)
    out = {
        "r": r,
        "values": int(t.size),
        "peer_values": peer_n,
        "cold_first_value_s": cold,
        "ours_total_s": ours,
        "ours_per_value_s": ours_pv,
        "peer_per_value_s": peer_pv,
        "speedup_per_value": peer_pv / ours_pv,
        "fft_limit_total_s": limit,
        "ours_over_fft_limit": c.median(ours) / limit,
        "cells": sorted(set(res.tail.as_json()["aggregate"]["cells"])),
        "agreement": _agree(res, peer[0][0], idx),
    }
    print(
        f"  ours {c.spread(ours)} s total = {ours_pv * 1e3:.2f} ms/value; peer (direct) "
        f"{peer_pv * 1e3:.1f} ms/value: speedup {out['speedup_per_value']:.1f}x; numpy FFT "
        f"limit {limit:.3f} s: ours/limit {out['ours_over_fft_limit']:.2f}"
        + (f"; cold first value {cold * 1e3:.0f} ms" if cold is not None else "")
    )
    a = out["agreement"]
    print(
        f"  vs peer: max |Δ log10 v| {a['max_abs_delta_log10']:.2g} "
        f"({a['max_delta_over_error']:.2g} of its error estimate), bracket contains the "
        f"peer's: {a['bracket_contains_peer_bracket']} (widened by at most "
        f"{a['max_bracket_widening_log10']:.2g})",
        flush=True,
    )
    return out


def goals(results: dict[str, Any]) -> dict[str, bool]:
    a, b = results["a"], results["b"]
    return {
        "200_values_r25_under_1s": c.median(a["ours_total_s"]) * 200 / a["values"]
        < GOAL_200_AT_25_S,
        "r256_under_50ms_per_value": b["ours_per_value_s"] < GOAL_256_PER_VALUE_S,
        "answers_within_error_and_bracket": all(
            x["agreement"]["within_error"] and x["agreement"]["bracket_contains_peer_bracket"]
            for x in (a, b)
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
        "a", curve, np.linspace(0.3, 1.6, 200), 25, 6 if args.quick else 20, repeats, True
    )
    results["b"] = part("b", curve, np.linspace(0.85, 1.15, 4), 256, 1, repeats, False)
    results["seconds"] = time.perf_counter() - t0
    g = goals(results)
    print(
        f"\ngoals: 200 values at r = 25 < {GOAL_200_AT_25_S} s: "
        f"{c.verdict(g['200_values_r25_under_1s'])}; r = 256 < "
        f"{GOAL_256_PER_VALUE_S * 1e3:.0f} ms per value: "
        f"{c.verdict(g['r256_under_50ms_per_value'])}; answers within the peer's error and "
        f"bracket: {c.verdict(g['answers_within_error_and_bracket'])}"
    )
    c.finish("aggregates", results, None, goals)


if __name__ == "__main__":
    main()
