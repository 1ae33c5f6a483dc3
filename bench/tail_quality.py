"""Tail quality report (SPEC §3.2-3.4): what the service knows at x*, and how deep tails fare.

Part 1, ``structure``: every hosted function of classic, BBOB (instance 1), CEC 2005, 2017, 2020
and 2022 at D = 10 (every suite hosts it): its registered local structure at x* (β with the
first clause of its derivation, or "unknown" with its reason; the atom), and per suite counts
(β = d/2, β = d, another β, unknown, atom > 0). Printed, and written as markdown to
``bench/results/tail_quality_structure.md``.

Part 2, ``accuracy``: for functions whose ``v1`` is known exactly deep in the tail, the error in
decades, ``log10 v_estimate − log10 v_exact``, at ``t = f* + 10^-k·(y_1 − f*)``, ``k = 2..8``
(``y_1`` = lowest sample of the function's default domain table), of

(a) the single default domain table (N = 2^16, seed 0): ``tail="power"`` with the registered β
    (or "refused: <reason>"), and ``tail="auto"`` with the method it picks;
(b) the nested regions: the service's own ladder (``app.services.tables.ladder_specs`` under the
    default ``Settings()``, every level built by ``tables.compute_table_data`` — the bytes a
    worker stores), combined by ``app.services.nested.nested_curve_for`` as the service does,
    with the serving level and its method per point.

References (``REFERENCES``): the service's exact analytic forms (sphere, cone), the exact clipped
volume of a diagonal quadratic form (a sphere in scaled coordinates), and for rotated quadratic
forms ``V_d Q^{d/2}/sqrt(det H)`` times the share of that ellipsoid inside the box (1 when the
ellipsoid's bounding box is inside, else Monte Carlo over 2^18 points uniform in the
ellipsoid). ``H`` is measured by finite differences and checked to be a quadratic form at random
points; for BBOB f21/f22, ``Q = Q(f − f*)`` undoes the Gallagher peak's ``exp`` and ``T_osz`` (as
in tests/unit/domain/test_nested.py), valid while the best peak dominates (``f − f* < 0.5``).
Each reference is checked against the sampled tables at a shallow level (Eq. 28 counts at
``y_100``, ``y_1000``, ``y_4096`` of the outermost level where the reference holds).

Built tables are cached in ``bench/results/cache/`` (git-ignored), keyed by the spec hash and a
fingerprint of the function's values, so reruns take seconds. Raw figures go to
``bench/results/tail_quality-<quick|full>.json``; the accuracy tables also to
``bench/results/tail_quality_accuracy.md``. Benchmarks report, they do not assert. Usage::

    .venv/bin/python bench/tail_quality.py            # all 9 functions (about 15 s cold)
    .venv/bin/python bench/tail_quality.py --quick    # sphere, ellipsoid, f21, cec2017/f1
    .venv/bin/python bench/tail_quality.py --only structure
    .venv/bin/python bench/tail_quality.py --functions bbob/f22/i1/d10 --no-cache
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import _common as c
import numpy as np

DIM = 10
KS = np.arange(2, 9)
LN10 = math.log(10.0)
CACHE = c.RESULTS / "cache"
STRUCTURE_MD = c.RESULTS / "tail_quality_structure.md"
ACCURACY_MD = c.RESULTS / "tail_quality_accuracy.md"
#: (suite, instance) of part 1; BBOB lists 15 instances, instance 1 stands for them
SUITES: tuple[tuple[str, int | None], ...] = (
    ("classic", None),
    ("bbob", 1),
    ("cec2005", None),
    ("cec2017", None),
    ("cec2020", None),
    ("cec2022", None),
)
#: part 2: function id -> kind of exact reference
REFERENCES: dict[str, str] = {
    "classic/sphere/d10": "analytic",
    "classic/pyramid/d10": "analytic",
    "classic/ellipsoid/d10": "diagonal",
    "bbob/f21/i1/d10": "gallagher",
    "bbob/f22/i1/d10": "gallagher",
    "cec2005/f1/d10": "analytic",
    "cec2005/f2/d10": "quadratic",
    "cec2005/f3/d10": "quadratic",
    "cec2017/f1/d10": "quadratic",
}
QUICK = ("classic/sphere/d10", "classic/ellipsoid/d10", "bbob/f21/i1/d10", "cec2017/f1/d10")
#: goal of the summary row: every nested error with a reference within this many decades
GOAL_DECADES = 0.5
MC_POINTS = 2**16  # per chunk of the Monte Carlo share of an ellipsoid inside a box
MC_CHUNKS = 4  # chunks for the reference at the targets t (2^18 points)
CHECK_CHUNKS = 16  # chunks for the shallow check against the tables (2^20 points)
CHECK_LEVELS = 3  # the check compares at the first levels (outermost) where the reference holds
MC_MIN_HITS = 30
GALLAGHER_LIMIT = 0.5  # f - f* below which the best Gallagher peak dominates (test_nested.py)


# ============================================================================================
# Part 1: registered local structure
# ============================================================================================


def _clauses(text: str) -> list[str]:
    """``text`` split at ``;`` and sentence ends outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch == ";" or (ch == "." and text[i + 1 : i + 2] in (" ", ""))):
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [x for x in out if x]


def _cut(text: str, limit: int) -> str:
    """``text``, its middle elided when longer than ``limit`` (the conclusion comes last)."""
    if len(text) <= limit:
        return text
    half = (limit - 3) // 2
    return text[:half].rstrip() + " … " + text[-half:].lstrip()


