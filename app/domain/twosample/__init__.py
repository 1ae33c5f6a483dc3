"""Two independent samples: rank-sum (Mann–Whitney U), two-sample KS and Vargha–Delaney A12.

``x`` holds the runs of algorithm A and ``y`` those of algorithm B on one problem.
Values are *minimized*; ``alternative="less"`` is the hypothesis that ``x`` tends to be smaller
(better) than ``y``, ``"greater"`` the reverse. ``±inf`` is allowed (for example runtimes of runs
that never hit the target) and NaN refused.

Ties are decided once by :func:`app.domain.ranking.tie_labels` with the declared ``rtol``/``atol``
(default exact equality). The exact tests are *conditional on the tie structure* of the pooled
sample: under H0 all ``C(n, n_x)`` ways of labelling the sorted pooled values as ``x`` or ``y`` are
equally likely, and the exact p-value is the share of labellings whose statistic is at least as
extreme as the observed one. Statistics are compared as integers (twice the ``U`` statistic; the
KS distance times ``n_x n_y``), so float noise cannot split a tie. Tail probabilities are sums of
positive terms taken directly on the tail (never ``1 − cdf``).

Degenerate but valid data (every pooled value tied) give p = 1 with ``degenerate=True`` and a
reason: never an error, never NaN. The one exception is the rank-sum normal approximation without
tie correction (scipy's ``ranksums``), whose variance does not vanish under ties: it gives
``z = 0`` and its own p (1 two-sided, 1/2 one-sided), still flagged degenerate.

References
----------
.. [1] H. B. Mann, D. R. Whitney. On a test of whether one of two random variables is
       stochastically larger than the other. Ann. Math. Statist. 18, 1947.
.. [2] B. Streitberg, J. Röhmel. Exact distributions for permutation and rank tests: an
       introduction to some recently published algorithms. Statistical Software Newsletter 12,
       1986 (exact rank-sum distribution with ties by counting over (items, count, score sum)).
.. [3] G. Schröer, D. Trenkler. Exact and randomization distributions of Kolmogorov–Smirnov tests
       for two or three samples. Computational Statistics & Data Analysis 20, 1995 (ties: the
       constraint is checked only at the ends of tie blocks).
.. [4] J. L. Hodges. The significance probability of the Smirnov two-sample test. Arkiv för
       Matematik 3, 1958 (one-sided asymptotic approximation, as in scipy).
.. [5] A. Vargha, H. D. Delaney. A critique and improvement of the CL common language effect size
       statistics of McGraw and Wong. J. Educ. Behav. Stat. 25(2), 2000.
.. [6] SciPy, ``scipy.stats.ranksums``: the rank-sum statistic's normal approximation with
       variance ``n_x n_y (n + 1)/12``, no tie and no continuity correction.
.. [7] M. G. H. Omran et al. Permutation Tests for Metaheuristic Algorithms. Mathematics
       10(13):2219, 2022 (rank-sum p-values as scipy's ``ranksums`` prints them).
.. [8] SciPy, ``scipy.stats.ks_2samp(method="exact")``: the exact law of the statistic for
       samples without ties, used whatever the ties.
"""

from __future__ import annotations

from app.domain.twosample._a12 import A12Result, vargha_delaney_a12
from app.domain.twosample._common import A12_THRESHOLDS, ALTERNATIVES, KS_EXACT_MAX_N, METHODS
from app.domain.twosample._ks import KS_TIES, KSResult, ks_2samp
from app.domain.twosample._rank_sum import RankSumResult, rank_sum

__all__ = [
    "A12_THRESHOLDS",
    "ALTERNATIVES",
    "KS_EXACT_MAX_N",
    "KS_TIES",
    "METHODS",
    "A12Result",
    "KSResult",
    "RankSumResult",
    "ks_2samp",
    "rank_sum",
    "vargha_delaney_a12",
]
