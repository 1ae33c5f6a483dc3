"""Schemas of ``POST /v1/tests/*``: single statistical tests on a matrix or on two samples."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.config import JsonDict

from app.schemas.common import STRICT_REQUEST, FiniteFloat

Alternative = Literal["two-sided", "less", "greater"]
ExactOrAsymptotic = Literal["auto", "exact", "asymptotic"]
MatrixMissing = Literal["reject", "drop-problem", "worst-rank", "par-k"]
SampleMissing = Literal["reject", "drop"]
PosthocMethod = Literal[
    "nemenyi", "bonferroni-dunn", "holm", "hochberg", "hommel", "finner", "li", "shaffer"
]
CDConvention = Literal["standard", "jing-liu"]
Cell = FiniteFloat | None
"""A metric value; ``null`` is a missing value (handled by the declared ``missing`` policy)."""

NAME = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]
"""An algorithm, problem or subset name: 1–200 characters, no control characters."""

Number = float | Literal["Infinity", "-Infinity"]
"""A number that may be infinite: JSON has no infinity, so ±inf are the strings
``"Infinity"`` / ``"-Infinity"`` (e.g. Iman–Davenport F under perfect concordance)."""

_TOLERANCE = Field(
    0.0,
    ge=0.0,
    allow_inf_nan=False,
    description="values within rtol·max(|a|, |b|) of each other tie (0 = exact equality)",
)
_MISSING_MATRIX: MatrixMissing = Field(
    "reject",
    description="what a null cell means: reject (422), drop-problem, worst-rank, par-k "
    "(k × the problem's worst present value)",
)
_MISSING_SAMPLE: SampleMissing = Field(
    "reject", description="what a null value means: reject (422) or drop (the run, or the pair)"
)


class MatrixInput(BaseModel):
    """A problems × algorithms matrix of metric values (minimization; 1 = best rank)."""

    model_config = STRICT_REQUEST
    values: list[list[Cell]] = Field(
        min_length=1,
        description="one row per problem (block), one column per algorithm; null = missing",
    )
    algorithms: list[NAME] | None = Field(
        None, description="column names (default 'A1', 'A2', ...); must be unique"
    )
    problems: list[NAME] | None = Field(
        None, description="row names (default 'P1', 'P2', ...); must be unique"
    )
    missing: MatrixMissing = _MISSING_MATRIX
    par_k: float = Field(10.0, gt=1.0, le=1e6, description="k of the par-k policy")
    rtol: float = _TOLERANCE


_MATRIX_EXAMPLE: JsonDict = {
    "values": [
        [0.12, 0.40, 0.05, 0.33, 0.90],
        [1.10, 2.30, 0.90, 2.00, 3.10],
        [5.50, 4.90, 4.80, 6.20, 9.70],
        [0.02, 0.08, 0.01, 0.05, 0.03],
        [12.0, 15.5, 11.0, 14.0, 20.0],
        [0.70, 0.90, 0.75, 0.65, 1.40],
    ],
    "algorithms": ["DE", "PSO", "L-SHADE", "CMA-ES", "RS"],
}
"""Six problems × five algorithms (metric values, lower is better)."""


class FriedmanRequest(MatrixInput):
    """Omnibus rank tests on a matrix: Friedman, Iman–Davenport, aligned ranks, Quade."""

    model_config = STRICT_REQUEST | ConfigDict(json_schema_extra={"examples": [_MATRIX_EXAMPLE]})


CD_CONVENTION_DESCRIPTION = (
    "critical value of the CD (nemenyi, bonferroni-dunn only): standard = Demšar's (studentized "
    "range for nemenyi, z at 1 − α/(2(k−1)) for bonferroni-dunn); jing-liu = the paper's "
    "convention of Jing & Liu, Table I (z at 1 − α/(2k)), with p_adjusted = min(1, k·p) so the "
    "significant pairs and the cliques follow that CD"
)


class PosthocRequest(MatrixInput):
    """Post-hoc comparisons of Friedman ranks, all pairs or against a control."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                _MATRIX_EXAMPLE | {"method": "nemenyi", "alpha": 0.05},
                _MATRIX_EXAMPLE | {"method": "holm", "control": "L-SHADE"},
                _MATRIX_EXAMPLE | {"method": "shaffer"},
                _MATRIX_EXAMPLE | {"method": "nemenyi", "cd_convention": "jing-liu"},
            ]
        }
    )
    method: PosthocMethod = Field(
        "nemenyi",
        description="nemenyi (all pairs, CD), shaffer (all pairs), bonferroni-dunn and li "
        "(against control), holm/hochberg/hommel/finner (all pairs, or against control if given)",
    )
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="family-wise significance level")
    control: NAME | None = Field(None, description="the control algorithm's name")
    cd_convention: CDConvention = Field("standard", description=CD_CONVENTION_DESCRIPTION)


