"""Post-hoc comparisons of average Friedman ranks, critical differences and the low-power rule."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache, partial

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from app.domain.errors import InvalidInput
from app.domain.ranking import check_tolerances, rank_rows
from app.domain.ranktests._adjust import AdjustedPValues, adjusted_family
from app.domain.ranktests._cliques import rank_cliques
from app.domain.ranktests._common import LN10, SQRT2, frozen, k_iv, matrix_iv
from app.domain.ranktests._studentized import (
    studentized_range_isf,
    studentized_range_log10_sf,
    studentized_range_sf,
)

# -------------------------------------------------------------------------------- post-hoc


@dataclass(frozen=True, slots=True)
class PairComparison:
    """One post-hoc comparison of two algorithms' average ranks.

    Attributes
    ----------
    i, j : int
        Algorithm indices: ``i < j`` for all pairs; ``i`` = the control for vs-control.
    rank_difference : float
        ``R_i − R_j`` (negative: ``i`` ranks better).
    z : float
        ``(R_i − R_j) / sqrt(k (k + 1) / (6 N))``.
    p_value : float
        Unadjusted two-sided normal p-value ``2 Φ(−|z|)``.
    p_adjusted : float
        The procedure's adjusted p-value (Nemenyi: studentized range with df = ∞).
    log10_p_value, log10_p_adjusted : float
        ``log10`` of ``p_value`` and ``p_adjusted`` without underflow (``log Φ``; the
        studentized range's log-space quadrature; :func:`adjusted_log10_pvalues`): finite.
    significant : bool
        ``p_adjusted < alpha``.
    """

    i: int
    j: int
    rank_difference: float
    z: float
    p_value: float
    p_adjusted: float
    log10_p_value: float
    log10_p_adjusted: float
    significant: bool


def _readonly(a: ArrayLike) -> np.ndarray:
    """A read-only copy that keeps its dtype (indices stay integers, flags booleans)."""
    out = np.array(a)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)  # holds arrays
class PairColumns:
    """Every pair of a post-hoc family as columns (read-only arrays, one entry per pair, in the
    order of :attr:`PosthocResult.pairs`); the fields are :class:`PairComparison`'s."""

    i: np.ndarray
    j: np.ndarray
    rank_difference: np.ndarray
    z: np.ndarray
    p_value: np.ndarray
    p_adjusted: np.ndarray
    log10_p_value: np.ndarray
    log10_p_adjusted: np.ndarray
    significant: np.ndarray

    @classmethod
    def none(cls) -> PairColumns:
        """No pairs (a result whose pairs are left out of an answer)."""
        empty = _readonly(np.empty(0))
        return cls(*(empty,) * 9)

    def rows(self) -> tuple[PairComparison, ...]:
        """One :class:`PairComparison` per pair (Python ints, floats and bools)."""
        columns = (
            self.i,
            self.j,
            self.rank_difference,
            self.z,
            self.p_value,
            self.p_adjusted,
            self.log10_p_value,
            self.log10_p_adjusted,
            self.significant,
        )
        return tuple(
            PairComparison(*row) for row in zip(*(c.tolist() for c in columns), strict=True)
        )


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class PosthocResult:
    """Post-hoc comparisons of average Friedman ranks.

    Attributes
    ----------
    procedure : str
        The post-hoc procedure (a key of :data:`POSTHOC_METHODS`).
    comparison : str
        ``"all-pairs"`` or ``"vs-control"``.
    alpha : float
        Family-wise level; a pair is significant when ``p_adjusted < alpha``.
    control : int or None
        The control's index (vs-control), else None.
    average_ranks : ndarray, shape (k_algorithms,)
        Average Friedman ranks (1 = best).
    n_problems, n_algorithms : int
        ``N`` and ``k``.
    critical_difference : float or None
        Nemenyi's or Bonferroni–Dunn's ``CD = critical_value · sqrt(k (k + 1) / (6 N))``;
        None for the step-wise procedures.
    critical_value : float or None
        Nemenyi: ``q_α / √2`` (Demšar's ``q_α``, the studentized-range quantile with df = ∞
        divided by √2); Bonferroni–Dunn: the normal quantile at ``1 − α / (2 (k − 1))``;
        either under ``cd_convention="jing-liu"``: the normal quantile at ``1 − α / (2k)``.
    pair_columns : PairColumns
        All pairs ``(i, j)``, ``i < j``, in lexicographic order; or ``(control, j)`` for every
        other ``j`` in increasing order, as columns. :attr:`pairs` gives them one object per
        pair, built on first use (4,950 objects for k = 100 cost as much as the test itself).
    p_matrix : ndarray, shape (k_algorithms, k_algorithms) or None
        All pairs: symmetric adjusted p-values, 1 on the diagonal. None for vs-control.
    p_vs_control : ndarray, shape (k_algorithms,) or None
        vs-control: adjusted p-value of each algorithm against the control (1 for the control).
        None for all pairs.
    log10_p_matrix, log10_p_vs_control : ndarray or None
        ``log10`` of ``p_matrix`` and ``p_vs_control`` without underflow (0 on the diagonal
        and for the control).
    cliques : tuple of tuple of int
        Groups of algorithms not significantly different, from the ``significant`` flags only
        (:func:`rank_cliques`); vs-control: the control with every algorithm not significantly
        different from it, if any. Members are listed by increasing average rank.
    method : str
        ``"asymptotic"`` (normal or studentized-range approximation of rank differences).
    degenerate : bool
        True when every problem ties all algorithms (all p-values 1).
    reason : str or None
        Why the result is degenerate.
    cd_convention : {"standard", "jing-liu"}
        The critical value's convention (:data:`CD_CONVENTIONS`); ``"jing-liu"`` also sets
        ``p_adjusted = min(1, k · p_value)``, the p-value that convention's CD tests, so the
        ``significant`` flags and the cliques agree with the reported CD.
    """

    procedure: str
    comparison: str
    alpha: float
    control: int | None
    average_ranks: np.ndarray
    n_problems: int
    n_algorithms: int
    critical_difference: float | None
    critical_value: float | None
    pair_columns: PairColumns
    p_matrix: np.ndarray | None
    p_vs_control: np.ndarray | None
    log10_p_matrix: np.ndarray | None
    log10_p_vs_control: np.ndarray | None
    cliques: tuple[tuple[int, ...], ...]
    method: str
    degenerate: bool
    reason: str | None
    cd_convention: str = "standard"
    low_power: LowPowerWarning | None = None

    @cached_property
    def pairs(self) -> tuple[PairComparison, ...]:
        """:attr:`pair_columns` as one :class:`PairComparison` per pair, in the same order."""
        return self.pair_columns.rows()


@dataclass(frozen=True)
class LowPowerWarning:
    """Too few problems for the rank tests to find differences: the rule and its numbers.

    The rule (docs/METHODS.md, "Too few problems"): warn when the critical difference of
    average ranks exceeds half the largest possible difference, ``CD > (k − 1) / 2``, so only
    pairs of algorithms at least half the rank range apart could be found significant. The CD
    is the standard one (Demšar [1]_): Nemenyi's ``q_α/√2 · sqrt(k (k + 1) / (6 N))`` for all
    pairs, Bonferroni–Dunn's for a control, whatever procedure was asked (step-wise
    procedures are somewhat more powerful; the rule screens the design, N and k at α).

    Attributes
    ----------
    n_problems, n_algorithms : int
        ``N`` and ``k``.
    alpha : float
        The family-wise level.
    comparison : str
        ``"all-pairs"`` (Nemenyi's CD) or ``"vs-control"`` (Bonferroni–Dunn's).
    critical_difference : float
        The CD at this ``N``.
    threshold : float
        ``(k − 1) / 2``.
    n_needed : int
        The smallest ``N`` with ``CD ≤ (k − 1) / 2`` (``CD ∝ 1/√N``).
    chi2_rough : bool
        Not ``N > 10 and k > 5``: outside Demšar's rule of thumb for Friedman's χ²
        approximation [1]_ (Iman–Davenport's ``F`` is the better read there [4]_).
    message : str
        The warning in words, naming all of the above.
    """

    n_problems: int
    n_algorithms: int
    alpha: float
    comparison: str
    critical_difference: float
    threshold: float
    n_needed: int
    chi2_rough: bool
    message: str
    kind: str = "low-power"


def low_power_warning(
    n_problems: int,
    n_algorithms: int,
    alpha: float,
    comparison: str = "all-pairs",
    cd_convention: str = "standard",
) -> LowPowerWarning | None:
    """The :class:`LowPowerWarning` of ``N`` problems and ``k`` algorithms, or None (the CD of
    ``cd_convention``: the standard Nemenyi/Bonferroni–Dunn one, or Jing & Liu's).

    Examples
    --------
    >>> w = low_power_warning(3, 11, 0.05)
    >>> round(w.critical_difference, 2), w.threshold, w.n_needed
    (8.72, 5.0, 10)
    >>> low_power_warning(10, 11, 0.05) is None
    True
    """
    n, k = int(n_problems), int(n_algorithms)
    if k < 2 or n < 1:
        return None
    if cd_convention == "jing-liu":
        critical = _jing_liu_critical(alpha, k)
    elif comparison == "all-pairs":
        critical = _nemenyi_critical(alpha, k)
    else:
        critical = _bonferroni_dunn_critical(alpha, k)
    unit = critical * math.sqrt(k * (k + 1) / 6.0)  # CD = unit / √N
    cd = unit / math.sqrt(n)
    threshold = (k - 1) / 2.0
    if cd <= threshold:
        return None
    n_needed = max(1, math.ceil((unit / threshold) ** 2))
    while unit / math.sqrt(n_needed) > threshold:  # guard the ceiling against rounding
        n_needed += 1
    while n_needed > 1 and unit / math.sqrt(n_needed - 1) <= threshold:
        n_needed -= 1
    name = (
        "Jing & Liu (Table I)"
        if cd_convention == "jing-liu"
        else "Nemenyi"
        if comparison == "all-pairs"
        else "Bonferroni–Dunn"
    )
    message = (
        f"too few problems for the rank tests: N = {n} problems, k = {k} algorithms, "
        f"alpha = {alpha:g}: the {name} critical difference CD = {cd:.3g} exceeds (k − 1)/2 = "
        f"{threshold:g}, so only algorithms whose average ranks differ by more than half the "
        f"largest possible difference can be found different, and the cliques say little; "
        f"N >= {n_needed} problems are needed for CD <= (k − 1)/2"
    )
    chi2_rough = not (n > 10 and k > 5)
    if chi2_rough:
        message += (
            "; Friedman's chi-square approximation is rough here (Demšar 2006's rule of thumb: "
            "N > 10 and k > 5), read Iman–Davenport's F"
        )
    return LowPowerWarning(
        n_problems=n,
        n_algorithms=k,
        alpha=float(alpha),
        comparison=comparison,
        critical_difference=cd,
        threshold=threshold,
        n_needed=n_needed,
        chi2_rough=chi2_rough,
        message=message,
    )


@lru_cache(maxsize=256)
def _nemenyi_critical(alpha: float, k: int) -> float:
    # cached: a Nemenyi call asks twice (its CD, then the low-power rule's), 0.35 ms each
    return studentized_range_isf(alpha, k) / SQRT2


def _upper_normal_quantile(p: float) -> float:
    # z with Φ(−z) = p, i.e. scipy.stats.norm.isf(p): −Φ⁻¹(p) keeps full precision where
    # Φ⁻¹(1 − p) rounds 1 − p to 1 (p < 1.1e-16 gives ∞; p = 1e-10 loses the 9th digit)
    return float(-special.ndtri(p))


def _bonferroni_dunn_critical(alpha: float, k: int) -> float:
    return _upper_normal_quantile(alpha / (2.0 * (k - 1)))


def _nemenyi_adjust(
    z_abs: np.ndarray, p: np.ndarray, log10_p: np.ndarray, k: int
) -> AdjustedPValues:
    # sums of midranks are exact, so equal |z| are bitwise equal: evaluate each once
    unique, inverse = np.unique(z_abs, return_inverse=True)
    q = unique * SQRT2
    sf = studentized_range_sf(q, k)
    return AdjustedPValues(sf[inverse], studentized_range_log10_sf(q, k, sf)[inverse])


def _family_adjust(
    z_abs: np.ndarray, p: np.ndarray, log10_p: np.ndarray, k: int, *, name: str
) -> AdjustedPValues:
    return adjusted_family(p, log10_p, method=name)


@dataclass(frozen=True)
class _Procedure:
    comparisons: frozenset[str]  # allowed: "all-pairs", "vs-control"
    # (|z|, raw p, log10 raw p, k) -> adjusted p-values and their logs
    adjust: Callable[[np.ndarray, np.ndarray, np.ndarray, int], AdjustedPValues]
    critical: Callable[[float, int], float] | None  # (alpha, k) -> critical value on |z|


def _jing_liu_critical(alpha: float, k: int) -> float:
    # Jing & Liu's Table I [17]_: the normal quantile at 1 − α/(2k), k the number of algorithms
    return _upper_normal_quantile(alpha / (2.0 * k))


def _jing_liu_adjust(
    z_abs: np.ndarray, p: np.ndarray, log10_p: np.ndarray, k: int
) -> AdjustedPValues:
    # min(1, k·p) < α  ⇔  2Φ(−|z|) < α/k  ⇔  |z| > z_{1 − α/(2k)}: significant iff |ΔR| > CD
    return AdjustedPValues(np.minimum(1.0, k * p), np.minimum(0.0, log10_p + math.log10(k)))


_ALL = frozenset({"all-pairs"})
_CONTROL = frozenset({"vs-control"})
_EITHER = _ALL | _CONTROL
POSTHOC_METHODS: dict[str, _Procedure] = {
    "nemenyi": _Procedure(_ALL, _nemenyi_adjust, _nemenyi_critical),
    "bonferroni-dunn": _Procedure(
        _CONTROL, partial(_family_adjust, name="bonferroni"), _bonferroni_dunn_critical
    ),
    "holm": _Procedure(_EITHER, partial(_family_adjust, name="holm"), None),
    "hochberg": _Procedure(_EITHER, partial(_family_adjust, name="hochberg"), None),
    "hommel": _Procedure(_EITHER, partial(_family_adjust, name="hommel"), None),
    "finner": _Procedure(_EITHER, partial(_family_adjust, name="finner"), None),
    "li": _Procedure(_CONTROL, partial(_family_adjust, name="li"), None),
    "shaffer": _Procedure(_ALL, partial(_family_adjust, name="shaffer"), None),
}
"""Post-hoc procedures by name, with the comparisons each allows."""

CD_CONVENTIONS: dict[str, _Procedure | None] = {
    "standard": None,  # each procedure's own critical value and adjustment
    "jing-liu": _Procedure(_EITHER, _jing_liu_adjust, _jing_liu_critical),
}
"""Critical-value conventions of the procedures with a CD (nemenyi, bonferroni-dunn):
``"standard"`` keeps each procedure's own (Demšar [1]_); ``"jing-liu"`` is the normal quantile at
``1 − α/(2k)`` of Jing & Liu's Table I [17]_, with the adjusted p-values it implies."""


def _convention_iv(procedure: _Procedure, method: str, cd_convention: object) -> _Procedure:
    if not isinstance(cd_convention, str) or cd_convention not in CD_CONVENTIONS:
        raise InvalidInput(
            f"unknown cd_convention {cd_convention!r}; choose one of {sorted(CD_CONVENTIONS)}",
            field="cd_convention",
        )
    convention = CD_CONVENTIONS[cd_convention]
    if convention is None:
        return procedure
    if procedure.critical is None:
        raise InvalidInput(
            f"cd_convention {cd_convention!r} changes a critical difference; {method} has none "
            "(use nemenyi or bonferroni-dunn, or cd_convention='standard')",
            field="cd_convention",
        )
    return replace(procedure, critical=convention.critical, adjust=convention.adjust)


def _comparison_iv(method: str, procedure: _Procedure, control: object, k: int) -> str:
    if control is None:
        if "all-pairs" not in procedure.comparisons:
            raise InvalidInput(
                f"{method} compares against a control: give control", field="control"
            )
        return "all-pairs"
    if "vs-control" not in procedure.comparisons:
        raise InvalidInput(
            f"{method} compares all pairs; omit control (or use holm, hochberg, hommel, finner, "
            "li or bonferroni-dunn against a control)",
            field="control",
        )
    if isinstance(control, bool) or not isinstance(control, int | np.integer):
        raise InvalidInput(f"control must be an algorithm index, got {control!r}", field="control")
    if not 0 <= control < k:
        raise InvalidInput(f"control must be in [0, {k - 1}], got {control}", field="control")
    return "vs-control"


def _posthoc_iv(
    values: ArrayLike,
    method: str,
    alpha: float,
    control: object,
    rtol: float,
    atol: float,
    cd_convention: object = "standard",
) -> tuple[_Procedure, str, np.ndarray]:
    """The checks :func:`posthoc` and :func:`posthoc_pairs_alone` share: the procedure (with
    its CD convention), alpha, the matrix, the comparison (``"all-pairs"`` or
    ``"vs-control"``) and the tie tolerances; returns the procedure, the comparison and the
    matrix (not ranked: each caller ranks what it tests)."""
    procedure = POSTHOC_METHODS.get(method) if isinstance(method, str) else None
    if procedure is None:
        raise InvalidInput(
            f"unknown post-hoc method {method!r}; choose one of {sorted(POSTHOC_METHODS)}",
            field="method",
        )
    if not (isinstance(alpha, int | float | np.floating) and 0.0 < alpha < 1.0):
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha!r}", field="alpha")
    procedure = _convention_iv(procedure, method, cd_convention)
    a = matrix_iv(values, min_problems=1)
    comparison = _comparison_iv(method, procedure, control, a.shape[1])
    check_tolerances(rtol, atol)
    return procedure, comparison, a


