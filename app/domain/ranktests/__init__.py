"""Rank tests across problems: Friedman, Iman–Davenport, aligned ranks, Quade, post-hoc
comparisons with critical differences and cliques, and Bradley–Terry strengths.

Every statistic takes a matrix ``values`` of shape ``(n_problems, k_algorithms)`` (one row per
problem, the block; one column per algorithm) under **minimization**: within each problem the
smallest value gets rank 1 (best), ties get midranks. Ties are decided by
:func:`app.domain.ranking.rank_rows` with the caller's ``rtol``/``atol``, the one tie rule of
absrank. NaN is refused (the caller applies its declared missing-value policy first); ``±inf``
ranks like any other value in the rank-only statistics.

Degenerate but valid data (every problem ties all algorithms, perfect concordance, a win graph
that is not strongly connected) returns the documented value with ``degenerate=True`` and a
``reason``: never an error, never NaN. p-values are clipped to ``[0, 1]``; each has a
``log10_`` companion computed in log space (χ² and F tails by scipy's log-space integration
below the float range, the normal tail by ``log Φ``, the studentized range by a log-space
quadrature, the adjustments on ``log10 p``), finite whenever the p-value is positive.

Exact arithmetic
----------------
Friedman's χ² and Iman–Davenport's F are computed from ``S = Σ_j (Σ_i a_ij)²`` and
``Q = Σ_ij a_ij²`` with ``a_ij = 2 r_ij − (k + 1)`` in Python integers [5]_: ``χ² = (k − 1) S / Q``,
``F = (N − 1) S / (N Q − S)`` (docs/METHODS.md, "Per-test decisions", for the derivation).

Post-hoc tests
--------------
All compare average Friedman ranks through ``z_ij = (R_i − R_j) / sqrt(k (k + 1) / (6 N))``
[1]_ [2]_. Nemenyi's p-values are tail probabilities of the studentized range with infinitely
many degrees of freedom, i.e. of the range of ``k`` iid standard normals, computed by
:func:`studentized_range_sf` (a vectorized quadrature of the range distribution [16]_ that never
forms ``1 − cdf``). A pair is **significant when its adjusted p-value is < alpha** (so a p-value
of exactly 0 is significant). Cliques are computed from that same significance matrix.

References
----------
.. [1] J. Demšar (2006). Statistical comparisons of classifiers over multiple data sets.
       JMLR 7, 1–30.
.. [2] S. García, F. Herrera (2008). An extension on "Statistical comparisons of classifiers
       over multiple data sets" for all pairwise comparisons. JMLR 9, 2677–2694.
.. [3] S. García, A. Fernández, J. Luengo, F. Herrera (2010). Advanced nonparametric tests for
       multiple comparisons in the design of experiments in computational intelligence and
       data mining: experimental analysis of power. Information Sciences 180, 2044–2064.
.. [4] R. L. Iman, J. M. Davenport (1980). Approximations of the critical region of the
       Friedman statistic. Communications in Statistics – Theory and Methods 9, 571–595.
.. [5] W. J. Conover (1999). Practical Nonparametric Statistics, 3rd ed., Wiley: the Friedman
       test with ties and the Quade test (§5.8).
.. [6] D. Quade (1979). Using weighted rankings in the analysis of complete blocks with
       additive block effects. JASA 74, 680–683.
.. [7] J. L. Hodges, E. L. Lehmann (1962). Rank methods for combination of independent
       experiments in analysis of variance. Ann. Math. Statist. 33, 482–497.
.. [8] S. Holm (1979). A simple sequentially rejective multiple test procedure. Scand. J.
       Statist. 6, 65–70.
.. [9] Y. Hochberg (1988). A sharper Bonferroni procedure for multiple tests of significance.
       Biometrika 75, 800–802.
.. [10] G. Hommel (1988). A stagewise rejective multiple test procedure based on a modified
        Bonferroni test. Biometrika 75, 383–386.
.. [11] H. Finner (1993). On a monotonicity problem in step-down multiple test procedures.
        JASA 88, 920–923.
.. [12] J. D. Li (2008). A two-step rejection procedure for testing multiple hypotheses.
        J. Statist. Plann. Inference 138, 1521–1527.
.. [13] J. P. Shaffer (1986). Modified sequentially rejective multiple test procedures.
        JASA 81, 826–831.
.. [14] M. E. J. Newman (2023). Efficient computation of rankings from pairwise comparisons.
        JMLR 24, 1–25.
.. [15] E. Zermelo (1929). Die Berechnung der Turnier-Ergebnisse als ein Maximumproblem der
        Wahrscheinlichkeitsrechnung. Math. Z. 29, 436–460; L. R. Ford Jr. (1957). Solution of a
        ranking problem from binary comparisons. Amer. Math. Monthly 64, 28–33.
.. [16] H. A. David, H. N. Nagaraja (2003). Order Statistics, 3rd ed., Wiley: the distribution
        of the sample range, ``P(W <= w) = k ∫ f(x) [F(x + w) − F(x)]^{k−1} dx``.
.. [17] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking
        Optimization Algorithms (arXiv:2409.04479), Table I: the critical difference with the
        normal quantile at ``1 − α/(2k)`` (``cd_convention="jing-liu"``).
"""

from __future__ import annotations

from app.domain.ranktests._adjust import (
    AdjustedPValues,
    adjusted_family,
    adjusted_log10_pvalues,
    adjusted_pvalues,
    shaffer_true_hypotheses,
)
from app.domain.ranktests._bradley_terry import BradleyTerryResult, bradley_terry, pairwise_wins
from app.domain.ranktests._cliques import rank_cliques
from app.domain.ranktests._common import chi2_log10_sf, f_log10_sf, rank_matrix
from app.domain.ranktests._floor import WilcoxonFloorWarning, wilcoxon_floor_warning
from app.domain.ranktests._omnibus import (
    AlignedRanksResult,
    FriedmanResult,
    QuadeResult,
    friedman,
    friedman_aligned_ranks,
    quade,
)
from app.domain.ranktests._posthoc import (
    CD_CONVENTIONS,
    POSTHOC_METHODS,
    LowPowerWarning,
    PairColumns,
    PairComparison,
    PairsAlone,
    PosthocResult,
    bonferroni_dunn,
    critical_difference,
    low_power_warning,
    nemenyi,
    posthoc,
    posthoc_pairs_alone,
)
from app.domain.ranktests._studentized import (
    studentized_range_isf,
    studentized_range_log10_sf,
    studentized_range_sf,
)

__all__ = [
    "CD_CONVENTIONS",
    "POSTHOC_METHODS",
    "AdjustedPValues",
    "AlignedRanksResult",
    "BradleyTerryResult",
    "FriedmanResult",
    "LowPowerWarning",
    "PairColumns",
    "PairComparison",
    "PairsAlone",
    "PosthocResult",
    "QuadeResult",
    "WilcoxonFloorWarning",
    "adjusted_family",
    "adjusted_log10_pvalues",
    "adjusted_pvalues",
    "bonferroni_dunn",
    "bradley_terry",
    "chi2_log10_sf",
    "critical_difference",
    "f_log10_sf",
    "friedman",
    "friedman_aligned_ranks",
    "low_power_warning",
    "nemenyi",
    "pairwise_wins",
    "posthoc",
    "posthoc_pairs_alone",
    "quade",
    "rank_cliques",
    "rank_matrix",
    "shaffer_true_hypotheses",
    "studentized_range_isf",
    "studentized_range_log10_sf",
    "studentized_range_sf",
    "wilcoxon_floor_warning",
]
