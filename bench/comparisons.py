"""``POST /v1/comparisons`` end to end: 20 and 200 algorithms × 30 problems, absolute ranks.

Data: 30 BBOB functions in 2-D (f1-f24 instance 1, f1-f6 instance 2); algorithm ``a``'s value
on a problem is the best ``f`` of ``2 + a mod 10`` uniform random points of the domain
(``numpy.random.default_rng(seed)``),
floored at the 1 % quantile of ``f`` (from 10,000 uniform points, seed 1), so every value
lies well within the domain table's samples and no nested-region ladder is needed (the bench
checks that none was built). One run per
cell, ``reduction="best"``, ``budget=1``, every other option the default: Nemenyi, the default
NIIA report (each pair alone, up to ``max_niia_default_pairs``: 190 pairs at k = 20; skipped
at k = 200, 19,900 pairs, as a user gets it), ``regions="auto"``.

The service runs in process (``fastapi.testclient.TestClient``: the whole HTTP stack) on a fresh
SQLite file; the default tables (``2^log2n`` points) are built by the first request
(``workers.inline.InlineDispatcher``, not timed), then:

* **warm**: later requests in the same process, each with new values (a stored comparison is
  answered from the database: every timed request is computed);
* **cold**: the first request in a fresh child process, after its imports and ``create_app``
  (both timed separately and not counted), tables ready in the database;
* **answer size**: bytes of the JSON answer;
* **old / new**: today's NIIA report and absolute pairwise tests against the implementation
  they replaced (tests/unit/services/_reference_niia.py, the test oracle) on the answer's own
  matrices, in this process;
* **peer**: the bare scipy computation of the same statistics without NIIA: ``rankdata`` +
  ``friedmanchisquare`` + scikit-posthocs' Nemenyi on the values, and ``scipy.stats.wilcoxon``
  + ``binomtest`` for every pair of the absolute ranks with a Holm adjustment; the request's
  time over the peer's is printed (the request also ranks every cell on its table, builds
  the answer and stores it).

Usage::

    .venv/bin/python bench/comparisons.py            # 5 warm repeats, 3 cold children
    .venv/bin/python bench/comparisons.py --quick    # 3 warm, 1 cold, the old pairwise at k=50

Benchmarks report, they do not assert.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c
import numpy as np

FUNCTIONS = [f"bbob/f{f}/i1/d2" for f in range(1, 25)] + [f"bbob/f{f}/i2/d2" for f in range(1, 7)]
GOAL_WARM_20 = 0.5
GOAL_COLD_20 = 2.0
GOAL_WARM_200 = 5.0
GOAL_SIZE_200 = 2_000_000


def settings_fields(url: str, log2n: int) -> dict[str, Any]:
    return {
        "environment": "test",
        "database_url": url,
        "queue_url": "memory://",
        "table_default_log2n": log2n,
        "table_chunk_log2": min(log2n, 14),
        "table_k_exact": 512,
        "table_n_knots": 1024,
        "max_request_bytes": 64 * 1024 * 1024,
    }


def body(k: int, seed: int) -> dict[str, Any]:
    from app.domain.functions import get_function

    rng = np.random.default_rng(seed)
    lines = ["algorithm,problem,run,value"]
    for p in FUNCTIONS:
        fn = get_function(p)
        # a floor at the 1 % quantile of f keeps every value far above the table's lowest
        # sample (its 1/2^log2n quantile): no ladder is needed
        floor = _floor(p)
        for a in range(k):
            x = fn.lower + (fn.upper - fn.lower) * rng.random((2 + a % 10, fn.dim))
            value = max(float(np.min(fn.evaluate(x))), floor)
            lines.append(f"A{a:03d},{p},0,{value!r}")
    return {"csv": "\n".join(lines) + "\n", "reduction": "best", "budget": 1}


_FLOORS: dict[str, float] = {}


def _floor(function_id: str) -> float:
    if function_id not in _FLOORS:
        from app.domain.functions import get_function

        fn = get_function(function_id)
        rng = np.random.default_rng(1)
        x = fn.lower + (fn.upper - fn.lower) * rng.random((10_000, fn.dim))
        _FLOORS[function_id] = float(np.quantile(fn.evaluate(x), 0.01))
    return _FLOORS[function_id]


def app_client(settings: Any) -> Any:
    from fastapi.testclient import TestClient

    from app.main import create_app
    from workers.inline import InlineDispatcher

    d = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=d)
    d.app = app
    return TestClient(app)


def post(client: Any, payload: dict[str, Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    r = client.post("/v1/comparisons", json=payload)
    dt = time.perf_counter() - t0
    if r.status_code != 201:
        raise SystemExit(f"POST /v1/comparisons: {r.status_code} {r.text[:500]}")
    return dt, r


def child(url: str, log2n: int, k: int, seed: int) -> None:
    """A fresh process: imports, create_app, then the first request (printed as JSON)."""
    t0 = time.perf_counter()
    from app.config import Settings

    settings = Settings(**settings_fields(url, log2n))  # type: ignore[arg-type]
    payload = body(k, seed)
    imports = time.perf_counter() - t0
    t0 = time.perf_counter()
    with app_client(settings) as client:
        started = time.perf_counter() - t0
        dt, r = post(client, payload)
    print(
        json.dumps(
            {
                "imports_s": imports,
                "create_app_s": started,
                "first_request_s": dt,
                "bytes": len(r.content),
                "niia": r.json()["niia"]["status"],
            }
        )
    )


def cold(url: str, log2n: int, k: int, seed: int) -> dict[str, Any]:
    out = subprocess.run(
        [
            c.PYTHON,
            __file__,
            "--child",
            url,
            "--log2n",
            str(log2n),
            "--k",
            str(k),
            "--seed",
            str(seed),
        ],
        cwd=c.ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def peer(matrix: np.ndarray, v: np.ndarray) -> float:
    import scikit_posthocs as sp
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    t0 = time.perf_counter()
    stats.rankdata(matrix, axis=1)
    stats.friedmanchisquare(*matrix.T)
    sp.posthoc_nemenyi_friedman(matrix)
    k = v.shape[1]
    p = []
    for i in range(k):
        for j in range(i + 1, k):
            d = v[:, i] - v[:, j]
            p.append(
                stats.wilcoxon(v[:, i], v[:, j], zero_method="pratt").pvalue
                if np.any(d != 0)
                else 1.0
            )
            n_pos, n_neg = int(np.sum(d > 0)), int(np.sum(d < 0))
            if n_pos + n_neg:
                stats.binomtest(n_pos, n_pos + n_neg)
    multipletests(p, method="holm")
    return time.perf_counter() - t0


def old_vs_new(answer: dict[str, Any], settings: Any, old_k: int | None) -> dict[str, Any]:
    """Today's NIIA report and pairwise tests against the reference, on the answer's data."""
    from app.schemas.comparisons import ComparisonCreate
    from app.services import comparisons as svc
    from app.services._comparison_absolute import AbsoluteTested, pairwise_absolute
    from tests.unit.services import _reference_niia as ref

    matrix = np.asarray(answer["matrix"], dtype=np.float64)
    v = np.power(10.0, np.asarray(answer["absolute"]["log10_v"], dtype=np.float64))
    if old_k is not None:
        matrix, v = matrix[:, :old_k], v[:, :old_k]
    k = matrix.shape[1]
    names = tuple(f"A{i}" for i in range(k))
    bodyc = ComparisonCreate(csv="algorithm,problem,run,value\n", reduction="best")
    out: dict[str, Any] = {"k": k}
    t0 = time.perf_counter()
    _, sig, tests = pairwise_absolute(v, bodyc, None, settings, names)
    out["pairwise_new_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref.reference_pairwise_absolute(v, bodyc, None, settings, names)
    out["pairwise_old_s"] = time.perf_counter() - t0
    if k * (k - 1) // 2 <= settings.max_niia_default_pairs:
        subsets = [[i, j] for i in range(k) for j in range(i + 1, k)]
        t0 = time.perf_counter()
        post = svc._posthoc(matrix, bodyc, None)
        new_rel = svc._niia_side(subsets, svc._relative_niia(matrix, bodyc, None, post), names)
        tested = AbsoluteTested(v, sig, tests)
        new_abs = svc._niia_side(subsets, svc.absolute_niia(tested, bodyc, None, settings), names)
        out["niia_new_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        old_rel = ref.reference_niia_side(
            matrix, subsets, ref.reference_relative_analyse(bodyc, None), names
        )
        old_abs = ref.reference_niia_side(
            v, subsets, ref.reference_absolute_analyse(bodyc, None, settings), names
        )
        out["niia_old_s"] = time.perf_counter() - t0
        out["niia_identical"] = new_rel == old_rel and new_abs == old_abs
        out["niia_speedup"] = out["niia_old_s"] / out["niia_new_s"]
    out["pairwise_speedup"] = out["pairwise_old_s"] / out["pairwise_new_s"]
    return out


def measure(quick: bool) -> dict[str, Any]:
    from app.config import Settings
    from app.services._comparison_absolute import ladder_stored
    from tests.support import migrate

    log2n = 12 if quick else 14
    warm_repeats, cold_repeats, repeats_200 = (3, 1, 1) if quick else (5, 3, 3)
    root = Path(tempfile.mkdtemp(prefix="absrank-bench-cmp-"))
    url = f"sqlite:///{root / 'cmp.db'}"
    migrate(url)
    settings = Settings(**settings_fields(url, log2n))  # type: ignore[arg-type]
    res: dict[str, Any] = {"log2n": log2n, "problems": len(FUNCTIONS)}
    with app_client(settings) as client:
        t0 = time.perf_counter()
        post(client, body(20, 0))  # builds the 30 default tables
        res["setup_tables_s"] = time.perf_counter() - t0
        res["ladders_built"] = sum(
            ladder_stored(client.app.state.sessionmaker, f) for f in FUNCTIONS
        )
        warm20, warm200 = [], []
        answer20 = answer200 = None
        for i in range(warm_repeats):
            dt, r = post(client, body(20, 100 + i))
            warm20.append(dt)
            answer20 = r
        for i in range(repeats_200):
            dt, r = post(client, body(200, 200 + i))
            warm200.append(dt)
            answer200 = r
    assert answer20 is not None
    assert answer200 is not None
    a20, a200 = answer20.json(), answer200.json()
    res["warm_20_s"] = warm20
    res["warm_200_s"] = warm200
    res["bytes_20"] = len(answer20.content)
    res["bytes_200"] = len(answer200.content)
    res["niia_20"] = a20["niia"]["status"]
    res["niia_200"] = a200["niia"]["status"]
    res["cold_20"] = [cold(url, log2n, 20, 300 + i) for i in range(cold_repeats)]
    res["cold_200"] = [cold(url, log2n, 200, 400)]
    m20 = np.asarray(a20["matrix"], dtype=np.float64)
    v20 = np.asarray(a20["absolute"]["v"], dtype=np.float64)
    m200 = np.asarray(a200["matrix"], dtype=np.float64)
    v200 = np.asarray(a200["absolute"]["v"], dtype=np.float64)
    res["peer_20_s"] = [peer(m20, v20) for _ in range(warm_repeats)]
    res["peer_200_s"] = [peer(m200, v200)]
    res["old_vs_new_20"] = old_vs_new(a20, settings, None)
    res["old_vs_new_200"] = old_vs_new(a200, settings, 50 if quick else None)
    return res


def report(res: dict[str, Any]) -> None:
    w20, w200 = c.median(res["warm_20_s"]), c.median(res["warm_200_s"])
    c200 = res["cold_200"][0]["first_request_s"]
    p20, p200 = c.median(res["peer_20_s"]), c.median(res["peer_200_s"])
    print(
        f"tables: 30 x 2^{res['log2n']} built in {res['setup_tables_s']:.1f} s (not timed); "
        f"ladders built: {res['ladders_built']}"
    )
    print(
        f"20 x 30 warm  {c.spread(res['warm_20_s'])} s  = {w20 / p20:.1f}x the bare scipy "
        f"peer ({p20 * 1e3:.0f} ms), goal < {GOAL_WARM_20} s; NIIA {res['niia_20']}"
    )
    print(
        f"20 x 30 cold  {c.spread([x['first_request_s'] for x in res['cold_20']])} s "
        f"(imports {res['cold_20'][0]['imports_s']:.1f} s, create_app "
        f"{res['cold_20'][0]['create_app_s']:.2f} s not counted), goal < {GOAL_COLD_20} s"
    )
    print(
        f"200 x 30 warm {c.spread(res['warm_200_s'])} s = {w200 / p200:.2f}x the peer "
        f"({p200:.1f} s), cold {c200:.2f} s, goal < {GOAL_WARM_200} s; NIIA {res['niia_200']}"
    )
    print(
        f"answer size: {res['bytes_20']:,} B at 20, {res['bytes_200']:,} B at 200 "
        f"(goal < {GOAL_SIZE_200:,} B)"
    )
    for key in ("old_vs_new_20", "old_vs_new_200"):
        o = res[key]
        line = (
            f"old/new k={o['k']}: pairwise tests {o['pairwise_old_s']:.2f} s / "
            f"{o['pairwise_new_s']:.3f} s = {o['pairwise_speedup']:.0f}x"
        )
        if "niia_speedup" in o:
            line += (
                f"; NIIA report {o['niia_old_s']:.2f} s / {o['niia_new_s']:.3f} s = "
                f"{o['niia_speedup']:.0f}x, identical: {o['niia_identical']}"
            )
        print(line)


def goals(res: dict[str, Any]) -> dict[str, bool]:
    return {
        "warm_20": c.median(res["warm_20_s"]) < GOAL_WARM_20,
        "cold_20": c.median([x["first_request_s"] for x in res["cold_20"]]) < GOAL_COLD_20,
        "warm_200": c.median(res["warm_200_s"]) < GOAL_WARM_200,
        "size_200": res["bytes_200"] < GOAL_SIZE_200,
        "niia_identical": bool(res["old_vs_new_20"].get("niia_identical")),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--log2n", type=int, default=12, help=argparse.SUPPRESS)
    ap.add_argument("--k", type=int, default=20, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.log2n, args.k, args.seed)
        return 0
    c.exit_on_sigterm()
    t0 = time.perf_counter()
    res = measure(args.quick)
    res.update({"mode": "quick" if args.quick else "full", "machine": c.machine()})
    report(res)
    res["seconds"] = time.perf_counter() - t0
    c.finish("comparisons", res, None, goals)
    for name, ok in res["goals_met"].items():
        print(f"  {name}: {c.verdict(ok)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