_NEGATIVE = re.compile(r"\b(no|not|unknown)\b")


def first_clause(text: str, limit: int = 160) -> str:
    """The first clause of a derivation (up to ``;`` or a sentence end outside parentheses)."""
    parts = _clauses(text)
    return _cut(parts[0] if parts else text, limit)


def reason_clause(text: str, limit: int = 160) -> str:
    """Why β is unknown: the first clause if it says so, else the last one that is no advice."""
    parts = [p for p in _clauses(text) if not p.lower().startswith("estimate the tail")]
    if not parts:
        return _cut(text, limit)
    outside = re.sub(r"\([^()]*\)", "", parts[0])
    if not _NEGATIVE.search(outside):
        return _cut(parts[-1], limit)
    if len(parts[0]) < 50 and len(parts) > 1:  # "no single power law near x*": say why
        return _cut(f"{parts[0]}: {parts[1]}", limit)
    return _cut(parts[0], limit)


def classify(beta: float | None, atom: float, dim: int) -> str:
    if atom > 0:
        return "atom"
    if beta is None:
        return "unknown"
    if beta == dim / 2:
        return "d/2"
    if beta == dim:
        return "d"
    return "other"


CLASSES = ("d/2", "d", "other", "unknown", "atom")


def structure() -> dict[str, Any]:
    from app.domain.functions import list_functions

    rows, counts = [], {}
    for suite, instance in SUITES:
        fns = [
            f
            for f in list_functions(suite=suite, dim=DIM)
            if instance is None or f.instance == instance
        ]
        tally = dict.fromkeys(CLASSES, 0)
        for fn in fns:
            loc = fn.local
            cls = classify(loc.beta, loc.atom, fn.dim)
            tally[cls] += 1
            text = loc.derivation.removeprefix("unknown:").strip()
            rows.append(
                {
                    "suite": suite,
                    "function_id": fn.id,
                    "title": fn.title,
                    "beta": loc.beta,
                    "class": cls,
                    "atom": loc.atom,
                    "clause": reason_clause(text) if cls == "unknown" else first_clause(text),
                }
            )
        counts[suite] = {"functions": len(fns), **tally}
    return {"dim": DIM, "functions": rows, "counts": counts}


def _beta_text(row: dict[str, Any]) -> str:
    if row["class"] == "atom":
        return "— (atom)"
    if row["beta"] is None:
        return "unknown"
    b = row["beta"]
    tag = {"d/2": " (d/2)", "d": " (d)"}.get(row["class"], "")
    return f"{b:.4g}{tag}"


def print_structure(s: dict[str, Any]) -> None:
    print(f"(1) registered local structure at x*, D = {s['dim']} (BBOB: instance 1)")
    for suite, _ in SUITES:
        mine = [r for r in s["functions"] if r["suite"] == suite]
        print(f"  {suite}:")
        for r in mine:
            atom = f"atom {r['atom']:.3g}" if r["atom"] > 0 else ""
            name = r["function_id"].split("/", 1)[1]
            print(f"    {name:<18} β {_beta_text(r):<10} {atom:<14} {_cut(r['clause'], 90)}")
    print(_counts_table(s, markdown=False))


def _counts_table(s: dict[str, Any], *, markdown: bool) -> str:
    head = ["suite", "functions", "β = d/2", "β = d", "other β", "unknown β", "atom > 0"]
    lines = []
    for suite, instance in SUITES:
        k = s["counts"][suite]
        name = suite if instance is None else f"{suite} (i{instance})"
        lines.append([name, k["functions"], k["d/2"], k["d"], k["other"], k["unknown"], k["atom"]])
    total = ["all"] + [sum(int(row[i]) for row in lines) for i in range(1, 7)]
    lines.append(total)
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * 6]
        out += ["| " + " | ".join(str(x) for x in row) + " |" for row in lines]
        return "\n".join(out)
    out = ["  " + "".join(f"{h:>11}" if i else f"{h:<14}" for i, h in enumerate(head))]
    out += [
        "  " + "".join(f"{x!s:>11}" if i else f"{x!s:<14}" for i, x in enumerate(row))
        for row in lines
    ]
    return "\n".join(out)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def write_structure_md(s: dict[str, Any]) -> None:
    parts = [
        f"# Registered local structure at x*, D = {s['dim']}",
        "",
        "Generated by `bench/tail_quality.py` (part 1). β is the registered tail exponent "
        "(`v1(t) − atom ~ C (t − f*)^β`), with the first clause of its derivation, or the reason "
        "it is unknown (the tail is then estimated from samples); the full text is in each "
        "function's `local.derivation`.",
        "",
        _counts_table(s, markdown=True),
        "",
    ]
    for suite, instance in SUITES:
        title = suite if instance is None else f"{suite}, instance {instance}"
        parts += [f"## {title}", "", "| id | β | atom | derivation (first clause) |"]
        parts.append("|---|---|---|---|")
        for r in (r for r in s["functions"] if r["suite"] == suite):
            atom = f"{r['atom']:.3g}" if r["atom"] > 0 else "0"
            parts.append(
                f"| {r['function_id']} | {_beta_text(r)} | {atom} | {_md_escape(r['clause'])} |"
            )
        parts.append("")
    c.RESULTS.mkdir(exist_ok=True)
    STRUCTURE_MD.write_text("\n".join(parts))


# ============================================================================================
# Part 2: references
# ============================================================================================