def _pair_indices(comparison: str, k: int, control: int | None) -> tuple[np.ndarray, np.ndarray]:
    if comparison == "all-pairs":
        return np.triu_indices(k, 1)
    others = np.array([j for j in range(k) if j != control], dtype=np.intp)
    return np.full(others.size, control, dtype=np.intp), others


def _control_clique(
    control: int, others: np.ndarray, sig: np.ndarray, average: np.ndarray
) -> tuple[tuple[int, ...], ...]:
    group = np.concatenate(([control], others[~sig]))
    if group.size < 2:
        return ()
    group = group[np.argsort(average[group], kind="stable")]
    return (tuple(int(x) for x in group),)


def posthoc(
    values: ArrayLike,
    *,
    method: str = "nemenyi",
    alpha: float = 0.05,
    control: int | None = None,
    rtol: float = 0.0,
    atol: float = 0.0,
    cd_convention: str = "standard",
) -> PosthocResult:
    """Post-hoc comparisons of average Friedman ranks, all pairs or against a control.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, smaller is better; ``±inf`` allowed, NaN refused.
    method : str, optional
        One of :data:`POSTHOC_METHODS`:

        * ``"nemenyi"`` — all pairs, single step, studentized range (df = ∞) [1]_;
        * ``"shaffer"`` — all pairs, static Shaffer [13]_ [2]_;
        * ``"bonferroni-dunn"`` and ``"li"`` — against ``control`` only [1]_ [12]_;
        * ``"holm"``, ``"hochberg"``, ``"hommel"``, ``"finner"`` — all pairs, or against
          ``control`` when it is given [2]_.
    alpha : float, optional
        Family-wise level in ``(0, 1)``; ``significant = p_adjusted < alpha``.
    control : int or None, optional
        Index of the control algorithm (required by bonferroni-dunn and li, refused by
        nemenyi and shaffer).
    rtol, atol : float, optional
        Tie tolerance (:mod:`app.domain.ranking`).
    cd_convention : {"standard", "jing-liu"}, optional
        ``"jing-liu"`` (nemenyi and bonferroni-dunn only): the critical value is the normal
        quantile at ``1 − α/(2k)`` (Jing & Liu, Table I [17]_) and ``p_adjusted = min(1, k p)``,
        so that significance, cliques and CD agree. The default keeps Demšar's [1]_.

    Returns
    -------
    PosthocResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Bad matrix (see :func:`rank_matrix`), unknown ``method``, ``alpha`` outside
        ``(0, 1)``, ``control`` missing, unexpected or out of range (``control``), or an
        unknown ``cd_convention``, or one given to a procedure without a CD.

    Notes
    -----
    ``z_ij = (R_i − R_j) / sqrt(k (k + 1) / (6 N))`` for average ranks ``R`` [1]_; the
    unadjusted p-value is ``2 Φ(−|z|)``. The family is the ``k (k − 1)/2`` pairs or the
    ``k − 1`` comparisons with the control. Nemenyi's adjusted p-value is
    ``P(Q_{k,∞} >= √2 |z|)`` (scikit-posthocs' ``posthoc_nemenyi_friedman``), so a pair is
    significant iff ``|R_i − R_j| > CD`` (up to rounding at the boundary): the cliques and the
    critical difference tell the same story. Bonferroni–Dunn multiplies by ``k − 1``.

    Examples
    --------
    >>> base = [-5.2, -6.0, -2.1, -1.7, -6.4]
    >>> res = posthoc([[v + 0.01 * j for v in base] for j in range(10)], method="nemenyi")
    >>> round(res.critical_difference, 3), res.cliques
    (1.929, ((4, 1), (1, 0), (0, 2), (2, 3)))
    """
    procedure, comparison, a = _posthoc_iv(
        values, method, alpha, control, rtol, atol, cd_convention
    )
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    n, k = ranks.shape
    ctrl = None if control is None else int(control)
    i, j = _pair_indices(comparison, k, ctrl)
    sums = ranks.sum(axis=0)  # exact multiples of 1/2
    se = math.sqrt(k * (k + 1) / (6.0 * n))
    diff = (sums[i] - sums[j]) / n
    z = diff / se
    z_abs = np.abs(z)
    p = np.minimum(1.0, 2.0 * special.ndtr(-z_abs))
    log_p = np.minimum(0.0, (math.log(2.0) + special.log_ndtr(-z_abs)) / LN10)
    adjusted = procedure.adjust(z_abs, p, log_p, k)
    log_adj = np.minimum(adjusted.log10_p, 0.0)
    p_adj = np.clip(adjusted.p, 0.0, 1.0)
    sig = p_adj < alpha
    critical = None if procedure.critical is None else procedure.critical(alpha, k)
    cd = None if critical is None else critical * se
    average = ranks.mean(axis=0)
    p_matrix: NDArray[np.float64] | None
    log_matrix: NDArray[np.float64] | None
    if comparison == "all-pairs":
        p_matrix, log_matrix = np.ones((k, k)), np.zeros((k, k))
        p_matrix[i, j] = p_matrix[j, i] = p_adj
        log_matrix[i, j] = log_matrix[j, i] = log_adj
        sig_matrix = np.zeros((k, k), dtype=bool)
        sig_matrix[i, j] = sig_matrix[j, i] = sig
        cliques, p_control, log_control = rank_cliques(sig_matrix, average), None, None
    else:
        p_control, log_control = np.ones(k), np.zeros(k)
        p_control[j] = p_adj
        log_control[j] = log_adj
        assert ctrl is not None  # _comparison_iv: a vs-control family has a control
        cliques = _control_clique(ctrl, j, sig, average)
        p_matrix = log_matrix = None
    tied = bool(np.all(ranks == (k + 1) / 2.0))
    reason = "every problem ties all algorithms: no differences to test (all p = 1)"
    return PosthocResult(
        procedure=method,
        comparison=comparison,
        alpha=float(alpha),
        control=ctrl,
        average_ranks=frozen(average),
        n_problems=n,
        n_algorithms=k,
        critical_difference=cd,
        critical_value=critical,
        pair_columns=PairColumns(
            *(_readonly(c) for c in (i, j, diff, z, p, p_adj, log_p, log_adj, sig))
        ),
        p_matrix=None if p_matrix is None else frozen(p_matrix),
        p_vs_control=None if p_control is None else frozen(p_control),
        log10_p_matrix=None if log_matrix is None else frozen(log_matrix),
        log10_p_vs_control=None if log_control is None else frozen(log_control),
        cliques=cliques,
        method="asymptotic",
        degenerate=tied,
        reason=reason if tied else None,
        cd_convention=cd_convention,
        low_power=low_power_warning(n, k, float(alpha), comparison, cd_convention),
    )