class BradleyTerryRequest(MatrixInput):
    """Bradley–Terry strengths from pairwise wins over problems (ties count 1/2 each)."""

    model_config = STRICT_REQUEST | ConfigDict(json_schema_extra={"examples": [_MATRIX_EXAMPLE]})


class PairedInput(BaseModel):
    """Paired values across problems: ``x[i]`` and ``y[i]`` belong to problem ``i``."""

    model_config = STRICT_REQUEST
    x: list[Cell] = Field(min_length=1, description="algorithm A, one value per problem")
    y: list[Cell] | None = Field(
        None, description="algorithm B, same length; omit to test x as the differences d = x − y"
    )
    missing: SampleMissing = _MISSING_SAMPLE
    zero_tol: float = Field(
        0.0,
        ge=0.0,
        allow_inf_nan=False,
        description="a difference with |d| <= zero_tol is zero (a tie)",
    )
    alternative: Alternative = Field(
        "two-sided", description="less: x tends to be smaller (better) than y"
    )


class WilcoxonRequest(PairedInput):
    """Wilcoxon signed-rank test of paired values."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "x": [0.12, 0.40, 0.05, 0.33, 0.90, 0.21],
                    "y": [0.20, 0.41, 0.30, 0.35, 1.40, 0.21],
                    "zero_method": "pratt",
                }
            ]
        }
    )
    zero_method: Literal["pratt", "wilcox", "zsplit"] = Field(
        "pratt",
        description="pratt: rank zeros then drop them; wilcox: drop zeros first; zsplit: "
        "split zero ranks between the signs",
    )
    method: ExactOrAsymptotic = Field(
        "auto", description="auto = exact up to wilcoxon_exact_max_n nonzero differences"
    )


class SignRequest(PairedInput):
    """Exact sign test of paired values (ties dropped and counted)."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={"examples": [{"x": [1, 2, 3, 4, 5], "y": [2, 3, 4, 5, 6]}]}
    )


class TwoSampleInput(BaseModel):
    """Two independent samples of runs on one problem."""

    model_config = STRICT_REQUEST
    x: list[Cell] = Field(min_length=1, description="runs of algorithm A (metric values)")
    y: list[Cell] = Field(min_length=1, description="runs of algorithm B (metric values)")
    missing: SampleMissing = _MISSING_SAMPLE
    alternative: Alternative = Field(
        "two-sided", description="less: x tends to be smaller (better) than y"
    )


_TWO_SAMPLE_EXAMPLE: JsonDict = {
    "x": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    "y": [2, 4, 6, 8, 10, 12, 14, 16],
}


class RankSumRequest(TwoSampleInput):
    """Wilcoxon rank-sum / Mann–Whitney U test, with Vargha–Delaney A12."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                _TWO_SAMPLE_EXAMPLE,
                _TWO_SAMPLE_EXAMPLE | {"convention": "scipy-ranksums"},
            ]
        }
    )
    method: ExactOrAsymptotic = Field(
        "auto", description="auto = exact (midrank permutation distribution) when feasible"
    )
    rtol: float = _TOLERANCE
    convention: Literal["standard", "scipy-ranksums"] = Field(
        "standard",
        description="standard = the test above; scipy-ranksums = the paper's convention of "
        "Omran et al. (2022): scipy.stats.ranksums' normal approximation without tie or "
        "continuity correction (method must be auto or asymptotic)",
    )


class KSRequest(TwoSampleInput):
    """Two-sample Kolmogorov–Smirnov test."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {"x": [1, 1.01, 3, 4], "y": [1.01, 0.5, 0.25]},
                {"x": [1, 1.01, 3, 4], "y": [1.01, 0.5, 0.25], "convention": "scipy-exact"},
            ]
        }
    )
    method: ExactOrAsymptotic = Field(
        "auto", description="auto = exact (conditional on ties) when feasible"
    )
    rtol: float = _TOLERANCE
    convention: Literal["standard", "scipy-exact"] = Field(
        "standard",
        description="standard = exact law conditional on the ties; scipy-exact = "
        "scipy.stats.ks_2samp(method='exact')'s law, which ignores ties: not exact under ties "
        "(result.ks.ties_ignored and a warning say so)",
    )


