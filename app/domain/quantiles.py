"""Quantiles of a published table curve: the ``t`` with ``v1(t) = v`` (the inverse of the curve).

The curve is :class:`app.domain.curves.TableCurve` (the point estimate the service ranks with by
default): Eq. 28 on the knots inside the samples, the lower tail below ``limit``, the upper tail
above ``y_N``, the atom at ``f*``. It is non-decreasing, so

.. math:: q(v) = \\inf\\{t : v_1(t) \\ge v\\}, \\qquad 0 < v \\le 1,

is well defined; where ``v1`` jumps (the atom at ``f*``, ties at ``y_1``) or is flat, ``q`` is the
*left* end (the smallest ``t`` reaching ``v``). Inside each piece the inverse is exact: a power law
is inverted in log space (``t − f* = (y_k − f*)·(v/v_k)^{1/β}``, so ``t − f*`` stays accurate far
below the float resolution of ``f*``), the linear pieces by division. A ``v`` the curve never
reaches (above ``N/(N+1)`` with a flat upper tail) has no quantile (``nan``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.domain.curves import TableCurve
from app.domain.errors import InvalidInput

__all__ = ["Quantiles", "table_quantiles"]


@dataclass(frozen=True, eq=False)
class Quantiles:
    """``q(v)`` of a curve at several levels.

    Attributes
    ----------
    t : ndarray, shape (n,)
        ``q(v)`` (units of ``f``); ``nan`` where the curve never reaches ``v``.
    error : ndarray, shape (n,)
        ``q(v) − f*``, computed without cancellation in the lower tail (``nan`` when ``f*`` is
        unknown or there is no quantile).
    method : ndarray of str, shape (n,)
        The piece that answers: ``atom``, ``tail-power``, ``tail-linear``, ``tail-paper``,
        ``interpolated``, ``upper-tail`` or ``above-maximum``.
    """

    t: np.ndarray
    error: np.ndarray
    method: np.ndarray


def table_quantiles(curve: TableCurve, v: np.ndarray) -> Quantiles:
    """Invert a table curve at levels ``v``.

    Parameters
    ----------
    curve : TableCurve
        The published model (``V1Curve.table``).
    v : array_like, shape (n,)
        Levels in ``(0, 1]``.

    Returns
    -------
    Quantiles

    Raises
    ------
    InvalidInput
        A level outside ``(0, 1]`` (``field="v"``).
    """
    levels = np.atleast_1d(np.asarray(v, dtype=np.float64))
    if levels.ndim != 1 or not np.all((levels > 0.0) & (levels <= 1.0)):
        raise InvalidInput("every v must be in (0, 1]", field="v")
    n1 = curve.n + 1.0
    low, _up = curve.lower, curve.upper
    f_opt = low.f_opt
    t = np.full(levels.shape, np.nan)
    err = np.full(levels.shape, np.nan)
    method = np.empty(levels.shape, dtype=object)

    at_atom = (levels <= curve.atom) if curve.atom > 0 else np.zeros(levels.shape, dtype=bool)
    in_low = ~at_atom & (levels < low.v_top)
    top = curve.n / n1
    in_mid = ~at_atom & ~in_low & (levels <= top)
    in_up = ~(at_atom | in_low | in_mid)

    if np.any(at_atom):
        assert f_opt is not None
        t[at_atom], err[at_atom], method[at_atom] = f_opt, 0.0, "atom"
    if np.any(in_low):
        t[in_low], err[in_low] = _invert_lower(curve, levels[in_low], n1)
        method[in_low] = f"tail-{low.kind}"
    if np.any(in_mid):
        mid = np.interp(levels[in_mid] * n1, curve.counts, curve.values)
        t[in_mid] = np.maximum(mid, low.limit)  # c·(N+1) may round a hair below c_k
        method[in_mid] = "interpolated"
    if np.any(in_up):
        t[in_up], method[in_up] = _invert_upper(curve, levels[in_up], n1)
    if f_opt is not None:
        rest = ~(at_atom | in_low)
        err[rest] = t[rest] - f_opt
    return Quantiles(t=t, error=err, method=method)


def _invert_lower(curve: TableCurve, v: np.ndarray, n1: float) -> tuple[np.ndarray, np.ndarray]:
    """``(t, t − f*)`` in the lower tail (``v < v_top``)."""
    low = curve.lower
    if low.kind == "paper":
        t = low.limit + np.log(v) + math.log(n1)
        return t, np.full(v.shape, np.nan)
    assert low.f_opt is not None
    span = low.limit - low.f_opt
    if low.kind == "power":
        assert low.beta is not None
        assert low.anchor_count is not None
        ln_top = math.log(low.anchor_count) - math.log(n1)
        e = np.exp(math.log(span) + (np.log(v) - ln_top) / low.beta)
    else:  # linear from (f*, atom) to (y_1, v_top)
        e = (v - curve.atom) / (low.v_top - curve.atom) * span
    e = np.minimum(e, span)
    return low.f_opt + e, e


def _invert_upper(curve: TableCurve, v: np.ndarray, n1: float) -> tuple[np.ndarray, np.ndarray]:
    """``(t, method)`` above the samples (``v > N/(N+1)``)."""
    up = curve.upper
    t = np.full(v.shape, np.nan)
    method = np.full(v.shape, "above-maximum", dtype=object)
    if up.kind == "linear-to-f_max":
        assert up.f_max is not None
        span = up.f_max - up.y_n
        share = np.clip(v * n1 - curve.n, 0.0, 1.0)
        t = up.y_n + share * span if span > 0 else np.full(v.shape, up.y_n)
        method[:] = "upper-tail"
    elif up.kind == "paper":
        with np.errstate(divide="ignore"):
            t = -up.y_n * np.log1p(-v) / math.log(n1)
        ok = np.isfinite(t)
        t = np.where(ok, t, np.nan)
        method[ok] = "upper-tail"
    return t, method