def nemenyi(
    values: ArrayLike, *, alpha: float = 0.05, rtol: float = 0.0, atol: float = 0.0
) -> PosthocResult:
    """Nemenyi all-pairs test with critical difference and cliques (:func:`posthoc`).

    ``CD = q_α sqrt(k (k + 1) / (6 N))`` with ``q_α`` the upper-α studentized-range quantile
    (df = ∞) divided by √2 [1]_: 1.929 for ``k = 5``, ``N = 10``, ``α = 0.05``.
    """
    return posthoc(values, method="nemenyi", alpha=alpha, rtol=rtol, atol=atol)


def bonferroni_dunn(
    values: ArrayLike,
    *,
    control: int,
    alpha: float = 0.05,
    rtol: float = 0.0,
    atol: float = 0.0,
) -> PosthocResult:
    """Bonferroni–Dunn test against ``control`` (:func:`posthoc`).

    ``CD = z_{1 − α/(2(k − 1))} sqrt(k (k + 1) / (6 N))`` [1]_; adjusted p-values are
    ``min(1, (k − 1) · 2 Φ(−|z|))``.
    """
    return posthoc(
        values, method="bonferroni-dunn", alpha=alpha, control=control, rtol=rtol, atol=atol
    )


_CD_METHODS: dict[str, Callable[[float, int], float]] = {
    "nemenyi": _nemenyi_critical,
    "bonferroni-dunn": _bonferroni_dunn_critical,
}


