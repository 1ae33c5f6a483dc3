"""Paper tables of ``/v1/tests/*`` answers: exact bytes of hand cases, numbers from scipy.

Each answer comes from the service; every number in the expected text is computed here,
independently (scipy, statsmodels, or the textbook formula), then written ``%.4g`` as the
Markdown and LaTeX tables write it; CSV parses back to the JSON's floats.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from app.config import Settings
from app.schemas.stattests import (
    BradleyTerryRequest,
    FriedmanRequest,
    KSRequest,
    PermutationRequest,
    PosthocRequest,
    RankSumRequest,
    SignRequest,
    WilcoxonRequest,
)
from app.services import paper_tables as pt
from app.services import stattest_tables as tables
from app.services import stattests as service

SETTINGS = Settings()
NAMES = ["A_1 & B%", "B", "C"]
#: 12 problems, 3 algorithms: A < B < C on 10, B < A < C on 2 (no ties).
MATRIX = [[1.0 + i, 2.0 + i, 3.0 + i] for i in range(10)] + [[2.5, 1.5, 9.0], [4.0, 3.0, 8.0]]


def g(x: float) -> str:
    return f"{x:.4g}"


def tex(x: float) -> str:
    return g(x).replace("-", "$-$", 1) if g(x).startswith("-") else g(x)


def _head(answer: Any) -> str:
    prov = answer.provenance
    version, sha = prov["service_version"], prov["request_sha256"]
    return f"absrank {version} test {answer.test} request_sha256 {sha}"


def _holm_matrix() -> tuple[list[float], np.ndarray]:
    """Average ranks and Holm-adjusted two-sided z-test p-values of every pair (Demšar 2006)."""
    ranks = stats.rankdata(np.array(MATRIX), axis=1).mean(axis=0)
    n, k = len(MATRIX), len(NAMES)
    se = math.sqrt(k * (k + 1) / (6 * n))
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    raw = [2 * stats.norm.sf(abs(ranks[i] - ranks[j]) / se) for i, j in pairs]
    adjusted = multipletests(raw, method="holm")[1]
    p = np.full((k, k), np.nan)
    for (i, j), q in zip(pairs, adjusted, strict=True):
        p[i, j] = p[j, i] = q
    return list(ranks), p


def test_posthoc_latex_exact_with_escaped_names_bold_and_marks() -> None:
    answer = service.posthoc(
        PosthocRequest(values=MATRIX, algorithms=NAMES, method="holm"), SETTINGS
    )
    ranks, p = _holm_matrix()
    assert ranks == pytest.approx([14 / 12, 22 / 12, 3.0])

    def cell(i: int, j: int) -> str:
        if i == j:
            return ""
        return tex(p[i, j]) + ("$^\\dagger$" if p[i, j] < 0.05 else "")

    rows = [
        " & ".join(
            [
                "A\\_1 \\& B\\%" if i == 0 else NAMES[i],
                f"\\textbf{{{g(ranks[i])}}}" if i == 0 else g(ranks[i]),
                *(cell(i, j) for j in range(3)),
            ]
        )
        + " \\\\"
        for i in range(3)
    ]
    legend = (
        "average rank: Friedman (lower is better; bold: the lowest); p: holm-adjusted p-values "
        "of every pair; $^\\dagger$: significant at alpha = 0.05; N = 12 problems."
    )
    expected = (
        f"% provenance: {_head(answer)}\n"
        "\\begin{tabular}{lrrrr}\n"
        "\\toprule\n"
        "algorithm & average rank & A\\_1 \\& B\\% & B & C \\\\\n"
        "\\midrule\n" + "\n".join(rows) + "\n"
        "\\bottomrule\n"
        f"\\multicolumn{{5}}{{l}}{{\\footnotesize {legend}}} \\\\\n"
        "\\end{tabular}\n"
    )
    assert pt.render(tables.posthoc_table(answer), "latex").decode() == expected
    # A vs C and B vs C are significant, A vs B is not
    assert [p[0, 1] < 0.05, p[0, 2] < 0.05, p[1, 2] < 0.05] == [False, True, True]


def test_posthoc_csv_parses_back_to_the_answer_and_marks_rows() -> None:
    answer = service.posthoc(
        PosthocRequest(values=MATRIX, algorithms=NAMES, method="holm"), SETTINGS
    )
    ranks, p = _holm_matrix()
    rows = list(csv.reader(io.StringIO(pt.render(tables.posthoc_table(answer), "csv").decode())))
    assert rows[0] == ["algorithm", "average rank", *NAMES]
    assert [r[0] for r in rows[1:]] == ["A_1 & B%", "A_1 & B% †", "B", "B †", "C", "C †"]
    assert rows[2] == ["A_1 & B% †", "0", "0", "0", "1"]
    assert rows[4] == ["B †", "0", "0", "0", "1"]
    for i, row in enumerate(rows[1::2]):
        assert float(row[1]) == pytest.approx(ranks[i], rel=1e-12)
        for j in range(3):
            if i == j:
                assert row[2 + j] == ""
            else:
                assert float(row[2 + j]) == pytest.approx(p[i, j], rel=1e-9)
    by_pair = {(q.i, q.j): q.p_adjusted for q in answer.result.pairs}
    assert float(rows[1][4]) == by_pair[(0, 2)]  # full precision: the JSON's float


def test_posthoc_against_a_control_is_one_column() -> None:
    answer = service.posthoc(
        PosthocRequest(values=MATRIX, algorithms=NAMES, method="holm", control="C"), SETTINGS
    )
    ranks = stats.rankdata(np.array(MATRIX), axis=1).mean(axis=0)
    se = math.sqrt(3 * 4 / (6 * 12))
    raw = [2 * stats.norm.sf(abs(ranks[i] - ranks[2]) / se) for i in (0, 1)]
    adj = multipletests(raw, method="holm")[1]
    md = pt.render(tables.posthoc_table(answer), "markdown").decode().splitlines()
    assert md[1] == "| algorithm | average rank | p vs C |"
    assert md[3] == f"| A_1 & B% | **{g(ranks[0])}** | {g(adj[0])}† |"
    assert md[4] == f"| B | {g(ranks[1])} | {g(adj[1])}† |"
    assert md[5] == "| C | 3 |  |"


def _quade(x: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Quade's average ranks, F and p (Conover 1999, R's ``quade.test``)."""
    n, k = x.shape
    q = stats.rankdata(x.max(axis=1) - x.min(axis=1))
    r = stats.rankdata(x, axis=1)
    s = q[:, None] * (r - (k + 1) / 2)
    a, b = (s**2).sum(), (s.sum(axis=0) ** 2).sum() / n
    f = (n - 1) * b / (a - b)
    return (q[:, None] * r).sum(axis=0) / q.sum(), f, stats.f.sf(f, k - 1, (k - 1) * (n - 1))