@dataclasses.dataclass
class RefValue:
    """``ln`` of the share of a box where ``f <= t`` (NaN: no reference) and its notes."""

    ln_v: np.ndarray
    rel_se: np.ndarray  # relative standard error (Monte Carlo clip share), 0 when exact
    note: list[str]


class Reference:
    """Exact ``v1`` of a function on any box around x* (``ln_share``), per kind."""

    description = ""

    def ln_share(
        self, t: np.ndarray, lower: np.ndarray, upper: np.ndarray, chunks: int = MC_CHUNKS
    ) -> RefValue:
        raise NotImplementedError


class AnalyticReference(Reference):
    """The service's exact form (``absrank.analytic_curve``), on the box asked for."""

    def __init__(self, fn: Any) -> None:
        from app.services.regions import rank_context

        self.fn = fn
        self.ctx = rank_context(fn, fn.lower, fn.upper, whole_domain=True)
        a, b = fn.x_opt - fn.lower, fn.upper - fn.x_opt
        self.halfwidth = float(np.max(np.maximum(a, b)))
        self.description = (
            f"exact analytic {fn.analytic} (app.domain.analytic, clipped by the box)"
            if fn.analytic == "sphere"
            else f"exact analytic {fn.analytic}, ((t − f*)/(f_max − f*))^d on the centred box"
        )

    def ln_share(
        self, t: np.ndarray, lower: np.ndarray, upper: np.ndarray, chunks: int = MC_CHUNKS
    ) -> RefValue:
        from app.domain import absrank

        ctx = dataclasses.replace(self.ctx, region_lower=lower, region_upper=upper)
        t = np.asarray(t, dtype=np.float64)
        try:
            curve = absrank.analytic_curve(self.fn.analytic, ctx, cone_halfwidth=self.halfwidth)
            ln_v = curve.evaluate(t)[0]
        except ValueError as exc:  # e.g. box distances 1 ulp apart: a spline on repeated knots
            return RefValue(np.full(t.shape, np.nan), np.zeros(t.shape), [f"none: {exc}"] * t.size)
        return RefValue(ln_v, np.zeros_like(ln_v), ["exact"] * len(ln_v))


class DiagonalReference(Reference):
    """``f − f* = Σ w_i (x_i − x*_i)²`` on a box: the sphere on the box scaled by ``sqrt(w_i)``."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        d, x0 = fn.dim, fn.x_opt
        self.w = fn.evaluate(x0 + np.eye(d)) - fn.f_opt
        u = np.random.default_rng(1).normal(size=(64, d))
        model = (u * u) @ self.w
        err = float(np.max(np.abs((fn.evaluate(x0 + u) - fn.f_opt) / model - 1)))
        if err > 1e-9:
            raise ValueError(f"{fn.id} is not a diagonal quadratic form (rel. error {err:.2g})")
        self.description = (
            f"exact: diagonal quadratic form, w_i = f(x* + e_i) − f* (condition "
            f"{self.w.max() / self.w.min():.3g}; checked at 64 random points to {err:.1e}), "
            "volume = the sphere's clipped volume on the box scaled by sqrt(w_i)"
        )

    def ln_share(
        self, t: np.ndarray, lower: np.ndarray, upper: np.ndarray, chunks: int = MC_CHUNKS
    ) -> RefValue:
        from app.domain.analytic import box_distances, sphere_ln_cdf

        a, b = box_distances(lower, upper, self.fn.x_opt)
        s = np.asarray(t, dtype=np.float64) - self.fn.f_opt
        sq = np.sqrt(self.w)
        ln_v = sphere_ln_cdf(np.log(s), a * sq, b * sq)
        return RefValue(ln_v, np.zeros_like(ln_v), ["exact"] * len(ln_v))


def _tosz_inverse(u: np.ndarray) -> np.ndarray:
    """Inverse of BBOB's ``T_osz`` for ``u > 0`` (bisection on ``y = log w``, as test_nested)."""
    target = np.log(u)
    lo, hi = target - 0.1, target + 0.1
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        above = mid + 0.049 * (np.sin(10.0 * mid) + np.sin(7.9 * mid)) > target
        lo, hi = np.where(above, lo, mid), np.where(above, mid, hi)
    return np.exp(0.5 * (lo + hi))


def _gallagher_q(s: np.ndarray, d: int) -> np.ndarray:
    """``Q(s) = −2D log(1 − T_osz^{-1}(sqrt s)/10)``: ``{f − f* <= s} = {q <= Q(s)}``."""
    return -2.0 * d * np.log1p(-_tosz_inverse(np.sqrt(s)) / 10.0)


def _code_log10_sqrt_det(fn_id: str, d: int) -> tuple[float, str] | None:
    """``log10 sqrt(det H)`` derived from the code's definition, where derived."""
    if fn_id == f"cec2017/f1/d{d}":
        from app.domain.functions.cec_data import load_matrix

        m = load_matrix(2017, f"M_1_D{d}.txt")
        det_m = abs(float(np.linalg.det(m)))
        # g = z_1² + 1e6 Σ_{i>1} z_i², z = M (1.0 (x − o)): H = Mᵀ diag(1, 1e6, …) M
        return 0.5 * (d - 1) * 6.0 + math.log10(det_m), (
            f"code: H = Mᵀ diag(1, 1e6, …, 1e6) M (bent_cigar_func, rate 1.0, M = M_1_D{d}.txt), "
            f"sqrt(det H) = 1e{3 * (d - 1)}·|det M|, |det M| = {det_m:.6g} (M is not orthogonal: "
            "singular values "
            + ", ".join(f"{v:.4g}" for v in np.linalg.svd(m, compute_uv=False)[:3])
            + ", …)"
        )
    if fn_id == f"cec2005/f2/d{d}":
        return 0.0, "code: H = Lᵀ L, L = lower-triangular ones, det L = 1"
    if fn_id == f"cec2005/f3/d{d}":
        return 0.5 * 6.0 * d / 2, (
            "code: H = M diag(1e6^((i−1)/(D−1))) Mᵀ, sqrt(det H) = 1e15·|det M| (M orthogonal)"
        )
    if fn_id.startswith("bbob/f21/") or fn_id.startswith("bbob/f22/"):
        return 0.0, "code: the best peak's C_1 = Λ^α/α^(1/4) has det 1, so det H = 1"
    return None