def critical_difference(
    n_algorithms: int,
    n_problems: int,
    *,
    alpha: float = 0.05,
    method: str = "nemenyi",
    cd_convention: str = "standard",
) -> float:
    """Critical difference of average ranks (Nemenyi or Bonferroni–Dunn) [1]_.

    Parameters
    ----------
    n_algorithms, n_problems : int
        ``k >= 2`` and ``N >= 1``.
    alpha : float, optional
        Level in ``(0, 1)``.
    method : {"nemenyi", "bonferroni-dunn"}, optional
        Which critical value.
    cd_convention : {"standard", "jing-liu"}, optional
        ``"jing-liu"``: the normal quantile at ``1 − α/(2k)`` for either method (Jing & Liu,
        Table I [17]_; :data:`CD_CONVENTIONS`).

    Returns
    -------
    float
        ``critical_value · sqrt(k (k + 1) / (6 N))``.

    Examples
    --------
    >>> round(critical_difference(5, 10), 3)
    1.929
    >>> round(critical_difference(5, 10, cd_convention="jing-liu"), 3)
    1.821
    """
    critical = _CD_METHODS.get(method) if isinstance(method, str) else None
    if critical is None:
        raise InvalidInput(
            f"unknown method {method!r}; choose one of {sorted(_CD_METHODS)}", field="method"
        )
    procedure = _convention_iv(
        _Procedure(_EITHER, partial(_family_adjust, name="bonferroni"), critical),
        method,
        cd_convention,
    )
    critical = procedure.critical
    assert critical is not None
    if not (isinstance(alpha, int | float | np.floating) and 0.0 < alpha < 1.0):
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha!r}", field="alpha")
    k = k_iv(n_algorithms, field="algorithms")
    if isinstance(n_problems, bool) or not isinstance(n_problems, int) or n_problems < 1:
        raise InvalidInput(
            f"n_problems must be an integer >= 1, got {n_problems!r}", field="problems"
        )
    return critical(alpha, k) * math.sqrt(k * (k + 1) / (6.0 * n_problems))


