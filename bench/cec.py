"""CEC functions (SPEC §2): absrank's batched numpy kernels vs opfunu's per-point ``evaluate``.

For a representative set of CEC 2017 / 2020 / 2022 functions (a simple, a hybrid and a
composition function per suite, in two dimensions each) and of CEC 2005 functions (simple,
rotated, multimodal and composition ones, at D = 10 and 30) both implementations evaluate seeded
uniform points of the function's domain (``[-100, 100]^D`` for CEC 2017-2022) in the same
process, interleaved: absrank a batch of ``N_OURS`` points through ``BenchmarkFunction.evaluate``
(``evaluate_noisy`` with a seeded generator for a noisy id; validation included), opfunu
``n_peer`` points one ``evaluate(x)`` call at a time (it has no batch call). Printed: points per
second for both and the RATIO ours / opfunu. Each repeat times ours, opfunu, ours (ours = the
mean of the two batches), so a load change hits both sides; the per-repeat ratios are printed
as median [min-max] and the verdict is on their median. Goal: >= 30x for every pair.

Pairs follow the functions, not the numbers: opfunu numbers CEC2017 as the updated report does
(code F(k) = report F(k-1) for k >= 3), so ``cec2017/f5`` (Rastrigin) pairs with ``F42017``.
opfunu is the peer for speed only; its values differ from the organisers' code on many
functions (the last column says whether they agree on the timed points, for information).

CEC2005 entries (``cec2005/f<k>/d<D>`` vs opfunu's ``F<k>2005``, same numbering) are in
``CEC2005_PAIRS``. Raw figures go to ``bench/results/cec-<quick|full>.json``. Usage::

    .venv/bin/python bench/cec.py            # full: 9 repeats, 300 opfunu points
    .venv/bin/python bench/cec.py --quick    # 3 repeats, 100 opfunu points
"""

from __future__ import annotations

import argparse
import importlib
import os
import time
from typing import Any

import _common as c
import numpy as np

GOAL_RATIO = 30.0
N_OURS = 10_000

# (absrank id, opfunu class as "<module in opfunu.cec_based>.<class>")
PAIRS: list[tuple[str, str]] = [
    ("cec2017/f5/d10", "cec2017.F42017"),  # shifted and rotated Rastrigin
    ("cec2017/f5/d30", "cec2017.F42017"),
    ("cec2017/f15/d10", "cec2017.F142017"),  # hybrid 5: bent cigar, HGBat, Rastrigin, Rosenbrock
    ("cec2017/f15/d30", "cec2017.F142017"),
    ("cec2017/f22/d10", "cec2017.F212017"),  # composition 2: Rastrigin, Griewank, Schwefel
    ("cec2017/f22/d30", "cec2017.F212017"),
    ("cec2017/f30/d10", "cec2017.F292017"),  # composition 10: of three hybrids
    ("cec2017/f30/d30", "cec2017.F292017"),
    ("cec2020/f3/d10", "cec2020.F32020"),  # Lunacek bi-Rastrigin
    ("cec2020/f3/d20", "cec2020.F32020"),
    ("cec2020/f5/d10", "cec2020.F52020"),  # hybrid 1: Schwefel, Rastrigin, elliptic
    ("cec2020/f5/d20", "cec2020.F52020"),
    ("cec2020/f8/d10", "cec2020.F82020"),  # composition 1: Rastrigin, Griewank, Schwefel
    ("cec2020/f8/d20", "cec2020.F82020"),
    ("cec2022/f4/d10", "cec2022.F42022"),  # (non-continuous) Rastrigin
    ("cec2022/f4/d20", "cec2022.F42022"),
    ("cec2022/f6/d10", "cec2022.F62022"),  # hybrid 1: bent cigar, HGBat, Rastrigin
    ("cec2022/f6/d20", "cec2022.F62022"),
    ("cec2022/f9/d10", "cec2022.F92022"),  # composition 1: five unimodal components
    ("cec2022/f9/d20", "cec2022.F92022"),
]

# CEC2005 (run after PAIRS): absrank's noisy ids (f17, f24) are timed through
# ``evaluate_noisy`` with a seeded generator, opfunu's F172005 / F242005 draw their own noise;
# ``_noisefree`` ids time the same function with the noise switched off.
CEC2005_PAIRS: list[tuple[str, str]] = [
    ("cec2005/f1/d10", "cec2005.F12005"),  # shifted sphere
    ("cec2005/f1/d30", "cec2005.F12005"),
    ("cec2005/f3/d10", "cec2005.F32005"),  # shifted rotated high-conditioned elliptic
    ("cec2005/f3/d30", "cec2005.F32005"),
    ("cec2005/f6/d10", "cec2005.F62005"),  # shifted Rosenbrock
    ("cec2005/f6/d30", "cec2005.F62005"),
    ("cec2005/f9/d10", "cec2005.F92005"),  # shifted Rastrigin
    ("cec2005/f9/d30", "cec2005.F92005"),
    ("cec2005/f10/d10", "cec2005.F102005"),  # shifted rotated Rastrigin
    ("cec2005/f10/d30", "cec2005.F102005"),
    ("cec2005/f11/d10", "cec2005.F112005"),  # shifted rotated Weierstrass
    ("cec2005/f11/d30", "cec2005.F112005"),
    ("cec2005/f12/d10", "cec2005.F122005"),  # Schwefel's problem 2.13
    ("cec2005/f12/d30", "cec2005.F122005"),
    ("cec2005/f15/d10", "cec2005.F152005"),  # hybrid composition 1 (no rotation)
    ("cec2005/f15/d30", "cec2005.F152005"),
    ("cec2005/f17/d10", "cec2005.F172005"),  # rotated hybrid composition 1, noisy
    ("cec2005/f17_noisefree/d30", "cec2005.F172005"),
    ("cec2005/f21/d10", "cec2005.F212005"),  # rotated hybrid composition 3
    ("cec2005/f21/d30", "cec2005.F212005"),
    ("cec2005/f24/d10", "cec2005.F242005"),  # rotated hybrid composition 4, noisy sphere piece
    ("cec2005/f24_noisefree/d30", "cec2005.F242005"),
]


