"""Suite leaderboard over 200 sets × 24 functions × 15 runs: the service against numpy.

Data: BBOB f1..f24, instance 1, d = 10; 200 result sets stored through the repository into a
temp SQLite database (``--postgres URL``: an existing empty PostgreSQL database instead), each
with 15 runs per function whose values are the best of 20 uniform random points (seeded), so
that they lie within the default tables' samples. The default tables (N = 2^12 here, built
inline before timing) are the ones every rank uses.

Measured, in this process through ``fastapi.testclient.TestClient`` (the whole HTTP stack):

* cold: the first ``GET /v1/leaderboards?suite=bbob&dim=10`` after the app starts (tables read
  from the database and decoded, SQL caches empty);
* warm: the same request repeated (goal < 200 ms);
* peer: the same aggregation done in numpy in-process from arrays already in memory: the median
  of each set's 15 runs per function, then ``searchsorted`` on the same tables' knots and
  ``log10`` of the interpolated v1, then the mean over functions (no intervals, no tails, no
  order-statistic transform, no tests, no JSON).

Ratios are service / numpy (how many times the numpy aggregation's time the answer costs).
Benchmarks print; they do not assert.

Usage::

    .venv/bin/python bench/leaderboard.py [--repeats 15] [--sets 200] [--postgres URL]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import _common as c  # noqa: F401  (puts the repository root on sys.path)
import numpy as np

N_SETS = 200
N_FUNCTIONS = 24
N_RUNS = 15
DIM = 10
SEED = 20261202
GOAL_WARM_S = 0.200


def _seed(sm: object, n_sets: int) -> dict[str, np.ndarray]:
    """Store the sets; return function id → runs array (sets × runs) in f units."""
    from datetime import UTC, datetime

    from app.db import session_scope
    from app.domain.functions import get_function
    from app.models.result_sets import ResultSet
    from app.repositories.result_sets import NewRun, ResultSetRepository

    rng = np.random.default_rng(SEED)
    fids = [f"bbob/f{i}/i1/d{DIM}" for i in range(1, N_FUNCTIONS + 1)]
    values = {}
    for fid in fids:
        fn = get_function(fid)
        x = rng.uniform(fn.lower, fn.upper, size=(n_sets * N_RUNS * 20, DIM))
        values[fid] = fn.evaluate_noise_free(x).reshape(n_sets, N_RUNS, 20).min(axis=2)
    with session_scope(sm) as session:  # type: ignore[arg-type]
        repo = ResultSetRepository(session)
        for k in range(n_sets):
            sid = f"r{k:023x}"
            runs = [
                NewRun(sid, fid, r, "bbob", DIM, float(values[fid][k, r]), 1000)
                for fid in fids
                for r in range(N_RUNS)
            ]
            repo.add(
                ResultSet(
                    id=sid,
                    content_sha256=f"{k:064x}",
                    name=f"alg{k}",
                    version="1",
                    values_are="f",
                    source_format="json",
                    suites=["bbob"],
                    n_functions=len(fids),
                    n_runs=len(runs),
                    has_trajectories=False,
                    notes=[],
                    provenance={},
                    created_at=datetime.now(UTC),
                ),
                runs,
                [],
            )
    return values


def _numpy_peer(values: dict[str, np.ndarray], knots: dict[str, np.ndarray]) -> np.ndarray:
    """Median per set and function, searchsorted on the table's samples, mean log10 v1."""
    logs = []
    for fid, runs in values.items():
        med = np.median(runs, axis=1)
        y = knots[fid]
        i = np.searchsorted(y, med, side="right")
        logs.append(np.log10(np.maximum(i, 1) / (y.size + 1)))
    return np.mean(logs, axis=0)