@dataclass(frozen=True, eq=False)  # holds arrays
class PairsAlone:
    """What :func:`posthoc` concludes about each of several pairs analysed alone
    (:func:`posthoc_pairs_alone`).

    Attributes
    ----------
    average_i, average_j : ndarray, shape (n_pairs,)
        The two algorithms' average ranks within the pair (each 1 to 2).
    significant : ndarray of object, shape (n_pairs,)
        ``p_adjusted < alpha`` of the pair's one comparison; None for a pair without the
        control when there is one (the pair alone has no comparison with it).
    """

    average_i: np.ndarray
    average_j: np.ndarray
    significant: np.ndarray


def posthoc_pairs_alone(
    values: ArrayLike,
    i: ArrayLike,
    j: ArrayLike,
    *,
    method: str = "nemenyi",
    alpha: float = 0.05,
    control: int | None = None,
    rtol: float = 0.0,
    atol: float = 0.0,
    cd_convention: str = "standard",
) -> PairsAlone:
    """:func:`posthoc` of every pair ``values[:, [i_p, j_p]]`` alone, at once, exactly.

    Gives, for each pair ``p`` (``i_p < j_p``), the average ranks and the significance that
    ``posthoc(values[:, [i_p, j_p]], method=..., control=c_p, ...)`` gives, with ``c_p`` the
    control's position in the pair or None; when ``control`` is given and a pair lacks it, its
    average ranks (those of :func:`rank_rows` on the pair) and significance None.
    The ranks of all pairs come from one :func:`rank_rows` call; the pair's one p-value is
    adjusted (a family of one) by the procedure itself once per distinct ``|z|``, which takes at
    most ``2N + 1`` values.

    Raises
    ------
    app.domain.errors.InvalidInput
        As :func:`posthoc` on ``values``.
    """
    procedure, _, a = _posthoc_iv(values, method, alpha, control, rtol, atol, cd_convention)
    ii = np.asarray(i, dtype=np.intp).ravel()
    jj = np.asarray(j, dtype=np.intp).ravel()
    tested = np.ones(ii.size, dtype=bool) if control is None else (ii == control) | (jj == control)
    n = a.shape[0]
    pairs = np.stack((a[:, ii].T, a[:, jj].T), axis=-1)  # (pairs, problems, 2)
    ranks = rank_rows(pairs.reshape(-1, 2), rtol=rtol, atol=atol).reshape(pairs.shape)
    sums = ranks.sum(axis=1)  # exact multiples of 1/2
    se = math.sqrt(2 * 3 / (6.0 * n))
    z_abs = np.abs(((sums[:, 0] - sums[:, 1]) / n) / se)
    verdict: dict[float, bool] = {}
    significant = np.full(ii.size, None, dtype=object)
    for p in np.flatnonzero(tested).tolist():
        value = float(z_abs[p])
        sig = verdict.get(value)
        if sig is None:
            za = np.array([value])
            p_raw = np.minimum(1.0, 2.0 * special.ndtr(-za))
            log_p = np.minimum(0.0, (math.log(2.0) + special.log_ndtr(-za)) / LN10)
            adjusted = procedure.adjust(za, p_raw, log_p, 2)
            sig = verdict[value] = bool(np.clip(adjusted.p, 0.0, 1.0)[0] < alpha)
        significant[p] = sig
    return PairsAlone(sums[:, 0] / n, sums[:, 1] / n, significant)
