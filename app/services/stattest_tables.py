"""Tables for papers of ``POST /v1/tests/*`` answers, rendered by :mod:`app.services.paper_tables`.

Built from the typed answers (docs/METHODS.md, "Tables for papers"):

* Friedman: rows = algorithms, columns = the average ranks of Friedman, aligned ranks and
  Quade (bold: the lowest per column), then the rows ``statistic`` and ``p-value`` per test and
  ``Iman-Davenport F`` / ``p`` under Friedman (García et al. 2010's layout);
* post-hoc: rows = algorithms, ``average rank`` (bold: the lowest) and the adjusted p-value of
  each pair (all pairs: a symmetric matrix, empty diagonal; against a control: one column),
  † where the pair is significant at the family's alpha;
* Bradley–Terry: ``strength`` (bold: the highest) and the wins matrix ``W[row][column]``;
* the two-sample and paired tests: one row of the counts, the statistic, ``z`` where the test
  is asymptotic, ``p``, ``log10 p`` and the effect size the answer carries (A12 for rank-sum
  and KS, the observed difference for the permutation test; the Wilcoxon and sign answers carry
  none, the sign test's counts ``x < y`` / ``x > y`` say the direction).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app.schemas.stattests import (
    BradleyTerryResponse,
    FriedmanResponse,
    KSResponse,
    NotComputedRead,
    PermutationResponse,
    PosthocResponse,
    RankSumResponse,
    SignResponse,
    WilcoxonResponse,
)
from app.services.paper_tables import (
    DAGGER,
    Cell,
    Column,
    PaperTable,
    Row,
    best,
    column_rows,
    provenance_line,
)

Extended = float | int | str


def _num(x: Extended | None) -> float | int | None:
    """A number of an answer (``"Infinity"`` / ``"-Infinity"`` as ±inf)."""
    if x is None or isinstance(x, int | float):
        return x
    return {"Infinity": math.inf, "-Infinity": -math.inf}[x]


def _provenance(test: str, provenance: dict[str, Any]) -> str:
    return provenance_line(f"test {test}", provenance)


def friedman_table(answer: FriedmanResponse) -> PaperTable:
    """Average ranks per algorithm by each omnibus test, their statistics and p-values."""
    names = answer.policies.algorithms
    res = answer.result
    tests = [("Friedman", res.friedman), ("aligned ranks", res.aligned_ranks), ("Quade", res.quade)]
    columns = []
    for header, t in tests:
        ranks = (None,) * len(names) if isinstance(t, NotComputedRead) else tuple(t.average_ranks)
        columns.append(Column(header, ranks, best(ranks)))
    fr = res.friedman
    computed = [None if isinstance(t, NotComputedRead) else t for _h, t in tests]
    stats = [
        Row("statistic", tuple(Cell(None if t is None else _num(t.statistic)) for t in computed)),
        Row("p-value", tuple(Cell(None if t is None else t.p_value) for t in computed)),
        Row("Iman-Davenport F", (Cell(_num(fr.iman_davenport_statistic)), Cell(None), Cell(None))),
        Row("Iman-Davenport p", (Cell(fr.iman_davenport_p_value), Cell(None), Cell(None))),
    ]
    legend = [
        "Average ranks (lower is better); bold: the lowest per test.",
        f"statistic: chi2 with {fr.df} df (Friedman, aligned ranks), F with "
        f"({fr.iman_davenport_df[0]}, {fr.iman_davenport_df[1]}) df (Iman-Davenport, Quade); "
        f"N = {fr.n_problems} problems, k = {fr.n_algorithms} algorithms.",
        *(f"{h}: not computed ({t.reason})." for h, t in tests if isinstance(t, NotComputedRead)),
        *(
            f"{h}: degenerate ({t.reason})."
            for (h, _t), t in zip(tests, computed, strict=True)
            if t is not None and t.degenerate
        ),
    ]
    return PaperTable(
        "algorithm",
        tuple(h for h, _t in tests),
        (column_rows(names, columns), tuple(stats)),
        tuple(legend),
        _provenance("friedman", answer.provenance),
    )


def posthoc_table(answer: PosthocResponse) -> PaperTable:
    """Average ranks and the adjusted p-values of the pairs, † where significant."""
    names = answer.policies.algorithms
    res = answer.result
    k = len(names)
    ranks = tuple(res.average_ranks)
    p: list[list[float | None]] = [[None] * k for _ in range(k)]
    sig = [[False] * k for _ in range(k)]
    for pair in res.pairs:
        for a, b in ((pair.i, pair.j), (pair.j, pair.i)):
            p[a][b] = pair.p_adjusted
            sig[a][b] = pair.significant
    columns = [Column("average rank", ranks, best(ranks))]
    if res.control is None:
        targets = list(range(k))
        headers = list(names)
        scope = "every pair"
    else:
        targets = [res.control]
        headers = [f"p vs {names[res.control]}"]
        scope = f"each algorithm against the control {names[res.control]}"
    for c, header in zip(targets, headers, strict=True):
        values = tuple(p[r][c] for r in range(k))
        marks = tuple(DAGGER if sig[r][c] else "" for r in range(k))
        columns.append(Column(header, values, marks=marks))
    legend = [
        f"average rank: Friedman (lower is better; bold: the lowest); p: {res.procedure}-"
        f"adjusted p-values of {scope}; {DAGGER}: significant at alpha = {res.alpha}; "
        f"N = {res.n_problems} problems.",
    ]
    if res.critical_difference is not None:
        legend.append(f"CD = {res.critical_difference:.4g} ({res.cd_convention} convention).")
    if res.low_power is not None:
        lp = res.low_power
        legend.append(
            f"Low power: CD = {lp.critical_difference:.4g} > (k - 1)/2 = {lp.threshold:.4g}; "
            f"N >= {lp.n_needed} problems are needed."
        )
    return PaperTable(
        "algorithm",
        tuple(c.header for c in columns),
        (column_rows(names, columns),),
        tuple(legend),
        _provenance("posthoc", answer.provenance),
    )


def bradley_terry_table(answer: BradleyTerryResponse) -> PaperTable:
    """Bradley–Terry strengths (bold: the strongest) and the wins matrix."""
    names = answer.policies.algorithms
    model = answer.result.model
    strengths = tuple(_num(s) for s in model.strengths)
    wins = answer.result.wins
    columns = [Column("strength", strengths, best(strengths, highest=True))]
    for j, name in enumerate(names):
        columns.append(
            Column(name, tuple(None if i == j else wins[i][j] for i in range(len(names))))
        )
    legend = [
        "strength: Bradley-Terry (higher is better; bold: the highest); column "
        "<algorithm>: problems where the row's algorithm beats it (ties count 1/2).",
    ]
    if model.degenerate:
        legend.append(f"Degenerate fit: {model.reason}.")
    return PaperTable(
        "algorithm",
        tuple(c.header for c in columns),
        (column_rows(names, columns),),
        tuple(legend),
        _provenance("bradley-terry", answer.provenance),
    )


def _one_row(
    test: str,
    label: str,
    cells: Sequence[tuple[str, float | int | None]],
    legend: Sequence[str],
    provenance: dict[str, Any],
) -> PaperTable:
    return PaperTable(
        "test",
        tuple(h for h, _v in cells),
        ((Row(label, tuple(Cell(v) for _h, v in cells)),),),
        tuple(line for line in legend if line),
        _provenance(test, provenance),
    )


def _method_line(method: str, reason: str, alternative: str) -> str:
    return f"{alternative}, {method} ({reason})."


def _degenerate_line(degenerate: bool, reason: str | None) -> str:
    return f"Degenerate: {reason}." if degenerate else ""


def wilcoxon_table(answer: WilcoxonResponse) -> PaperTable:
    """The Wilcoxon signed-rank test in one row."""
    r = answer.result
    cells = [
        ("n", r.n_effective),
        ("statistic", _num(r.statistic)),
        ("z", _num(r.z)),
        ("p", r.p_value),
        ("log10 p", _num(r.log10_p_value)),
    ]
    legend = [
        f"n: nonzero differences x - y of {r.n} pairs ({r.zero_method}); statistic: the "
        f"signed-rank statistic; {_method_line(r.method, r.method_reason, r.alternative)}",
        _degenerate_line(r.degenerate, r.reason),
    ]
    return _one_row("wilcoxon", "Wilcoxon signed-rank", cells, legend, answer.provenance)


def sign_table(answer: SignResponse) -> PaperTable:
    """The exact sign test in one row."""
    r = answer.result
    cells = [
        ("n", r.n_effective),
        ("x < y", r.n_less),
        ("x > y", r.n_greater),
        ("ties", r.n_ties),
        ("p", r.p_value),
        ("log10 p", _num(r.log10_p_value)),
    ]
    legend = [
        f"n: untied pairs; {_method_line(r.method, r.method_reason, r.alternative)}",
        _degenerate_line(r.degenerate, r.reason),
    ]
    return _one_row("sign", "sign", cells, legend, answer.provenance)


def rank_sum_table(answer: RankSumResponse) -> PaperTable:
    """The rank-sum (Mann–Whitney U) test and A12 in one row."""
    r = answer.result.rank_sum
    cells = [
        ("n_x", r.n_x),
        ("n_y", r.n_y),
        ("U", _num(r.statistic)),
        ("z", _num(r.z)),
        ("p", r.p_value),
        ("log10 p", _num(r.log10_p_value)),
        ("A12", answer.result.a12.a12),
    ]
    legend = [
        f"U of x; {_method_line(r.method, r.method_reason, r.alternative)}",
        f"A12: {answer.result.a12.interpretation}.",
        _degenerate_line(r.degenerate, r.reason),
    ]
    return _one_row("rank-sum", "rank-sum (Mann-Whitney U)", cells, legend, answer.provenance)


def ks_table(answer: KSResponse) -> PaperTable:
    """The two-sample Kolmogorov–Smirnov test and A12 in one row."""
    r = answer.result.ks
    cells = [
        ("n_x", r.n_x),
        ("n_y", r.n_y),
        ("D", r.statistic),
        ("p", r.p_value),
        ("log10 p", _num(r.log10_p_value)),
        ("A12", answer.result.a12.a12),
    ]
    legend = [
        f"D: the KS distance; {_method_line(r.method, r.method_reason, r.alternative)}",
        f"A12: {answer.result.a12.interpretation}.",
        _degenerate_line(r.degenerate, r.reason),
    ]
    return _one_row("ks", "Kolmogorov-Smirnov", cells, legend, answer.provenance)


def permutation_table(answer: PermutationResponse) -> PaperTable:
    """The permutation test in one row (the observed difference is its effect size)."""
    r = answer.result
    count = ("resamples", r.n_resamples) if r.method == "monte_carlo" else ("splits", r.n_splits)
    cells = [
        ("difference", _num(r.observed_difference)),
        ("p", r.p_value),
        ("log10 p", _num(r.log10_p_value)),
        count,
    ]
    legend = [
        f"difference: {r.statistic_name}(x) - {r.statistic_name}(y); {r.alternative}, "
        f"{r.method.replace('_', ' ')}.",
        _degenerate_line(r.degenerate, r.reason),
    ]
    return _one_row("permutation", "permutation", cells, legend, answer.provenance)
