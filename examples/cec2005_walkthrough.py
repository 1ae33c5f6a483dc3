"""Absolute ranks next to relative ranks for published CEC 2005 results (F15–F17, d = 10).

The input is a published table: the mean error ``f(x_best) − f*`` of 11 algorithms over 25 runs of
100,000 evaluations each on CEC 2005 F15, F16 and F17 at d = 10 (García, Molina, Lozano, Herrera
2009, Table 13, as reprinted by Jing & Liu, Table IV). Its CSV is wide: ``algorithm,f15,f16,f17``.

The script turns it into the long format of ``POST /v1/comparisons`` (problem ids
``cec2005/f15/d10`` …), says that every value already is the mean of 25 runs (``value_runs``)
with a budget of 100,000 evaluations per run, and prints, per algorithm, the average relative rank
(Friedman) next to the absolute rank ``v`` of its mean error on each function — the probability that
the mean of 25 runs of uniform random search with the same budget does at least as well — and the
NIIA report: which pairwise conclusions flip when the other nine algorithms are removed.

Usage::

    make run                                        # in another terminal
    .venv/bin/python examples/cec2005_walkthrough.py [path/to/cec2005_d10_mean_errors_f15_f17.csv]

The first request queues the three default tables (N = 2^16 each); the comparison answers
``partial`` until they are built, and the script sends the same request again until it is
complete.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import os
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
CANDIDATES = (HERE.parent / "tests" / "data" / "cec2005_d10_mean_errors_f15_f17.csv",)
RUNS = 25
BUDGET = 100_000


def long_rows(path: Path, dim: int = 10) -> list[dict[str, Any]]:
    """The wide published table as ``POST /v1/comparisons`` rows (one value per cell).

    Parameters
    ----------
    path : Path
        CSV with ``#`` comment lines, a header ``algorithm,f15,f16,…`` and one row per algorithm.
    dim : int
        Dimension of the CEC 2005 functions (the ids ``cec2005/<column>/d<dim>``).

    Returns
    -------
    list of dict
        ``{"algorithm", "problem", "run": 0, "value"}`` rows.
    """
    with path.open(newline="") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    rows = []
    for record in csv.DictReader(lines):
        algorithm = record.pop("algorithm")
        rows += [
            {
                "algorithm": algorithm,
                "problem": f"cec2005/{fid}/d{dim}",
                "run": 0,
                "value": float(v),
            }
            for fid, v in record.items()
        ]
    return rows


def write_long(rows: list[dict[str, Any]], out: Path) -> None:
    """Write ``rows`` as the long CSV ``algorithm,problem,run,value`` (what the CLI reads)."""
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["algorithm", "problem", "run", "value"])
        writer.writeheader()
        writer.writerows(rows)


def compare(client: httpx.Client, rows: list[dict[str, Any]], wait: float) -> dict[str, Any]:
    """POST the comparison until its absolute ranks are complete (tables may still build)."""
    body = {
        "results": rows,
        "reduction": "mean",
        "value_runs": RUNS,
        "budget": BUDGET,
        "values_are": "error",
        "posthoc": "nemenyi",
        "regions": "nested",
        "alpha": 0.05,
    }
    deadline = time.monotonic() + wait
    while True:
        response = client.post("/v1/comparisons", json=body)
        response.raise_for_status()
        out = response.json()
        if out["status"] == "complete" or time.monotonic() > deadline:
            return out
        pending = [p["problem"] for p in out["absolute"].get("pending", [])]
        print(f"tables building for {', '.join(pending)}; asking again in 5 s")
        time.sleep(5)


def report(out: dict[str, Any]) -> str:
    """Relative and absolute ranks side by side, then the NIIA flips."""
    algorithms, problems = out["algorithms"], out["problems"]
    relative = out["relative"]["average_ranks"]
    absolute = out["absolute"]
    lines = [f"comparison {out['id']}: {len(algorithms)} algorithms, {', '.join(problems)}", ""]
    header = f"{'algorithm':<10} {'avg rank':>8}  " + "  ".join(
        f"{p.split('/')[1] + ' log10 v':>13}" for p in problems
    )
    lines.append(header + f"  {'mean v':>9}")
    order = sorted(range(len(algorithms)), key=lambda j: relative[j])
    for j in order:
        cells = []
        for i in range(len(problems)):
            log10_v = absolute["log10_v"][i][j]
            cells.append(f"{'-inf' if log10_v is None else f'{log10_v:.3f}':>13}")
        mean_v = absolute["average_absolute_rank"][j]
        lines.append(
            f"{algorithms[j]:<10} {relative[j]:>8.3f}  " + "  ".join(cells) + f"  {mean_v:>9.3g}"
        )
    lines.append("")
    for side in ("relative", "absolute"):
        subsets = out["niia"][side].get("subsets", [])
        kinds = [k for s in subsets for f in s["flips"] for k in f["kinds"]]
        flipped = out["niia"][side].get("flipped_pairs", [])
        lines.append(
            f"NIIA, {side} ranks: {len(flipped)} of {len(algorithms) * (len(algorithms) - 1) // 2} "
            f"pairs flip when compared alone ({kinds.count('order')} in order, "
            f"{kinds.count('significance')} in significance)"
        )
    methods = sorted({m for row in absolute["method"] for m in row if m})
    lines.append(f"absolute-rank methods used: {', '.join(methods)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None, http: httpx.Client | None = None) -> None:
    """Parse arguments, run the comparison, print the report.

    ``http`` (a client with the service as its base URL) replaces ``--url``.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="?", type=Path, help="the published table (wide CSV)")
    parser.add_argument("--url", default=os.environ.get("ABSRANK_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--wait", type=float, default=600.0, help="seconds to wait for tables")
    parser.add_argument(
        "--write-long",
        type=Path,
        metavar="OUT",
        help="only write the table in long format (algorithm,problem,run,value) to OUT",
    )
    args = parser.parse_args(argv)
    path = args.csv or next((p for p in CANDIDATES if p.is_file()), None)
    if path is None:
        parser.error("give the path of cec2005_d10_mean_errors_f15_f17.csv")
    if args.write_long:
        write_long(long_rows(path), args.write_long)
        return
    session = httpx.Client(base_url=args.url, timeout=120.0) if http is None else http
    with session if http is None else contextlib.nullcontext(session) as client:
        out = compare(client, long_rows(path), args.wait)
    if out["status"] != "complete":
        raise SystemExit(f"tables still building after {args.wait} s; run the script again")
    print(report(out))
    if not math.isfinite(out["absolute"]["average_absolute_rank"][0]):
        raise SystemExit("unexpected: non-finite average absolute rank")


if __name__ == "__main__":
    main()