class PermutationRequest(TwoSampleInput):
    """Permutation test of |median_A − median_B| or |mean_A − mean_B| (Omran et al. 2022)."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {"x": [1, 2, 3], "y": [4, 5, 6], "statistic": "mean", "method": "exact"},
                {"x": [76, 72], "y": [70, 75], "statistic": "mean", "alternative": "greater"},
            ]
        }
    )
    statistic: Literal["median", "mean"] = Field("median", description="difference of what")
    method: Literal["auto", "exact", "monte_carlo"] = Field(
        "auto", description="auto = exact when feasible, else Monte Carlo"
    )
    n_resamples: int = Field(
        100_000, ge=1, description="Monte Carlo permutations (limit: permutation_max_resamples)"
    )
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of the Monte Carlo permutations")
    rtol: float = Field(
        1e-9,
        ge=0.0,
        le=1e-3,
        allow_inf_nan=False,
        description="statistics within this relative tolerance count as equal (as extreme)",
    )


class PosthocPair(BaseModel):
    """One pairwise post-hoc comparison of algorithms ``i`` and ``j`` (named ``a`` and ``b``)."""

    i: int
    j: int
    a: str = Field(description="name of algorithm i")
    b: str = Field(description="name of algorithm j")
    rank_difference: float = Field(description="R_i − R_j, average ranks")
    z: Number
    p_value: float
    p_adjusted: float
    significant: bool


class LowPowerRead(BaseModel):
    """Too few problems for the rank post-hoc tests to find differences (docs/METHODS.md).

    Set when the standard CD (Nemenyi for all pairs, Bonferroni–Dunn against a control)
    exceeds ``(k − 1) / 2``, half the largest possible difference of average ranks.
    """

    kind: Literal["low-power"] = "low-power"
    n_problems: int = Field(description="N")
    n_algorithms: int = Field(description="k")
    alpha: float
    comparison: Literal["all-pairs", "vs-control"]
    critical_difference: float = Field(description="the standard CD at this N")
    threshold: float = Field(description="(k − 1) / 2")
    n_needed: int = Field(description="the smallest N with CD <= (k − 1) / 2")
    chi2_rough: bool = Field(
        description="not (N > 10 and k > 5): Friedman's chi-square approximation is rough "
        "(Demšar 2006's rule of thumb)"
    )
    message: str


class PosthocRead(BaseModel):
    """A post-hoc family's result, with algorithm names beside every index.

    ``p_matrix`` / ``p_vs_control`` (adjusted p-values by index) are left out by a comparison's
    ``view=summary``; ``pairs`` carry the same numbers.
    """

    model_config = ConfigDict(extra="allow")
    procedure: str
    comparison: Literal["all-pairs", "vs-control"]
    alpha: float
    control: int | None = Field(description="index of the control algorithm")
    control_name: str | None = Field(description="name of the control algorithm")
    average_ranks: list[float]
    pairs: list[PosthocPair]
    cliques: list[list[int]] = Field(
        description="maximal groups not significantly different, as algorithm indices"
    )
    clique_names: list[list[str]] = Field(description="the same cliques, as algorithm names")
    low_power: LowPowerRead | None = Field(
        None, description="set when N is too small for the test to find differences (the rule)"
    )


class NamedStrength(BaseModel):
    """One algorithm's Bradley–Terry strength."""

    algorithm: str
    strength: Number


class BradleyTerryRead(BaseModel):
    """Bradley–Terry strengths (by index, and named in ``strengths_by_algorithm``)."""

    model_config = ConfigDict(extra="allow")
    strengths: list[Number]
    strengths_by_algorithm: list[NamedStrength]