def _peer(spec: str, dim: int) -> Any:
    module, name = spec.split(".")
    cls = getattr(importlib.import_module(f"opfunu.cec_based.{module}"), name)
    return cls(ndim=dim)


def measure(function_id: str, peer_spec: str, repeats: int, n_peer: int) -> dict[str, Any]:
    """Points per second of absrank (batch) and opfunu (per point) on the same points."""
    from app.domain.functions import get_function

    ours = get_function(function_id)
    peer = _peer(peer_spec, ours.dim)
    x = np.random.default_rng(20261130).uniform(ours.lower, ours.upper, (N_OURS, ours.dim))
    if ours.noisy:  # its noise from a seeded generator (opfunu draws from numpy's global one)
        noise = np.random.default_rng(7)

        def evaluate(points: np.ndarray) -> np.ndarray:
            return ours.evaluate_noisy(points, noise)
    else:
        evaluate = ours.evaluate
    evaluate(x[:10])  # warm up both (first call of each)
    peer.evaluate(x[0])
    ours_t, peer_t, ratios, cpu_ratios = [], [], [], []
    peer_values = np.empty(n_peer)
    clock, cpu = time.perf_counter, time.process_time
    for _ in range(repeats):
        # ours, opfunu, ours: this repeat's ours time is the mean of the two batches around the
        # opfunu run, so a load change during the repeat hits both sides alike
        t0, c0 = clock(), cpu()
        values = evaluate(x)
        before, cpu_before = clock() - t0, cpu() - c0
        t0, c0 = clock(), cpu()
        for i in range(n_peer):
            peer_values[i] = peer.evaluate(x[i])
        peer_t.append(clock() - t0)
        cpu_peer = cpu() - c0
        t0, c0 = clock(), cpu()
        evaluate(x)
        ours_t.append((before + clock() - t0) / 2)
        cpu_ours = (cpu_before + cpu() - c0) / 2
        ratios.append((N_OURS / ours_t[-1]) / (n_peer / peer_t[-1]))
        cpu_ratios.append((N_OURS / cpu_ours) / (n_peer / cpu_peer))
    ours_pps = N_OURS / c.median(ours_t)
    peer_pps = n_peer / c.median(peer_t)
    ratio = c.median(ratios)
    head = values[:n_peer]
    agree = bool(np.all(np.abs(head - peer_values) <= 1e-9 * np.maximum(1.0, np.abs(head))))
    row = {
        "opfunu": peer_spec,
        "ours_seconds": ours_t,
        "opfunu_seconds": peer_t,
        "n_ours": N_OURS,
        "n_opfunu": n_peer,
        "ours_points_per_s": ours_pps,
        "opfunu_points_per_s": peer_pps,
        "ratios": ratios,  # one per repeat (interleaved)
        "ratio": ratio,  # their median: the verdict
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "cpu_ratios": cpu_ratios,  # the same from process CPU time (information)
        "cpu_ratio": c.median(cpu_ratios),
        "goal_met": ratio >= GOAL_RATIO,
        "opfunu_agrees": agree,
    }
    print(
        f"  {function_id:<17} vs {peer_spec:<16} ours {ours_pps:>12,.0f} pt/s  "
        f"opfunu {peer_pps:>9,.0f} pt/s  ratio {ratio:6.1f}x [{min(ratios):.1f}-"
        f"{max(ratios):.1f}] (CPU {row['cpu_ratio']:.1f}x) {c.verdict(row['goal_met'])}"
        f"  (opfunu values {'agree' if agree else 'differ'})"
    )
    return row


def goals(results: dict[str, Any]) -> dict[str, bool]:
    """One flag per pair: ratio >= 30x."""
    return {f"{fid}_ratio_30x": row["goal_met"] for fid, row in results["pairs"].items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="3 repeats, 100 opfunu points")
    p.add_argument("--repeats", type=int, default=None, help="repeats (default 9 / 3 quick)")
    p.add_argument("--only", default=None, metavar="SUITE", help="only ids of this suite")
    args = p.parse_args(argv)
    c.exit_on_sigterm()
    repeats = args.repeats or (3 if args.quick else 9)
    n_peer = 100 if args.quick else 300
    results: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "machine": c.machine(),
        "goal_ratio": GOAL_RATIO,
        "pairs": {},
    }
    pairs = [(f, s) for f, s in PAIRS + CEC2005_PAIRS if args.only in (None, f.split("/")[0])]
    print(
        f"CEC kernels: absrank batch of {N_OURS} points vs opfunu one point per call "
        f"({n_peer} points), {repeats} repeats, medians"
    )
    t0 = time.perf_counter()
    for function_id, peer_spec in pairs:
        results["pairs"][function_id] = measure(function_id, peer_spec, repeats, n_peer)
    ratios = [row["ratio"] for row in results["pairs"].values()]
    if ratios:
        print(
            f"  median ratio per pair: min {min(ratios):.1f}x, median {c.median(ratios):.1f}x "
            f"(goal >= 30x); lowest single repeat "
            f"{min(r['ratio_min'] for r in results['pairs'].values()):.1f}x "
            f"(load {os.getloadavg()[0]:.2f})"
        )
    results["seconds"] = time.perf_counter() - t0
    return c.finish("cec", results, args.only, goals)


if __name__ == "__main__":
    main()
