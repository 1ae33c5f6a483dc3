"""Intersected ladder levels ``R_j = B ∩ Ω`` (an oriented box cut by the domain).

References: the exact area of a square rotated by 45° inside a square (plane geometry), the
Clopper-Pearson interval from scipy's beta distribution, independent scramblings for the spread
of the kept share, and for the service test an ellipsoid volume times a Monte Carlo share
(numpy's generator, not the Sobol path) of CEC 2005 F3, whose ``f − f*`` is exactly a quadratic
form measured here by finite differences.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from app.config import Settings
from app.domain import absrank, nested, sampling
from app.domain.functions import get_function

SQ2 = math.sqrt(2.0)
Q45 = np.array([[1.0, -1.0], [1.0, 1.0]]) / SQ2  # columns: the rotated axes
LO, HI = np.array([-1.0, -1.0]), np.array([1.0, 1.0])


def _guarded(X: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``|x|²``, refusing any point outside ``Ω`` (f must never be evaluated there)."""
    assert np.all((X >= LO) & (X <= HI)), "f evaluated outside the domain"
    assert X.shape[0] == int(np.count_nonzero(mask))
    return np.sum(X * X, axis=1)


def _kept(seed: int, n: int, size: int, half: np.ndarray) -> tuple[np.ndarray, list]:
    chunks = [
        sampling.evaluate_intersected_chunk(
            _guarded, np.zeros(2), Q45, half, LO, HI, seed, j, size, 64
        )
        for j in range(n // size)
    ]
    return np.concatenate([c.values for c in chunks]), chunks


def test_kept_share_of_a_rotated_square_against_plane_geometry() -> None:
    # the square |z_k| <= 1 rotated by 45° has corners at distance sqrt 2; each of its four
    # corners beyond a face of [-1, 1]^2 is a triangle of area (sqrt 2 − 1)^2: φ = 2 sqrt 2 − 2
    exact = 1.0 - (SQ2 - 1.0) ** 2
    n = 2**12
    values, _ = _kept(3, n, 2**10, np.ones(2))
    m = int(np.count_nonzero(np.isfinite(values)))
    lo, hi = nested.kept_share_interval(n, m, 0.999)
    assert lo <= exact <= hi
    assert abs(m / n - exact) <= 3.0 * math.sqrt(exact * (1 - exact) / n)
    # Clopper-Pearson from scipy's beta quantiles
    a = 0.05
    assert nested.kept_share_interval(n, m, 0.95) == pytest.approx(
        (stats.beta.ppf(a / 2, m, n - m + 1), stats.beta.ppf(1 - a / 2, m + 1, n - m)), rel=1e-10
    )
    assert nested.kept_share_interval(n, n, 0.95)[1] == 1.0


def test_kept_share_spread_over_scramblings_is_within_the_binomial() -> None:
    exact = 1.0 - (SQ2 - 1.0) ** 2
    n = 2**10
    shares = [np.mean(np.isfinite(_kept(seed, n, n, np.ones(2))[0])) for seed in range(24)]
    assert abs(np.mean(shares) - exact) <= 3.0 * math.sqrt(exact * (1 - exact) / n / 24)
    assert np.std(shares, ddof=1) <= math.sqrt(exact * (1 - exact) / n)


def test_intersected_table_is_the_same_for_any_chunking() -> None:
    n = 2**12
    merged = []
    for size in (2**12, 2**10, 2**8):
        _, chunks = _kept(5, n, size, np.array([1.0, 0.6]))
        values, low_x, low_values = sampling.merge_chunk_results(chunks, 64)
        keep = np.isfinite(values)
        merged.append((values[keep].tobytes(), low_x.tobytes(), low_values.tobytes()))
    assert merged[0] == merged[1] == merged[2]


def _f3_reference(fn, t: float, points: int = 2**16) -> float:
    """``ln v1(t)``: volume of ``(x − o)ᵀH(x − o) <= t − f*`` × its Monte Carlo share in Ω."""
    d, x0 = fn.dim, fn.x_opt
    diag = fn.evaluate(x0 + np.eye(d)) - fn.f_opt
    H = np.diag(diag)
    for i in range(d):
        for j in range(i + 1, d):
            e = np.zeros(d)
            e[[i, j]] = 1.0
            H[i, j] = H[j, i] = (fn.evaluate((x0 + e)[None])[0] - fn.f_opt - diag[i] - diag[j]) / 2
    s = t - fn.f_opt
    ln_vol = 0.5 * d * math.log(math.pi) - math.lgamma(d / 2 + 1) + 0.5 * d * math.log(s)
    ln_vol -= 0.5 * np.linalg.slogdet(H)[1]
    rng = np.random.default_rng(7)
    g = rng.normal(size=(points, d))
    ball = g / np.linalg.norm(g, axis=1)[:, None] * rng.random(points)[:, None] ** (1 / d)
    pts = x0 + math.sqrt(s) * ball @ np.linalg.inv(np.linalg.cholesky(H))
    share = np.mean(np.all((pts >= fn.lower) & (pts <= fn.upper), axis=1))
    return ln_vol + math.log(share) - float(np.sum(np.log(fn.upper - fn.lower)))


def test_service_ladder_of_cec2005_f3_has_intersected_levels_and_ranks_a_shallow_value() -> None:
    from app.services import ladder_levels, tables
    from app.services.table_cache import LadderCaches

    fid = "cec2005/f3/d10"
    fn = get_function(fid)
    settings = Settings()
    specs = tables.ladder_specs(settings, fid, log2n=14, cache=LadderCaches.from_settings(settings))
    cut = [j for j, sp in enumerate(specs) if tables.region_intersected(sp["region"])]
    assert cut  # the shallow levels, whose oriented box leaves Ω
    assert cut[0] == 1
    ladder = []
    for spec in specs:
        blob = tables.compute_table_data(spec)
        data = absrank.decode_table_data(blob)
        if tables.region_intersected(spec["region"]):
            # the kept count: the table's n, the same for another chunking
            assert 0 < data.n < spec["n"]
            assert tables.compute_table_data(spec, chunk_size=2**12) == blob
        view = _view(spec, blob)
        ladder.append((view, data))
    curve = ladder_levels.nested_curve_for(fn, ladder)
    y1 = float(ladder[0][1].values[0])
    t = fn.f_opt + 1e-2 * (y1 - fn.f_opt)
    ln_v, lo, hi, _ = curve.evaluate(np.array([t]))
    ref = _f3_reference(fn, t)
    assert abs(ln_v[0] - ref) / math.log(10) <= 0.5
    assert lo[0] <= ref <= hi[0]
    # the served level is intersected and its interval includes the kept share's
    served = next(
        lv
        for lv in curve.info["levels"]
        if lv["serves"]
        and (lv["serves"]["t_from"] or -math.inf) <= t < (lv["serves"]["t_below"] or math.inf)
    )
    assert served["region"]["intersect"] == "domain"
    kept = served["region"]["kept"]
    level = ladder_levels.ladder_levels(fn, ladder)[served["level"]]
    own = absrank.table_curve(*level.local(fn.x_opt), tail="auto", confidence=0.975)
    _, own_lo, own_hi, _ = own.evaluate(np.array([t]))
    m, n = kept["n_kept"], kept["n_box"]
    share_lo = stats.beta.ppf(0.0125, m, n - m + 1)
    share_hi = stats.beta.ppf(0.9875, m + 1, n - m)
    ln_box = level.ln_volume_fraction - math.log(m / n)
    assert lo[0] == pytest.approx(own_lo[0] + ln_box + math.log(share_lo), abs=1e-9)
    assert hi[0] == pytest.approx(min(own_hi[0] + ln_box + math.log(share_hi), 0.0), abs=1e-9)


def _view(spec, blob):
    import hashlib
    from datetime import UTC, datetime

    from app.services import tables

    sha = tables.spec_hash(spec)
    now = datetime.now(UTC)
    data = absrank.decode_table_data(blob)
    return tables.TableView(
        id=tables.table_id_for(sha),
        spec_hash=sha,
        function_id=spec["function_id"],
        status="ready",
        spec=spec,
        n=int(spec["n"]),
        seed=int(spec["seed"]),
        chunk_size=int(spec["n"]),
        n_chunks=1,
        chunks_done=1,
        eta_seconds=None,
        first_chunk_started=None,
        error=None,
        created_at=now,
        started_at=now,
        finished_at=now,
        data_sha256=hashlib.sha256(blob).hexdigest(),
        max_interp_error=data.max_interp_error,
        summary=None,
        provenance=None,
    )
