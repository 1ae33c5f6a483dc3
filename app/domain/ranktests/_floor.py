"""The power floor of the paired Wilcoxon tests on absolute ranks: too few problems for any
adjusted pair to be significant (the absolute CD diagram's low-power warning)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.domain.ranktests._adjust import adjusted_family


@dataclass(frozen=True)
class WilcoxonFloorWarning:
    """Too few problems for any adjusted Wilcoxon test over them to be significant.

    With ``N`` problems the exact two-sided Wilcoxon signed-rank p-value is at least
    ``2^(1 − N)`` (every difference of one sign; zeros and ties only raise it). The family's
    adjustment of ``m`` pairs all at that floor is the smallest adjusted p any data can give
    (the adjustments are monotone in each p-value); when it is ``>= alpha`` no pair can be
    found different whatever the algorithms did, and a diagram's bars say nothing.

    Attributes
    ----------
    n_problems, n_pairs : int
        ``N`` and ``m``.
    alpha : float
    adjustment : str
        The family's adjustment (:func:`app.domain.ranktests.adjusted_pvalues`).
    floor_p, floor_adjusted : float
        ``2^(1 − N)`` and its adjustment within the family.
    n_needed : int
        The smallest ``N`` whose adjusted floor is ``< alpha``.
    message : str
    """

    n_problems: int
    n_pairs: int
    alpha: float
    adjustment: str
    floor_p: float
    floor_adjusted: float
    n_needed: int
    message: str
    kind: str = "low-power"


def _adjusted_floor(n: int, m: int, adjustment: str) -> tuple[float, float]:
    floor = min(1.0, 2.0 ** (1 - n))
    p = np.full(m, floor)
    return floor, float(np.min(adjusted_family(p, np.log10(p), method=adjustment).p))


def wilcoxon_floor_warning(
    n_problems: int, n_pairs: int, *, alpha: float, adjustment: str
) -> WilcoxonFloorWarning | None:
    """The :class:`WilcoxonFloorWarning` of ``N`` problems and ``m`` adjusted pairs, or None
    (some data could make a pair significant).

    Examples
    --------
    >>> w = wilcoxon_floor_warning(5, 3, alpha=0.05, adjustment="holm")
    >>> w.floor_p, w.floor_adjusted, w.n_needed
    (0.0625, 0.1875, 7)
    >>> wilcoxon_floor_warning(7, 3, alpha=0.05, adjustment="holm") is None
    True
    """
    n, m = int(n_problems), int(n_pairs)
    if m < 1 or n < 1:
        return None
    floor, adjusted = _adjusted_floor(n, m, adjustment)
    if adjusted < alpha:
        return None
    n_needed = n + 1
    while _adjusted_floor(n_needed, m, adjustment)[1] >= alpha:
        n_needed += 1
    message = (
        f"too few problems for the tests on absolute ranks: with N = {n} problems a Wilcoxon "
        f"signed-rank p is at least 2^(1 − N) = {floor:.3g}, {adjustment}-adjusted over "
        f"{m} pairs at least {adjusted:.3g} >= alpha = {alpha:g}, so no pair can be found "
        f"different and the bars join everything; N >= {n_needed} problems are needed"
    )
    return WilcoxonFloorWarning(n, m, float(alpha), adjustment, floor, adjusted, n_needed, message)