def _aligned(x: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Friedman aligned ranks (Hodges–Lehmann; García et al. 2010): ranks, T, p; with ties
    (rows 1–10 align to the same -1, 0, 1) the denominator's Σ r² is the midranks' own."""
    n, k = x.shape
    ranks = stats.rankdata(x - x.mean(axis=1, keepdims=True)).reshape(n, k)
    rj, ri = ranks.sum(axis=0), ranks.sum(axis=1)
    kn = k * n
    num = (k - 1) * ((rj**2).sum() - (k * n**2 / 4) * (kn + 1) ** 2)
    den = (ranks**2).sum() - (ri**2).sum() / k
    t = num / den
    return ranks.mean(axis=0), t, stats.chi2.sf(t, k - 1)


def test_friedman_markdown_exact() -> None:
    answer = service.friedman(FriedmanRequest(values=MATRIX, algorithms=NAMES), SETTINGS)
    x = np.array(MATRIX)
    fr = stats.friedmanchisquare(*x.T)
    ranks = stats.rankdata(x, axis=1).mean(axis=0)
    n, k = x.shape
    f_id = (n - 1) * fr.statistic / (n * (k - 1) - fr.statistic)
    p_id = stats.f.sf(f_id, k - 1, (k - 1) * (n - 1))
    al_ranks, al_t, al_p = _aligned(x)
    qu_ranks, qu_f, qu_p = _quade(x)

    def row(i: int) -> str:
        cells = [ranks[i], al_ranks[i], qu_ranks[i]]
        best = [min(ranks), min(al_ranks), min(qu_ranks)]
        return " | ".join(
            f"**{g(c)}**" if c == b else g(c) for c, b in zip(cells, best, strict=True)
        )

    expected = (
        f"<!-- provenance: {_head(answer)} -->\n"
        "| algorithm | Friedman | aligned ranks | Quade |\n"
        "| --- | ---: | ---: | ---: |\n"
        f"| A_1 & B% | {row(0)} |\n"
        f"| B | {row(1)} |\n"
        f"| C | {row(2)} |\n"
        f"| statistic | {g(fr.statistic)} | {g(al_t)} | {g(qu_f)} |\n"
        f"| p-value | {g(fr.pvalue)} | {g(al_p)} | {g(qu_p)} |\n"
        f"| Iman-Davenport F | {g(f_id)} |  |  |\n"
        f"| Iman-Davenport p | {g(p_id)} |  |  |\n"
        "\n"
        "Average ranks (lower is better); bold: the lowest per test.  \n"
        "statistic: chi2 with 2 df (Friedman, aligned ranks), F with (2, 22) df "
        "(Iman-Davenport, Quade); N = 12 problems, k = 3 algorithms.\n"
    )
    assert pt.render(tables.friedman_table(answer), "markdown").decode() == expected


def test_bradley_terry_bold_is_the_highest_strength() -> None:
    answer = service.bradley_terry(BradleyTerryRequest(values=MATRIX, algorithms=NAMES), SETTINGS)
    wins = np.array(
        [[sum(r[i] < r[j] for r in MATRIX) for j in range(3)] for i in range(3)], dtype=float
    )
    md = pt.render(tables.bradley_terry_table(answer), "markdown").decode().splitlines()
    assert md[1] == "| algorithm | strength | A_1 & B% | B | C |"
    strengths = [s.strength for s in answer.result.model.strengths_by_algorithm]
    assert strengths[0] == max(strengths)
    assert md[3] == f"| A_1 & B% | **{g(strengths[0])}** |  | {g(wins[0, 1])} | {g(wins[0, 2])} |"
    assert md[5] == f"| C | {g(strengths[2])} | {g(wins[2, 0])} | {g(wins[2, 1])} |  |"


X = [1.1, 2.5, 3.2, 6.1, 7.3]
Y = [2.0, 4.4, 8.8, 9.1]


def test_rank_sum_row_exact_in_every_format() -> None:
    answer = service.rank_sum(RankSumRequest(x=X, y=Y), SETTINGS)
    ref = stats.mannwhitneyu(X, Y, method="exact")
    a12 = ref.statistic / (len(X) * len(Y))
    r = answer.result
    legend = [
        f"U of x; two-sided, exact ({r.rank_sum.method_reason}).",
        f"A12: {r.a12.interpretation}.",
    ]
    log10p = math.log10(ref.pvalue)
    assert pt.render(tables.rank_sum_table(answer), "markdown").decode() == (
        f"<!-- provenance: {_head(answer)} -->\n"
        "| test | n_x | n_y | U | z | p | log10 p | A12 |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        f"| rank-sum (Mann-Whitney U) | 5 | 4 | {g(ref.statistic)} |  | {g(ref.pvalue)} | "
        f"{g(log10p)} | {g(a12)} |\n"
        "\n" + legend[0] + "  \n" + legend[1] + "\n"
    )
    assert pt.render(tables.rank_sum_table(answer), "latex").decode() == (
        f"% provenance: {_head(answer)}\n"
        "\\begin{tabular}{lrrrrrrr}\n"
        "\\toprule\n"
        "test & n\\_x & n\\_y & U & z & p & log10 p & A12 \\\\\n"
        "\\midrule\n"
        f"rank-sum (Mann-Whitney U) & 5 & 4 & {g(ref.statistic)} &  & {g(ref.pvalue)} & "
        f"{tex(log10p)} & {g(a12)} \\\\\n"
        "\\bottomrule\n"
        + "".join(
            f"\\multicolumn{{8}}{{l}}{{\\footnotesize {pt.latex_escape(line)}}} \\\\\n"
            for line in legend
        )
        + "\\end{tabular}\n"
    )
    # CSV: counts exact, floats the JSON's
    assert pt.render(tables.rank_sum_table(answer), "csv").decode() == (
        "test,n_x,n_y,U,z,p,log10 p,A12\r\n"
        f"rank-sum (Mann-Whitney U),5,4,{float(r.rank_sum.statistic)!r},,"
        f"{float(r.rank_sum.p_value)!r},{float(r.rank_sum.log10_p_value)!r},"  # type: ignore[arg-type]
        f"{float(r.a12.a12)!r}\r\n"
    )
    assert r.rank_sum.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_paired_and_two_sample_rows() -> None:
    x = [0.12, 0.40, 0.05, 0.33, 0.90, 0.21]
    y = [0.20, 0.45, 0.30, 0.35, 1.40, 0.27]
    w = service.wilcoxon(WilcoxonRequest(x=x, y=y), SETTINGS)
    ref = stats.wilcoxon(x, y, method="exact")
    line = pt.render(tables.wilcoxon_table(w), "markdown").decode().splitlines()[3]
    assert line == (
        f"| Wilcoxon signed-rank | 6 | {g(ref.statistic)} |  | {g(ref.pvalue)} | "
        f"{g(math.log10(ref.pvalue))} |"
    )
    s = service.sign(SignRequest(x=x, y=y), SETTINGS)
    p_sign = stats.binomtest(0, 6).pvalue
    line = pt.render(tables.sign_table(s), "markdown").decode().splitlines()[3]
    assert line == f"| sign | 6 | 6 | 0 | 0 | {g(p_sign)} | {g(math.log10(p_sign))} |"
    k = service.ks(KSRequest(x=X, y=Y), SETTINGS)
    ref_ks = stats.ks_2samp(X, Y, method="exact")
    a12 = stats.mannwhitneyu(X, Y).statistic / 20
    line = pt.render(tables.ks_table(k), "markdown").decode().splitlines()[3]
    assert line == (
        f"| Kolmogorov-Smirnov | 5 | 4 | {g(ref_ks.statistic)} | {g(ref_ks.pvalue)} | "
        f"{g(math.log10(ref_ks.pvalue))} | {g(a12)} |"
    )
    perm = service.permutation_test(
        PermutationRequest(x=[1, 2, 3], y=[4, 5, 6], statistic="mean", method="exact"), SETTINGS
    )
    ref_p = stats.permutation_test(
        ([1, 2, 3], [4, 5, 6]),
        lambda a, b: np.mean(a) - np.mean(b),
        permutation_type="independent",
        n_resamples=np.inf,
    )
    line = pt.render(tables.permutation_table(perm), "markdown").decode().splitlines()[3]
    assert line == (
        f"| permutation | {g(ref_p.statistic)} | {g(ref_p.pvalue)} | "
        f"{g(math.log10(ref_p.pvalue))} | 20 |"
    )