class QuadraticReference(Reference):
    """``{f − f* <= s} = {(x − x*)ᵀ H (x − x*) <= Q(s)}``: ellipsoid volume × its share in a box.

    ``Q(s) = s`` for a quadratic form, Gallagher's ``Q`` for BBOB f21/f22 (valid for
    ``s < limit``). The share of the ellipsoid inside the box is 1 when its bounding box is
    inside, else the fraction of :data:`MC_POINTS` points uniform in the ellipsoid (seeded) that
    fall in the box; fewer than :data:`MC_MIN_HITS` hits: no reference.
    """

    def __init__(self, fn: Any, gallagher: bool) -> None:
        self.fn = fn
        d, x0 = fn.dim, fn.x_opt
        self.q_of_s: Callable[[np.ndarray], np.ndarray] = (
            (lambda s: _gallagher_q(s, d)) if gallagher else (lambda s: s)
        )
        self.limit = GALLAGHER_LIMIT if gallagher else math.inf

        def q(x: np.ndarray) -> np.ndarray:
            return self.q_of_s(fn.evaluate(x) - fn.f_opt)

        h = 1e-2 if gallagher else 1.0
        diag = q(x0 + h * np.eye(d)) / h**2
        big_h = np.diag(diag)
        for i in range(d):
            for j in range(i + 1, d):
                e = np.zeros(d)
                e[[i, j]] = h
                big_h[i, j] = big_h[j, i] = (q((x0 + e)[None, :])[0] / h**2 - diag[i] - diag[j]) / 2
        u = np.random.default_rng(1).normal(size=(64, d)) * (0.05 if gallagher else 1.0)
        quad = np.einsum("ni,ij,nj->n", u, big_h, u)
        self.quad_error = float(np.max(np.abs(q(x0 + u) / quad - 1)))
        if self.quad_error > 1e-4:
            raise ValueError(f"{fn.id}: not a quadratic form near x* ({self.quad_error:.2g})")
        self.H = big_h
        sign, ln_det = np.linalg.slogdet(big_h)
        if sign <= 0:
            raise ValueError(f"{fn.id}: H is not positive definite")
        self.ln_det = float(ln_det)
        self.inv_h = np.linalg.inv(big_h)
        self.inv_diag = np.diag(self.inv_h)
        # H = L Lᵀ; x − x* = sqrt(Q) L^{-T} u with u uniform in the unit ball
        self.inv_chol = np.linalg.inv(np.linalg.cholesky(big_h))
        self.units: list[np.ndarray] = []
        self.ln_vd = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)
        eig = np.linalg.eigvalsh(big_h)
        measured = 0.5 * self.ln_det / LN10
        code = _code_log10_sqrt_det(fn.id, d)
        self.det_check: dict[str, Any] = {"log10_sqrt_det_measured": measured}
        code_text = ""
        if code is not None:
            self.det_check |= {"log10_sqrt_det_code": code[0], "derivation": code[1]}
            code_text = f"; {code[1]}: log10 sqrt(det H) = {code[0]:.6f} vs measured {measured:.6f}"
        what = (
            "Q(s) = −2D log(1 − T_osz^-1(sqrt s)/10) (Gallagher's best peak, valid for f − f* "
            f"< {self.limit:g})"
            if gallagher
            else "Q(s) = s"
        )
        self.description = (
            f"ellipsoid volume V_d Q^(d/2)/sqrt(det H), {what}; H by finite differences "
            f"(h = {h:g}; a quadratic form at 64 random points to {self.quad_error:.1e}; "
            f"condition {eig.max() / eig.min():.3g}){code_text}; × share of the ellipsoid in "
            f"Ω (1 if its bounding box is inside, else Monte Carlo, {MC_CHUNKS * MC_POINTS} "
            "points uniform in the ellipsoid)"
        )

    def _unit(self, chunk: int) -> np.ndarray:
        """Chunk ``chunk`` of points ``L^{-T} u``, ``u`` uniform in the unit ball (seeded)."""
        while len(self.units) <= chunk:
            d = self.fn.dim
            rng = np.random.default_rng([20240611, len(self.units)])
            g = rng.normal(size=(MC_POINTS, d))
            radius = rng.random(MC_POINTS) ** (1.0 / d)
            ball = g / np.linalg.norm(g, axis=1)[:, None] * radius[:, None]
            self.units.append(ball @ self.inv_chol)  # rows: (L^{-T} u)ᵀ = uᵀ L^{-1}
        return self.units[chunk]

    def ln_share(
        self,
        t: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
        chunks: int = MC_CHUNKS,
        oriented: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> RefValue:
        """Share of the region where ``f <= t``: the box ``[lower, upper]``, or with
        ``oriented = (Q, h)`` the set ``{x in [lower, upper] : |Qᵀ(x − x*)| <= h}`` relative to
        the oriented box's own volume ``|det Q|·Π 2h_k`` (so an oriented box cut by the domain,
        ``B ∩ Ω``, is compared to ``count/(N_box + 1)``: the kept share is checked too)."""
        t = np.asarray(t, dtype=np.float64)
        x0 = self.fn.x_opt
        s = t - self.fn.f_opt
        ln_box = float(np.sum(np.log(upper - lower)))
        if oriented is not None:
            axes, half = oriented
            ln_box = float(np.sum(np.log(2.0 * half)) + np.linalg.slogdet(axes)[1])
        ln_v = np.full(t.shape, np.nan)
        rel = np.zeros(t.shape)
        notes = []
        for i, si in enumerate(s):
            if not (0 < si < self.limit):
                notes.append(f"none: f − f* = {si:.3g} ≥ {self.limit:g} (model invalid)")
                continue
            big_q = float(self.q_of_s(np.array([si]))[0])
            ln_vol = self.ln_vd + 0.5 * x0.size * math.log(big_q) - 0.5 * self.ln_det
            extent = np.sqrt(big_q * self.inv_diag)
            inside = np.all(x0 - extent >= lower) and np.all(x0 + extent <= upper)
            if oriented is not None:  # the ellipsoid's extent along each axis q_k
                axes, half = oriented
                along = np.sqrt(big_q * np.einsum("ik,ij,jk->k", axes, self.inv_h, axes))
                inside = inside and bool(np.all(along <= half))
            if inside:
                ln_v[i] = ln_vol - ln_box
                notes.append("exact (ellipsoid inside)")
                continue
            hits, total = 0, chunks * MC_POINTS
            for chunk in range(chunks):
                pts = x0 + math.sqrt(big_q) * self._unit(chunk)
                ok = np.all((pts >= lower) & (pts <= upper), axis=1)
                if oriented is not None:
                    ok &= np.all(np.abs((pts - x0) @ oriented[0]) <= oriented[1], axis=1)
                hits += int(np.count_nonzero(ok))
            if hits < MC_MIN_HITS:
                notes.append(f"none: clipped, {hits} of {total} MC points in the box")
                continue
            share = hits / total
            ln_v[i] = ln_vol + math.log(share) - ln_box
            rel[i] = math.sqrt((1.0 - share) / hits)
            notes.append(f"clipped: MC share {share:.4g} ± {100 * rel[i]:.1f}%")
        return RefValue(ln_v, rel, notes)


def make_reference(fn: Any, kind: str) -> Reference:
    if kind == "analytic":
        return AnalyticReference(fn)
    if kind == "diagonal":
        return DiagonalReference(fn)
    return QuadraticReference(fn, gallagher=kind == "gallagher")


# ============================================================================================
# Part 2: tables and curves
# ============================================================================================


def _fingerprint(fn: Any) -> str:
    """Hash of ``f`` at x* and 16 fixed points: a changed definition invalidates the cache."""
    rng = np.random.default_rng(12345)
    pts = fn.lower + (fn.upper - fn.lower) * rng.random((16, fn.dim))
    if fn.x_opt is not None:
        pts = np.vstack([fn.x_opt, pts])
    values = fn.evaluate_noise_free(pts)
    return hashlib.sha256(np.ascontiguousarray(values, dtype="<f8").tobytes()).hexdigest()[:12]


def build_ladder(fn: Any, settings: Any, use_cache: bool) -> tuple[list[Any], dict[str, Any]]:
    """Every level of the service's ladder of ``fn`` as ``(TableView, TableData)``, cached."""
    from app.domain import absrank
    from app.services import table_cache, tables

    caches = table_cache.AppCaches.from_settings(settings)  # this bench's own, as a worker's
    specs = tables.ladder_specs(settings, fn.id, cache=caches.ladders)
    default = tables.table_spec(settings, function_id=fn.id)
    assert tables.spec_hash(specs[0]) == tables.spec_hash(default), "level 0 != default table"
    fp = _fingerprint(fn)
    CACHE.mkdir(parents=True, exist_ok=True)
    ladder, built, cached, t0 = [], 0, 0, time.perf_counter()
    now = datetime.now(UTC)
    for spec in specs:
        sha = tables.spec_hash(spec)
        path = CACHE / f"{sha}-{fp}.bin"
        if use_cache and path.is_file():
            blob, cached = path.read_bytes(), cached + 1
        else:
            blob, built = tables.compute_table_data(spec), built + 1
            path.write_bytes(blob)
        data = absrank.decode_table_data(blob)
        view = tables.TableView(
            id=tables.table_id_for(sha),
            spec_hash=sha,
            function_id=fn.id,
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
        ladder.append((view, data))
    _, shape, plan = tables.ladder_plan(settings, fn.id, cache=caches.ladders)
    desc = shape.describe()
    info = {
        "levels": len(specs) - 1,
        "stop": plan.stop,
        "deepest_log10_volume_fraction": plan.log10_volume_fraction,
        "shape_is_cube": bool(shape.is_cube),
        "first_oriented_level": next((b.level for b in plan.boxes if b.oriented), None),
        "shape_log10_fill_share": desc.get("log10_fill_share"),
        "shape_fallback": desc.get("fallback"),
        "n": int(specs[0]["n"]),
        "seed": int(specs[0]["seed"]),
        "tables_built": built,
        "tables_from_cache": cached,
        "seconds": time.perf_counter() - t0,
    }
    return ladder, info


def _errors(ln_est: np.ndarray, ref: RefValue) -> list[float | None]:
    out: list[float | None] = []
    for e, r in zip(ln_est, ref.ln_v, strict=True):
        out.append(None if not (np.isfinite(r) and np.isfinite(e)) else float((e - r) / LN10))
    return out


def _covers(lo: np.ndarray, hi: np.ndarray, ref: RefValue) -> list[bool | None]:
    """Whether the served 95% interval ``[lo, hi]`` holds the reference (``None``: no reference).

    A Monte Carlo reference counts as covered when its ±2 sd band meets the interval."""
    out: list[bool | None] = []
    for a, b, r, rel in zip(lo, hi, ref.ln_v, ref.rel_se, strict=True):
        if not np.isfinite(r):
            out.append(None)
            continue
        band = 2.0 * float(rel)
        out.append(bool(a <= r + band and r - band <= b))
    return out


def _mark(covers: bool | None) -> str:
    return {True: "✓", False: "✗", None: ""}[covers]


def _serving_level(info: dict[str, Any], t: float) -> int | None:
    for lv in info["levels"]:
        serves = lv.get("serves")
        if not serves:
            continue
        lo = -math.inf if serves["t_from"] is None else serves["t_from"]
        hi = math.inf if serves["t_below"] is None else serves["t_below"]
        if lo <= t < hi:
            return int(lv["level"])
    return None


def shallow_check(ref: Reference, ladder: Sequence[Any]) -> dict[str, Any]:
    """Reference vs Eq. 28 counts at ``y_100, y_1000, y_4096`` of the outermost levels it covers.

    At a sample value ``t = y_k`` of level ``j`` the table's ``v1`` on ``R_j`` is ``count/(N+1)``
    (QMC: the binomial sd is conservative); the reference gives the same share exactly, or with
    its Monte Carlo share (``CHECK_CHUNKS`` chunks). Rows with a reference of relative standard
    error >= 10% are left out; the first ``CHECK_LEVELS`` levels with rows are compared.
    """
    from app.services import tables

    rows: list[dict[str, Any]] = []
    levels: list[int] = []
    for level, (view, data) in enumerate(ladder):
        region = view.spec["region"]
        lower = np.asarray(region["lower"])
        upper = np.asarray(region["upper"])
        oriented = None
        if region["kind"] == "oriented":
            if not isinstance(ref, QuadraticReference):
                continue
            _, axes, half = tables.oriented_geometry(region)
            oriented = (axes, half)
        n_box = int(view.spec["n"])  # an intersected level's table keeps data.n <= n_box points
        ranks = [k for k in (100, 1000, 4096) if k <= data.low_values.size]
        t = np.array([data.low_values[k - 1] for k in ranks])
        kw = {"oriented": oriented} if oriented is not None else {}
        rv = ref.ln_share(t, lower, upper, chunks=1, **kw)
        if np.any(np.isfinite(rv.ln_v) & (rv.rel_se >= 0.1)) or not np.any(np.isfinite(rv.ln_v)):
            rv = ref.ln_share(t, lower, upper, chunks=CHECK_CHUNKS, **kw)
        ok = np.isfinite(rv.ln_v) & (rv.rel_se < 0.1)
        if not np.any(ok):
            continue
        levels.append(level)
        for k, ti, r, rel, good in zip(ranks, t, rv.ln_v, rv.rel_se, ok, strict=True):
            if not good:
                continue
            count = int(data.counts[np.searchsorted(data.values, ti, "right") - 1])
            emp = math.log(count / (n_box + 1))
            sd = math.sqrt(1.0 / count + rel**2) / LN10  # binomial + Monte Carlo share
            rows.append(
                {
                    "level": level,
                    "kind": "oriented ∩ domain"
                    if tables.region_intersected(region)
                    else region["kind"],
                    "k": k,
                    "count": count,
                    "log10_table": emp / LN10,
                    "log10_reference": r / LN10,
                    "decades": (r - emp) / LN10,
                    "sd_decades": sd,
                    "z": (r - emp) / LN10 / sd,
                }
            )
        if len(levels) == CHECK_LEVELS:
            break
    out: dict[str, Any] = {"levels": levels, "rows": rows}
    if rows:
        out["max_abs_decades"] = max(abs(r["decades"]) for r in rows)
        out["max_abs_z"] = max(abs(r["z"]) for r in rows)
    return out


def _check_text(chk: dict[str, Any]) -> str:
    if not chk["rows"]:
        return "none possible (no level where the reference is resolved at y_100..y_4096)"
    lv = chk["levels"]
    where = f"level {lv[0]}" if len(lv) == 1 else f"levels {', '.join(map(str, lv))}"
    return (
        f"{len(chk['rows'])} points at {where}: max |Δ| {chk['max_abs_decades']:.3f} decades, "
        f"max |Δ|/sd {chk['max_abs_z']:.1f}"
    )


def accuracy_case(fid: str, kind: str, settings: Any, use_cache: bool) -> dict[str, Any]:
    from app.domain import absrank
    from app.domain.curves import info_json
    from app.domain.errors import DomainError
    from app.domain.functions import get_function
    from app.errors import AppError
    from app.services.nested import nested_curve_for
    from app.services.regions import rank_context

    fn = get_function(fid)
    ladder, ladder_info = build_ladder(fn, settings, use_cache)
    table = ladder[0][1]
    ctx = rank_context(fn, fn.lower, fn.upper, whole_domain=True)
    y1 = float(table.values[0])
    t = fn.f_opt + 10.0 ** -KS.astype(float) * (y1 - fn.f_opt)
    ref = make_reference(fn, kind)
    rv = ref.ln_share(t, fn.lower, fn.upper)
    check = shallow_check(ref, ladder)
    out: dict[str, Any] = {
        "function_id": fid,
        "reference_kind": kind,
        "reference": ref.description,
        "reference_det_check": getattr(ref, "det_check", None),
        "reference_check": check,
        "f_opt": fn.f_opt,
        "y_1": y1,
        "registered_beta": fn.local.beta,
        "ladder": ladder_info,
        "k": KS.tolist(),
        "t_minus_f_opt": (t - fn.f_opt).tolist(),
        "log10_reference": [None if not np.isfinite(x) else float(x / LN10) for x in rv.ln_v],
        "reference_note": rv.note,
    }
    # (a) single default table: power (registered β) and auto
    try:
        power = absrank.table_curve(table, ctx, tail="power")
        ln_p, _, _, m_p = power.evaluate(t)
        out["power"] = {
            "refused": None,
            "decades": _errors(ln_p, rv),
            "method": list(m_p),
            "beta": info_json(power.info).get("beta"),
            "beta_source": info_json(power.info).get("beta_source"),
            "k_anchor": info_json(power.info).get("k"),
        }
    except (DomainError, AppError) as exc:
        out["power"] = {"refused": str(exc), "decades": [None] * len(t), "method": []}
    auto = absrank.table_curve(table, ctx, tail="auto")
    ln_a, _, _, m_a = auto.evaluate(t)
    out["auto"] = {
        "decades": _errors(ln_a, rv),
        "method": list(m_a),
        "lower": info_json(auto.info).get("lower"),
        "warnings": [str(w) for w in auto.warnings],
    }
    # (b) nested regions, as the service combines them
    curve = nested_curve_for(fn, ladder)
    ln_n, lo_n, hi_n, m_n = curve.evaluate(t)
    out["nested"] = {
        "decades": _errors(ln_n, rv),
        "covers": _covers(lo_n, hi_n, rv),
        "log10_lo": [float(x / LN10) for x in lo_n],
        "log10_hi": [float(x / LN10) for x in hi_n],
        "method": list(m_n),
        "level": [_serving_level(curve.info, float(x)) for x in t],
        "levels_used": curve.info["levels_used"],
        "deepest_level": curve.info["deepest_level"],
        "warnings": curve.warnings,
    }
    return out


# ============================================================================================
# Printing
# ============================================================================================


def _dec(x: float | None) -> str:
    return "—" if x is None else f"{x:+.2f}"


_SHORT = {
    "tail-power": "power",
    "tail-linear": "linear",
    "tail-paper": "paper",
    "interpolated": "interp",
}


def _short(method: str) -> str:
    return _SHORT.get(method.removeprefix("nested-"), method.removeprefix("nested-"))


def print_case(r: dict[str, Any]) -> None:
    lad = r["ladder"]
    shape = "cubes" if lad["shape_is_cube"] else "shaped boxes"
    if lad.get("first_oriented_level") is not None:
        shape += f", oriented along the fitted axes from level {lad['first_oriented_level']}"
    fill = lad["shape_log10_fill_share"]
    print(
        f"  ladder: {lad['levels']} levels below the domain ({shape}; sublevel set fills "
        f"10^{fill:.2f} of its bounding box), stop '{lad['stop']}', deepest 10^"
        f"{lad['deepest_log10_volume_fraction']:.1f} of Ω; {lad['tables_built']} built, "
        f"{lad['tables_from_cache']} from cache, {lad['seconds']:.1f} s"
        if fill is not None
        else f"  ladder: {lad['levels']} levels ({shape}), {lad['seconds']:.1f} s"
    )
    print(f"  reference: {r['reference']}")
    print(f"  reference vs the tables' Eq. 28 counts: {_check_text(r['reference_check'])}")
    p = r["power"]
    if p["refused"]:
        print(f"  (a) power refused: {p['refused']}")
    else:
        print(f"  (a) power: β = {p['beta']} ({p['beta_source']}), anchor k = {p['k_anchor']}")
    if r["auto"]["warnings"]:
        print(f"      auto: {r['auto']['warnings'][0][:150]}")
    used = r["nested"]["levels_used"]
    print(
        f"  (b) nested: levels used {used[0]}..{used[-1]} ({len(used)} of {lad['levels'] + 1}), "
        f"{len(r['nested']['warnings'])} warnings"
    )
    print(
        f"  {'k':>2} {'t − f*':>10} {'log10 v_ref':>12} {'power':>7} {'auto':>16} "
        f"{'nested':>22}  reference"
    )
    for i, k in enumerate(r["k"]):
        ref = r["log10_reference"][i]
        auto = f"{_dec(r['auto']['decades'][i])} {_short(r['auto']['method'][i])}"
        lv = r["nested"]["level"][i]
        nst = (
            f"{_dec(r['nested']['decades'][i])} L{lv} {_short(r['nested']['method'][i])}"
            f"{_mark(r['nested']['covers'][i])}"
        )
        print(
            f"  {k:>2} {r['t_minus_f_opt'][i]:>10.3g} "
            f"{'—' if ref is None else f'{ref:.2f}':>12} "
            f"{'refused' if p['refused'] else _dec(p['decades'][i]):>7} {auto:>16} {nst:>22}  "
            f"{r['reference_note'][i]}"
        )


def _max_abs(xs: Sequence[float | None]) -> float | None:
    vals = [abs(x) for x in xs if x is not None]
    return max(vals) if vals else None


def compact_table(cases: dict[str, dict[str, Any]], *, markdown: bool) -> str:
    """Function × k: power / auto / nested errors (decades), one line per estimator."""
    head = ["function", "estimate", *(f"k={k}" for k in KS)]
    rows: list[list[str]] = []
    for fid, r in cases.items():
        p = r["power"]
        rows.append(
            [fid, "power (registered β)"]
            + (["refused"] * len(KS) if p["refused"] else [_dec(x) for x in p["decades"]])
        )
        rows.append(
            ["", "auto"]
            + [
                f"{_dec(x)} {_short(m)}"
                for x, m in zip(r["auto"]["decades"], r["auto"]["method"], strict=True)
            ]
        )
        rows.append(
            ["", "nested (✓ interval covers)"]
            + [
                f"{_dec(x)} L{lv} {_short(m)}{_mark(cov)}"
                for x, lv, m, cov in zip(
                    r["nested"]["decades"],
                    r["nested"]["level"],
                    r["nested"]["method"],
                    r["nested"]["covers"],
                    strict=True,
                )
            ]
        )
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * len(KS)]
        out += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(out)
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def fmt(row: list[str]) -> str:
        cells = enumerate(zip(row, widths, strict=True))
        return "  " + "  ".join(x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in cells)

    return "\n".join([fmt(head), *map(fmt, rows)])


def write_accuracy_md(cases: dict[str, dict[str, Any]]) -> None:
    parts = [
        "# Tail quality: error in decades, log10 v_estimate − log10 v_exact",
        "",
        "Generated by `bench/tail_quality.py` (part 2). `t = f* + 10^-k (y_1 − f*)`; "
        "`Lj` = the ladder level serving `t` (L0 = the domain table); `—` = no reference.",
        "",
        compact_table(cases, markdown=True),
        "",
        "| function | reference | check vs table counts |",
        "|---|---|---|",
    ]
    for fid, r in cases.items():
        text = _md_escape(_check_text(r["reference_check"]))
        parts.append(f"| {fid} | {_md_escape(r['reference'])} | {text} |")
    parts.append("")
    ACCURACY_MD.write_text("\n".join(parts))


# ============================================================================================
# Main
# ============================================================================================


def goals(results: dict[str, Any]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for fid, r in results.get("accuracy", {}).get("functions", {}).items():
        worst = _max_abs(r["nested"]["decades"])
        out[f"nested_{fid}"] = worst is not None and worst <= GOAL_DECADES
        out[f"nested_covers_{fid}"] = all(c is not False for c in r["nested"]["covers"])
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    p.add_argument("--only", choices=("structure", "accuracy"), default=None)
    p.add_argument("--functions", default=None, help="comma-separated ids of REFERENCES")
    p.add_argument("--no-cache", action="store_true", help="rebuild every table")
    args = p.parse_args(argv)
    c.exit_on_sigterm()
    from app.config import Settings

    settings = Settings()
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": c.machine()}
    results["settings"] = {
        k: getattr(settings, k)
        for k in (
            "table_default_log2n",
            "table_k_exact",
            "table_n_knots",
            "nested_factor",
            "nested_levels",
            "nested_min_log10_volume",
        )
    }
    t0 = time.perf_counter()
    if args.only in (None, "structure"):
        s = structure()
        print_structure(s)
        write_structure_md(s)
        print(f"  (markdown: {STRUCTURE_MD.relative_to(c.ROOT)})")
        results["structure"] = s
    if args.only in (None, "accuracy"):
        ids = list(QUICK if args.quick else REFERENCES)
        if args.functions:
            ids = [x.strip() for x in args.functions.split(",") if x.strip()]
            unknown = [x for x in ids if x not in REFERENCES]
            if unknown:
                p.error(f"--functions: no reference for {unknown}; known: {list(REFERENCES)}")
        print(
            f"\n(2) deep tails, t = f* + 10^-k (y_1 − f*), k = {KS[0]}..{KS[-1]}; error = log10 "
            f"v_estimate − log10 v_exact (decades); N = 2^{settings.table_default_log2n}, seed 0, "
            f"nested factor {settings.nested_factor:g}, down to 10^"
            f"{settings.nested_min_log10_volume:g} of Ω"
        )
        cases: dict[str, dict[str, Any]] = {}
        for i, fid in enumerate(ids, start=1):
            print(f"\n[{i}/{len(ids)}] {fid}", flush=True)
            cases[fid] = accuracy_case(fid, REFERENCES[fid], settings, not args.no_cache)
            print_case(cases[fid])
        print("\nsummary (decades; Lj = serving ladder level, L0 = domain table; — = no reference)")
        print(compact_table(cases, markdown=False))
        write_accuracy_md(cases)
        print(f"  (markdown: {ACCURACY_MD.relative_to(c.ROOT)})")
        results["accuracy"] = {
            "functions": cases,
            "goal_decades": GOAL_DECADES,
        }
    results["seconds"] = time.perf_counter() - t0
    only = args.only or ("functions" if args.functions else None)
    return c.finish("tail_quality", results, only, goals)


if __name__ == "__main__":
    main()
