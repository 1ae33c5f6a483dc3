"""Request models of ``POST /v1/tests/*`` and the value types they share with the answers."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
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
