"""Wilcoxon signed-rank and sign tests of many pairs of columns at once, exactly as
:func:`app.domain.paired.wilcoxon_signed_rank` and :func:`app.domain.paired.sign_test` give them
one pair at a time (``zero_tol = 0``, two-sided, method ``auto``).

Private to :mod:`app.services._comparison_absolute`. Both tests depend on a pair's differences
``d = x − y`` only through a few exact summaries: the sign test through the counts of positive,
negative and zero differences; the signed-rank test through the integer scores ``2·midrank`` of
the non-zero ``|d|`` (zeros ranked as the zero method says), the sum ``t`` of the positive ones
and the number of zeros. Those summaries are computed for every pair in one vectorized pass, and
each distinct summary is tested once, by the domain function itself (the sign test on a
canonical pair with those counts, the signed-rank test on the first pair with that summary):
the results are the domain's own, field for field (tests/unit/services/test_comparison_fast.py
checks them against one call per pair on random matrices).

The ranks of ``|d|`` must be exact: ``d`` is represented without rounding as ``s + e`` with
``s = fl(x − y)`` and ``e`` its rounding error (Knuth's TwoSum, exact for finite floats), and
since rounding is monotone, ``|d₁| < |d₂|`` exactly when ``(|s₁|, ±e₁) < (|s₂|, ±e₂)``
lexicographically. Matrices with infinite values take the one-call-per-pair path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from app.domain import paired

#: Pairs processed per vectorized block (bounds the temporaries: block × n_problems floats).
_BLOCK = 4096


class PairTests(NamedTuple):
    """Both paired tests of one pair of columns ``(i, j)`` (``d = v[:, i] − v[:, j]``)."""

    i: int
    j: int
    wilcoxon: paired.WilcoxonResult
    sign_test: paired.SignTestResult


def _one_by_one(
    v: np.ndarray, pairs: list[tuple[int, int]], zero_method: str, exact_max_n: int
) -> list[PairTests]:
    return [
        PairTests(
            i,
            j,
            paired.wilcoxon_signed_rank(
                v[:, i], v[:, j], zero_method=zero_method, exact_max_n=exact_max_n
            ),
            paired.sign_test(v[:, i], v[:, j]),
        )
        for i, j in pairs
    ]


def _exact_scores(x: np.ndarray, y: np.ndarray, zero_method: str) -> tuple[np.ndarray, np.ndarray]:
    """Signs of ``d = x − y`` and ``2·midrank`` of ``|d|`` per row (pairs × problems), the zeros
    ranked lowest (pratt, zsplit) or left out (wilcox: their score is then meaningless)."""
    s = x - y
    bb = s - x
    e = (x - (s - bb)) + (-y - bb)  # TwoSum: x − y = s + e exactly
    sign = np.sign(np.where(x == y, 0.0, np.where(x > y, 1.0, -1.0))).astype(np.int8)
    mag_hi = np.abs(s)
    mag_lo = np.where(s < 0, -e, e)
    zero = sign == 0
    mag_hi = np.where(zero, 0.0, mag_hi)
    mag_lo = np.where(zero, 0.0, mag_lo)
    order = np.lexsort((mag_lo, mag_hi), axis=-1)
    hi = np.take_along_axis(mag_hi, order, axis=-1)
    lo = np.take_along_axis(mag_lo, order, axis=-1)
    rows, n = hi.shape
    idx = np.broadcast_to(np.arange(n), (rows, n))
    starts = np.ones((rows, n), dtype=bool)
    starts[:, 1:] = (hi[:, 1:] != hi[:, :-1]) | (lo[:, 1:] != lo[:, :-1])
    ends = np.ones((rows, n), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, idx, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, idx, n - 1)[:, ::-1], axis=1)[:, ::-1]
    scores = np.empty((rows, n), dtype=np.int64)
    np.put_along_axis(scores, order, first + last + 2, axis=1)  # 2 × midrank, 1-based
    if zero_method == "wilcox":  # ranked without the zeros: the zeros are the lowest group
        scores -= 2 * zero.sum(axis=1, keepdims=True)
    return sign, scores


def all_pair_tests(
    v: np.ndarray, pairs: list[tuple[int, int]], *, zero_method: str, exact_max_n: int
) -> list[PairTests]:
    """Both tests of every pair ``(i, j)`` of ``pairs`` (in that order), equal to
    ``paired.wilcoxon_signed_rank(v[:, i], v[:, j], zero_method=..., exact_max_n=...)`` and
    ``paired.sign_test(v[:, i], v[:, j])``.

    Raises
    ------
    app.domain.errors.InvalidInput, app.domain.errors.NotApplicable
        As the domain functions (bad options, NaN).
    """
    a = np.asarray(v, dtype=np.float64)
    if not pairs:
        return []
    if a.ndim != 2 or a.shape[0] == 0 or not np.isfinite(a).all():
        return _one_by_one(a, pairs, zero_method, exact_max_n)  # the domain's errors, inf
    n = a.shape[0]
    wilcoxon: dict[tuple[bytes, int], paired.WilcoxonResult] = {}
    signs: dict[tuple[int, int], paired.SignTestResult] = {}
    out: list[PairTests] = []
    pi = np.array([p[0] for p in pairs], dtype=np.intp)
    pj = np.array([p[1] for p in pairs], dtype=np.intp)
    at = np.ascontiguousarray(a.T)  # columns as rows: pairs × problems
    for start in range(0, len(pairs), _BLOCK):
        bi, bj = pi[start : start + _BLOCK], pj[start : start + _BLOCK]
        sign, scores = _exact_scores(at[bi], at[bj], zero_method)
        n_greater = np.count_nonzero(sign > 0, axis=1).tolist()
        n_less = np.count_nonzero(sign < 0, axis=1).tolist()
        # the signed-rank test depends on a pair only through the multiset of its scores (the
        # zeros' as 0: a non-zero difference scores at least 2) and the positive ones' sum
        magnitudes = np.sort(np.where(sign == 0, 0, scores), axis=1)
        t_obs = np.where(sign > 0, scores, 0).sum(axis=1).tolist()
        for r in range(bi.size):
            skey = (n_greater[r], n_less[r])
            s_res = signs.get(skey)
            if s_res is None:
                s_res = signs[skey] = paired.sign_test(*_canonical_signs(n, *skey))
            wkey = (magnitudes[r].tobytes(), t_obs[r])
            w_res = wilcoxon.get(wkey)
            if w_res is None:  # the first pair with this summary stands for all of them
                i, j = int(bi[r]), int(bj[r])
                w_res = wilcoxon[wkey] = paired.wilcoxon_signed_rank(
                    a[:, i], a[:, j], zero_method=zero_method, exact_max_n=exact_max_n
                )
            out.append(PairTests(int(bi[r]), int(bj[r]), w_res, s_res))
    return out


def _canonical_signs(n: int, n_greater: int, n_less: int) -> tuple[np.ndarray, np.ndarray]:
    """A pair with ``n_greater`` positive and ``n_less`` negative differences of ``n``."""
    x = np.zeros(n)
    x[:n_greater] = 1.0
    x[n_greater : n_greater + n_less] = -1.0
    return x, np.zeros(n)