class TestResponse(BaseModel):
    """One test's result: its numbers, the policies used, warnings and provenance.

    ``result`` holds the test's fields (``p_value`` in [0, 1], ``method``: exact |
    monte_carlo | asymptotic, ``degenerate`` and ``reason``); every p-value ``p_*`` has a
    ``log10_p_*`` companion, finite below the float range; infinite numbers are the strings
    ``"Infinity"`` / ``"-Infinity"``. ``/v1/tests/posthoc``'s result is a :class:`PosthocRead`
    (pairs named ``a``, ``b``; ``clique_names``; ``control_name``) and
    ``/v1/tests/bradley-terry``'s ``result.model`` a :class:`BradleyTerryRead`
    (``strengths_by_algorithm``).
    """

    test: str
    result: dict[str, Any]
    policies: dict[str, Any]
    warnings: list[str]
    provenance: dict[str, Any]


# ------------------------------------------------------------------------ typed answers

Real = Annotated[int | float, WithJsonSchema({"type": "number"})]
"""A finite JSON number as the test computed it: an integer stays an integer (``1``, not
``1.0``), so an answer validated by its model keeps its bytes."""

Extended = Real | Literal["Infinity", "-Infinity"]
"""A number that may be infinite (``"Infinity"`` / ``"-Infinity"``): statistics, ``log10_*``."""


class NotComputedRead(BaseModel):
    """A value-based test (aligned ranks, Quade) that does not apply to these values."""

    model_config = ConfigDict(extra="forbid")
    computed: Literal[False]
    reason: str


class FriedmanRead(BaseModel):
    """Friedman χ² (tie-corrected), Iman–Davenport F (``ranktests.FriedmanResult``)."""

    statistic: Extended
    p_value: Real
    log10_p_value: Extended
    df: int
    iman_davenport_statistic: Extended
    iman_davenport_p_value: Real
    log10_iman_davenport_p_value: Extended
    iman_davenport_df: tuple[int, int]
    average_ranks: list[Real]
    tie_correction: Real
    n_problems: int
    n_algorithms: int
    method: str
    degenerate: bool
    reason: str | None


class AlignedRanksRead(BaseModel):
    """Friedman aligned-ranks test (Hodges–Lehmann)."""

    statistic: Extended
    p_value: Real
    log10_p_value: Extended
    df: int
    average_ranks: list[Real]
    n_problems: int
    n_algorithms: int
    method: str
    degenerate: bool
    reason: str | None


class QuadeRead(BaseModel):
    """Quade's test (problems weighted by their range)."""

    statistic: Extended
    p_value: Real
    log10_p_value: Extended
    df: tuple[int, int]
    average_ranks: list[Real]
    problem_weights: list[Real]
    n_problems: int
    n_algorithms: int
    method: str
    degenerate: bool
    reason: str | None


class FriedmanResults(BaseModel):
    """``/v1/tests/friedman``'s result: the rank test and the two value-based ones."""

    friedman: FriedmanRead
    aligned_ranks: AlignedRanksRead | NotComputedRead
    quade: QuadeRead | NotComputedRead


class PosthocPairRead(BaseModel):
    """One pairwise comparison of algorithms ``i`` and ``j`` (named ``a`` and ``b``)."""

    i: int
    j: int
    a: str = Field(description="name of algorithm i")
    b: str = Field(description="name of algorithm j")
    rank_difference: Real = Field(description="R_i − R_j, average ranks")
    z: Extended
    p_value: Real
    p_adjusted: Real
    log10_p_value: Extended
    log10_p_adjusted: Extended
    significant: bool


class LowPowerNotice(BaseModel):
    """Too few problems for the rank post-hoc tests to find differences (docs/METHODS.md):
    the standard CD exceeds ``(k − 1) / 2``."""

    n_problems: int = Field(description="N")
    n_algorithms: int = Field(description="k")
    alpha: Real
    comparison: Literal["all-pairs", "vs-control"]
    critical_difference: Real = Field(description="the standard CD at this N")
    threshold: Real = Field(description="(k − 1) / 2")
    n_needed: int = Field(description="the smallest N with CD <= (k − 1) / 2")
    chi2_rough: bool = Field(description="not (N > 10 and k > 5): χ² approximation is rough")
    message: str
    kind: Literal["low-power"]


