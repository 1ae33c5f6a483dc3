"""Answer models of ``POST /v1/tests/*``: each test's result, policies and the envelope."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from app.schemas.stattests._requests import (
    Alternative,
    CDConvention,
    MatrixMissing,
    Number,
    SampleMissing,
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