def _times(get: object, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        get()  # type: ignore[operator]
        out.append(time.perf_counter() - t0)
    return out


def _profile(sm: object, settings: object) -> None:
    import cProfile
    import pstats

    from app.services import suite_leaderboards
    from app.services.table_cache import LadderCaches, TableCaches

    prof = cProfile.Profile()
    prof.enable()
    suite_leaderboards.suite_leaderboard(
        sm,
        settings,
        None,
        suite="bbob",
        dim=DIM,
        budget=None,
        aggregate="median",  # type: ignore[arg-type]
        may_queue_builds=False,
        cache=TableCaches.from_settings(settings),
        ladder_cache=LadderCaches.from_settings(settings),
    )
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--sets", type=int, default=N_SETS)
    ap.add_argument("--postgres", default=None, help="an empty PostgreSQL database URL")
    ap.add_argument("--profile", action="store_true", help="cProfile one warm service call")
    args = ap.parse_args()

    from fastapi.testclient import TestClient

    from app.config import Settings
    from app.main import create_app
    from app.services import tables
    from tests.support import migrate
    from workers.inline import InlineDispatcher

    root = Path(tempfile.mkdtemp(prefix="absrank-lb-"))
    url = args.postgres or f"sqlite:///{root / 'lb.db'}"
    common = {
        "environment": "test",
        "database_url": url,
        "queue_url": "memory://",
        "table_default_log2n": 12,
        "table_chunk_log2": 12,
        "table_k_exact": 512,
        "table_n_knots": 1024,
    }
    cached_settings = Settings(**common)  # type: ignore[arg-type]
    uncached_settings = Settings(**common, leaderboard_cache_size=0)  # type: ignore[arg-type]
    migrate(url)

    def app_client(settings: Settings) -> tuple[TestClient, object]:
        d = InlineDispatcher(settings)
        app = create_app(settings, dispatcher=d)
        d.app = app
        return TestClient(app), app

    client, app = app_client(uncached_settings)
    with client:
        t0 = time.perf_counter()
        values = _seed(app.state.sessionmaker, args.sets)  # type: ignore[attr-defined]
        seeded = time.perf_counter() - t0
        fids = sorted(values)
        for fid in fids:  # build the default tables inline (not timed)
            client.get(f"/v1/leaderboards/{fid}")
    where = "PostgreSQL" if args.postgres else "SQLite"
    print(
        f"seeded {args.sets} sets x {len(fids)} functions x {N_RUNS} runs in {seeded:.1f} s "
        f"({where})"
    )
    tables._READY_CACHE.clear()  # a fresh process: nothing decoded yet
    url_q = f"/v1/leaderboards?suite=bbob&dim={DIM}"
    client, app = app_client(uncached_settings)
    with client:
        t0 = time.perf_counter()
        r = client.get(url_q)
        cold = time.perf_counter() - t0
        assert r.status_code == 200, r.text[:500]
        body = r.json()
        if body["excluded"] or body["pending"]:
            raise SystemExit(f"unexpected exclusions or pending tables: {r.text[:500]}")
        uncached = _times(lambda: client.get(url_q), args.repeats)
        sm = app.state.sessionmaker  # type: ignore[attr-defined]
        if args.profile:
            _profile(sm, uncached_settings)
        knots = {}
        for fid in fids:
            if fid.startswith("bbob/f1/"):  # exact v1 (sphere), no table: the peer skips it
                continue
            spec = tables.table_spec(uncached_settings, function_id=fid)
            table_id = tables.table_id_for(tables.spec_hash(spec))
            knots[fid] = np.asarray(
                tables.load_table_data(sm, table_id, cache=app.state.table_caches)[1].values
            )
    client, app = app_client(cached_settings)
    with client:
        assert client.get(url_q).json() == body  # fills the cache: the same answer
        cached = _times(lambda: client.get(url_q), args.repeats)
    peer_values = {f: v for f, v in values.items() if f in knots}
    peer = _times(lambda: _numpy_peer(peer_values, knots), args.repeats)
    med_peer = statistics.median(peer)
    print(
        f"entries {len(body['entries'])}, functions {len(body['functions'])}, family "
        f"{body['family']['status']}; {args.repeats} repeats, medians [min-max]"
    )

    def row(name: str, xs: list[float]) -> None:
        m = statistics.median(xs)
        goal = "met" if m < GOAL_WARM_S else "MISSED"
        print(
            f"{name:<16} {m * 1e3:8.1f} ms [{min(xs) * 1e3:.1f}-{max(xs) * 1e3:.1f}]   "
            f"ratio to numpy {m / med_peer:8.1f}   goal < {GOAL_WARM_S * 1e3:.0f} ms: {goal}"
        )

    print(f"{'cold (uncached)':<16} {cold * 1e3:8.1f} ms   ratio to numpy {cold / med_peer:8.1f}")
    row("warm uncached", uncached)
    row("warm cached", cached)
    print(f"{'numpy':<16} {med_peer * 1e3:8.2f} ms   ({len(knots)} functions with tables)")
    print(f"loadavg {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