class PosthocFamilyRead(BaseModel):
    """A post-hoc family (``app.domain.ranktests.PosthocResult``) with names beside indices,
    in the order the services build it (``control_name``, ``clique_names`` last)."""

    procedure: str
    comparison: Literal["all-pairs", "vs-control"]
    alpha: Real
    control: int | None = Field(description="index of the control algorithm")
    average_ranks: list[Real]
    n_problems: int
    n_algorithms: int
    critical_difference: Real | None
    critical_value: Real | None
    pairs: list[PosthocPairRead]
    p_matrix: list[list[Real]] | None = None
    p_vs_control: list[Real] | None = None
    log10_p_matrix: list[list[Extended]] | None = None
    log10_p_vs_control: list[Extended] | None = None
    cliques: list[list[int]] = Field(
        description="maximal groups not significantly different, as algorithm indices"
    )
    method: str
    degenerate: bool
    reason: str | None
    cd_convention: CDConvention
    low_power: LowPowerNotice | None = Field(
        description="set when N is too small for the test to find differences (the rule)"
    )
    control_name: str | None = Field(description="name of the control algorithm")
    clique_names: list[list[str]] = Field(description="the same cliques, as algorithm names")


class BradleyTerryFit(BaseModel):
    """Bradley–Terry strengths (``app.domain.ranktests.BradleyTerryResult``), by index and
    named in ``strengths_by_algorithm``."""

    strengths: list[Extended]
    probabilities: list[list[Real]]
    components: list[list[int]]
    iterations: int
    converged: bool
    iteration: str
    zermelo_max_relative_difference: Extended
    degenerate: bool
    reason: str | None
    strengths_by_algorithm: list[NamedStrength]


class BradleyTerryResults(BaseModel):
    """``/v1/tests/bradley-terry``'s result: the win matrix and the fit."""

    wins: list[list[Real]] = Field(description="W[i][j]: problems where i beats j (ties 1/2)")
    model: BradleyTerryFit


class WilcoxonRead(BaseModel):
    """Wilcoxon signed-rank test (``app.domain.paired.WilcoxonResult``)."""

    statistic: Extended
    p_value: Real
    log10_p_value: Extended
    method: str
    method_reason: str
    alternative: Alternative
    zero_method: str
    zero_tol: Real
    n: int
    n_zeros: int
    n_effective: int
    z: Extended | None
    continuity: bool
    degenerate: bool
    reason: str | None


class SignRead(BaseModel):
    """Exact sign test (``app.domain.paired.SignTestResult``)."""

    statistic: int
    p_value: Real
    log10_p_value: Extended
    method: str
    method_reason: str
    alternative: Alternative
    zero_tol: Real
    n: int
    n_less: int
    n_greater: int
    n_ties: int
    n_effective: int
    degenerate: bool
    reason: str | None


class RankSumRead(BaseModel):
    """Wilcoxon rank-sum / Mann–Whitney U (``app.domain.twosample.RankSumResult``)."""

    statistic: Extended
    p_value: Real
    log10_p_value: Extended
    method: str
    method_reason: str
    alternative: Alternative
    n_x: int
    n_y: int
    rank_sum_x: Extended
    a12: Real
    z: Extended | None
    continuity: bool
    rtol: Real
    atol: Real
    degenerate: bool
    reason: str | None
    tie_correction: bool


class KSRead(BaseModel):
    """Two-sample Kolmogorov–Smirnov test (``app.domain.twosample.KSResult``)."""

    statistic: Real
    d_plus: Real
    d_minus: Real
    p_value: Real
    log10_p_value: Extended
    method: str
    method_reason: str
    alternative: Alternative
    n_x: int
    n_y: int
    rtol: Real
    atol: Real
    degenerate: bool
    reason: str | None
    ties: Literal["conditional", "ignore"]
    ties_ignored: bool


class A12Read(BaseModel):
    """Vargha–Delaney A12 (``app.domain.twosample.A12Result``)."""

    a12: Real
    magnitude: str
    better: str | None
    interpretation: str
    n_x: int
    n_y: int
    rtol: Real
    atol: Real


