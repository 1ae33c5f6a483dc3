"""The Vargha–Delaney A12 effect size."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from app.domain.ranking import midranks
from app.domain.twosample._common import A12_THRESHOLDS, two_samples_iv


@dataclass(frozen=True)
class A12Result:
    """Vargha–Delaney effect size ``A12`` of ``x`` against ``y`` [5]_.

    Attributes
    ----------
    a12 : float
        ``P(X > Y) + ½ P(X = Y)`` over all ``n_x n_y`` pairs. Under MINIMIZATION, ``A12 < 0.5``
        means ``x`` (algorithm A) tends to be better (smaller); ``A12 > 0.5`` means ``y`` does.
    magnitude : {"negligible", "small", "medium", "large"}
        From ``max(A12, 1 − A12)`` with thresholds 0.56, 0.64, 0.71 [5]_.
    better : {"x", "y"} or None
        The sample that tends to be smaller (better), None when ``A12 = 0.5`` exactly.
    interpretation : str
        One sentence saying the above.
    n_x, n_y : int
        Sample sizes.
    rtol, atol : float
        Tie tolerance ("equal" pairs count ½).
    """

    a12: float
    magnitude: str
    better: str | None
    interpretation: str
    n_x: int
    n_y: int
    rtol: float
    atol: float


def _a12_magnitude(k: int, big: int) -> str:
    """Magnitude of ``A12 = k / (2·big)`` compared exactly (rationals) with the thresholds."""
    share = Fraction(max(k, 2 * big - k), 2 * big)
    label = "negligible"
    for name, threshold in A12_THRESHOLDS:
        if share >= threshold:
            label = name
    return label


def _vargha_delaney_a12_iv(
    x: ArrayLike, y: ArrayLike, rtol: float, atol: float
) -> tuple[np.ndarray, np.ndarray]:
    return two_samples_iv(x, y, rtol, atol)


def vargha_delaney_a12(
    x: ArrayLike, y: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0
) -> A12Result:
    """Vargha–Delaney ``A12``: probability that a run of A is larger than one of B [5]_.

    Parameters
    ----------
    x : array_like, shape (n_x,)
        Runs of algorithm A (``±inf`` allowed, NaN refused).
    y : array_like, shape (n_y,)
        Runs of algorithm B.
    rtol, atol : float, optional
        Tie tolerance (:mod:`app.domain.ranking`); tied pairs count ½.

    Returns
    -------
    A12Result

    Raises
    ------
    app.domain.errors.InvalidInput
        Empty, non-1-D or NaN sample, bad tolerance.

    Notes
    -----
    .. math:: A_{12} = P(X > Y) + \\tfrac12 P(X = Y) = \\frac{R_x/n_x − (n_x + 1)/2}{n_y},

    with ``R_x`` the sum of the pooled midranks of ``x``. Under minimization ``A12 < 0.5`` means
    ``x`` tends to be better (smaller).

    Examples
    --------
    >>> res = vargha_delaney_a12([1, 2, 3], [2, 4, 6])
    >>> round(res.a12, 4), res.magnitude, res.better
    (0.1667, 'large', 'x')
    """
    xa, ya = _vargha_delaney_a12_iv(x, y, rtol, atol)
    n_x, n_y = xa.size, ya.size
    big = n_x * n_y
    scores = np.rint(2.0 * midranks(np.concatenate([xa, ya]), rtol=rtol, atol=atol))
    k = int(scores[:n_x].sum()) - n_x * (n_x + 1)  # 2 U_x = 2·big·A12
    a12 = k / (2.0 * big)
    magnitude = _a12_magnitude(k, big)
    better = None if k == big else ("x" if k < big else "y")
    if better is None:
        text = "neither sample tends to be smaller: A12 = 0.5"
    else:
        text = (
            f"{better} ({'A' if better == 'x' else 'B'}) tends to be smaller, i.e. better under "
            f"minimization: A12 = {a12:.4g} ({magnitude} effect)"
        )
    return A12Result(
        a12=a12,
        magnitude=magnitude,
        better=better,
        interpretation=text,
        n_x=n_x,
        n_y=n_y,
        rtol=float(rtol),
        atol=float(atol),
    )
