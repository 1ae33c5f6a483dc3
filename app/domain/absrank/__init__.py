"""Absolute ranks ``v_f(t)`` from sampled tables (SPEC §3; Jing & Liu Eq. 28 and Eq. 19).

Pipeline for one query value ``t``:

1. ``v1(t)``, the share of the sampling region with ``f <= t``:

   * inside the sample range, paper Eq. 28 on the stored table (``method="interpolated"``);
   * below it, a lower-tail model (``tail=``): ``"paper"`` (Eq. 28's ``exp(t − y_1)/(N+1)``),
     ``"linear"`` (from ``(f*, atom)`` to ``(y_1, v1(y_1))``), ``"power"``
     (``v1(y_k)·((t − f*)/(y_k − f*))^β``) or ``"auto"``;
   * above it, ``"upper-tail"`` (paper: ``1 − exp(−ln(N+1)·t/y_N)``; otherwise linear to
     ``(f_max, 1)`` or flat at ``N/(N+1)``);
   * ``"atom"`` at ``t = f*`` for a function with a plateau of registered mass ``atom > 0``.

2. Best of ``c`` evaluations (Eq. 19): ``v_c = 1 − (1 − v1)^c``.
3. ``r > 1`` runs aggregated by an order statistic: ``P(Z_(k) <= t) = P(Bin(r, v_c) >= k)``.

Everything is computed with natural logarithms and returned as ``log10_v`` (authoritative, finite
down to ``1e-400`` and beyond; ``-inf`` only where ``v`` is exactly 0, i.e. ``t < f*`` or ``t = f*``
without an atom) and ``v = 10**log10_v`` (may underflow to 0.0). Intervals are transformed by the
same monotone maps as the point estimate.

Errors ``t − f*`` are ranked as the gap itself (``ranks_from_curve(..., values_are="error")``):
tails and exact forms take the gap, Eq. 28 compares it with the knots' exact gaps [4].

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking Optimization
       Algorithms. Eq. 28 (estimate of ``v1`` from ``N`` sorted samples, with its tails), Eq. 19
       (best of ``c``: ``v_c = 1 − (1 − v1)^c``), §IV-B (analytic cases), §V (regions).
.. [2] C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits illustrated in the
       case of the binomial. Biometrika 26 (1934).
.. [3] B. M. Hill. A simple general approach to inference about the tail of a distribution.
       Ann. Statist. 3 (1975).
.. [4] D. E. Knuth. The Art of Computer Programming, vol. 2: Seminumerical Algorithms, 3rd ed.,
       §4.2.2 (the exact error of a rounded sum, TwoSum): used to know which knots' gaps
       ``y_j − f*`` are exact, so that errors (``values_are="error"``) are compared and
       interpolated as gaps (docs/METHODS.md, "Values and errors").

Layout: :mod:`._table` (the stored table), :mod:`._logspace` (best of ``c``, binomial tails,
Clopper–Pearson limits in log space), :mod:`._context` (context, result, options),
:mod:`._eq28` (Eq. 28 and the tail forms), :mod:`._tails` (which lower tail applies),
:mod:`._curve` (a table's curve and ranks on any curve), :mod:`._analytic` (exact forms).
"""

from __future__ import annotations

from app.domain.absrank._analytic import ANALYTIC_KINDS, analytic_curve, analytic_ranks
from app.domain.absrank._context import (
    AGGREGATES,
    CLIP_SHARE,
    FIT_P_MIN,
    METHODS,
    MIN_ANCHOR,
    NOT_AN_ORDER_STATISTIC,
    TAIL_MODES,
    RankContext,
    RankResult,
    RankTail,
    Transform,
    check_transform,
)
from app.domain.absrank._curve import (
    absolute_ranks,
    curve_warnings,
    ranks_from_curve,
    table_curve,
)
from app.domain.absrank._logspace import (
    LN10,
    ln_best_of_c,
    log10_best_of_c,
    log10_order_statistic_cdf,
)
from app.domain.absrank._table import (
    TableData,
    build_table_data,
    decode_table_data,
    encode_table_data,
)
from app.domain.curves import CurveInfo, PowerLaw, V1Curve

__all__ = [
    "AGGREGATES",
    "ANALYTIC_KINDS",
    "CLIP_SHARE",
    "FIT_P_MIN",
    "LN10",
    "METHODS",
    "MIN_ANCHOR",
    "NOT_AN_ORDER_STATISTIC",
    "TAIL_MODES",
    "CurveInfo",
    "PowerLaw",
    "RankContext",
    "RankResult",
    "RankTail",
    "TableData",
    "Transform",
    "V1Curve",
    "absolute_ranks",
    "analytic_curve",
    "analytic_ranks",
    "build_table_data",
    "check_transform",
    "curve_warnings",
    "decode_table_data",
    "encode_table_data",
    "ln_best_of_c",
    "log10_best_of_c",
    "log10_order_statistic_cdf",
    "ranks_from_curve",
    "table_curve",
]