class RankSumResults(BaseModel):
    """``/v1/tests/rank-sum``'s result."""

    rank_sum: RankSumRead
    a12: A12Read


class KSResults(BaseModel):
    """``/v1/tests/ks``'s result."""

    ks: KSRead
    a12: A12Read


class PermutationRead(BaseModel):
    """Permutation test (``app.domain.permutation.PermutationResult``)."""

    statistic: Extended
    observed_difference: Extended
    statistic_name: str
    alternative: Alternative
    method: Literal["exact", "monte_carlo"]
    p_value: Real
    p_value_paper: Real | None
    log10_p_value: Extended
    log10_p_value_paper: Extended | None
    standard_error: Real | None
    n_resamples: int | None
    n_splits: int | None
    log10_n_splits: Extended
    n_extreme: Real
    seed: int | None
    rtol: Real
    degenerate: bool
    reason: str | None
    notes: list[str]


class MatrixPolicies(BaseModel):
    """How a matrix was read: the missing policy's report and the names used."""

    missing: MatrixMissing
    missing_cells: int
    dropped_problems: list[str]
    filled_cells: int
    par_k: Real | None
    rtol: Real
    algorithms: list[str]
    problems: list[str] = Field(description="the problems kept, in order")


class PosthocPolicies(MatrixPolicies):
    """A post-hoc family's policies: the matrix's, the level and the CD convention."""

    alpha: Real
    cd_convention: CDConvention


class PairedPolicies(BaseModel):
    """How paired samples were read."""

    missing: SampleMissing
    dropped_pairs: list[int]
    zero_tol: Real
    differences: Literal["x", "x - y"]


class WilcoxonPolicies(PairedPolicies):
    """The Wilcoxon test's policies."""

    zero_method: str
    exact_max_n: int


class SamplePolicies(BaseModel):
    """How two samples were read."""

    missing: SampleMissing
    dropped_x: list[int]
    dropped_y: list[int]


class RankSumPolicies(SamplePolicies):
    """The rank-sum test's policies."""

    rtol: Real
    convention: Literal["standard", "scipy-ranksums"]


class KSPolicies(SamplePolicies):
    """The KS test's policies."""

    rtol: Real
    convention: Literal["standard", "scipy-exact"]


class PermutationPolicies(SamplePolicies):
    """The permutation test's policies."""

    exact_max_splits: int
    seed: int
    n_resamples: int = Field(description="Monte Carlo permutations drawn (after the work limit)")


_PROVENANCE = Field(description="how the answer was computed (request hash, versions, seeds)")


class FriedmanResponse(BaseModel):
    """``POST /v1/tests/friedman``."""

    test: Literal["friedman"]
    result: FriedmanResults
    policies: MatrixPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE


class PosthocResponse(BaseModel):
    """``POST /v1/tests/posthoc``."""

    test: Literal["posthoc"]
    result: PosthocFamilyRead
    policies: PosthocPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE


class BradleyTerryResponse(BaseModel):
    """``POST /v1/tests/bradley-terry``."""

    test: Literal["bradley-terry"]
    result: BradleyTerryResults
    policies: MatrixPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE


class WilcoxonResponse(BaseModel):
    """``POST /v1/tests/wilcoxon``."""

    test: Literal["wilcoxon"]
    result: WilcoxonRead
    policies: WilcoxonPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE


class SignResponse(BaseModel):
    """``POST /v1/tests/sign``."""

    test: Literal["sign"]
    result: SignRead
    policies: PairedPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE


class RankSumResponse(BaseModel):
    """``POST /v1/tests/rank-sum``."""

    test: Literal["rank-sum"]
    result: RankSumResults
    policies: RankSumPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE


class KSResponse(BaseModel):
    """``POST /v1/tests/ks``."""

    test: Literal["ks"]
    result: KSResults
    policies: KSPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE


class PermutationResponse(BaseModel):
    """``POST /v1/tests/permutation``."""

    test: Literal["permutation"]
    result: PermutationRead
    policies: PermutationPolicies
    warnings: list[str]
    provenance: dict[str, Any] = _PROVENANCE
