"""Use cases of ``POST /v1/tests/*``: one statistical test on a matrix or on two samples.

Each use case applies the declared missing-value policy, checks sizes against the settings,
calls the pure test in ``app.domain`` and wraps its result with the policies used, warnings and
provenance. Domain errors become problem responses naming the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from app.config import Settings
from app.domain import missing as missing_policy
from app.domain import paired, permutation, ranktests, twosample
from app.domain.errors import NotApplicable
from app.errors import InvalidInput
from app.schemas.stattests import (
    BradleyTerryRequest,
    BradleyTerryResponse,
    FriedmanRequest,
    FriedmanResponse,
    KSRequest,
    KSResponse,
    MatrixInput,
    PairedInput,
    PermutationRequest,
    PermutationResponse,
    PosthocRequest,
    PosthocResponse,
    RankSumRequest,
    RankSumResponse,
    SignRequest,
    SignResponse,
    TwoSampleInput,
    WilcoxonRequest,
    WilcoxonResponse,
)
from app.services.errors import domain_errors_as_problems
from app.services.provenance import provenance
from app.services.serialize import finite_or_none, jsonable


def _names(given: list[str] | None, n: int, prefix: str, field: str) -> list[str]:
    if given is None:
        return [f"{prefix}{i + 1}" for i in range(n)]
    if len(given) != n:
        raise InvalidInput(f"{field} has {len(given)} names for {n} entries", field=field)
    if len(set(given)) != len(given):
        raise InvalidInput(f"{field} must be unique", field=field)
    return given


def named_posthoc(result: ranktests.PosthocResult, names: Sequence[str]) -> dict[str, Any]:
    """A post-hoc result as JSON, with algorithm names beside the indices.

    Every pair gets ``a``, ``b`` (the names of ``i``, ``j``), ``clique_names`` lists each
    clique's member names, ``control_name`` the control's (``None`` for all pairs).
    """
    # the pairs' place in the answer is their columns' place among the result's fields
    out: dict[str, Any] = {
        ("pairs" if key == "pair_columns" else key): value
        for key, value in jsonable(result).items()
    }
    out["control_name"] = None if result.control is None else names[result.control]
    out["pairs"] = [
        {"i": p.i, "j": p.j, "a": names[p.i], "b": names[p.j]} | jsonable(p) for p in result.pairs
    ]
    out["clique_names"] = [[names[m] for m in clique] for clique in result.cliques]
    return out


def named_bradley_terry(
    result: ranktests.BradleyTerryResult, names: Sequence[str]
) -> dict[str, Any]:
    """A Bradley–Terry fit as JSON, with ``strengths_by_algorithm`` (``algorithm``, ``strength``
    in the algorithms' order; ``strengths`` stays the list by index)."""
    out: dict[str, Any] = jsonable(result)
    out["strengths_by_algorithm"] = [
        {"algorithm": name, "strength": s}
        for name, s in zip(names, jsonable(result.strengths), strict=True)
    ]
    return out


def _matrix(body: MatrixInput, settings: Settings) -> tuple[np.ndarray, list[str], dict[str, Any]]:
    """Check shape and limits, apply the missing policy; return (matrix, algorithm names, info)."""
    rows = body.values
    k = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != k:
            raise InvalidInput(
                f"ragged matrix: row {i} has {len(row)} values, row 0 has {k}", field=f"values.{i}"
            )
    if k < 2:
        raise InvalidInput("at least 2 algorithms (columns) are needed", field="values.0")
    if len(rows) > settings.max_problems or k > settings.max_algorithms:
        raise InvalidInput(
            f"at most {settings.max_problems} problems and {settings.max_algorithms} algorithms",
            field="values",
        )
    if len(rows) * k > settings.max_matrix_cells:
        raise InvalidInput(
            f"at most {settings.max_matrix_cells} cells (problems × algorithms)", field="values"
        )
    algorithms = _names(body.algorithms, k, "A", "algorithms")
    problems = _names(body.problems, len(rows), "P", "problems")
    a = np.array([finite_or_none(r) for r in rows], dtype=np.float64)
    with _problems(body, "values"):
        matrix, kept, report = missing_policy.apply_matrix_policy(
            a, policy=body.missing, par_k=body.par_k, problems=problems
        )
    if matrix.shape[0] < 2:
        raise InvalidInput(
            f"at least 2 problems (rows) are needed; {matrix.shape[0]} left after the missing "
            "policy",
            field="values",
        )
    info = {
        "missing": body.missing,
        "missing_cells": report.n_missing,
        "dropped_problems": [problems[i] for i in report.dropped],
        "filled_cells": report.filled,
        "par_k": report.par_k,
        "rtol": body.rtol,
        "algorithms": algorithms,
        "problems": [p for p, keep in zip(problems, kept, strict=True) if keep],
    }
    return matrix, algorithms, info


def _problems(body: BaseModel, default_field: str) -> AbstractContextManager[None]:
    """Domain errors as problems naming only fields of the request (else ``default_field``)."""
    return domain_errors_as_problems(default_field, request_fields=type(body).model_fields)


CONVENTION_FIELDS = ("cd_convention", "convention")
"""Options added after answers were published: at their default (``"standard"``) they are left
out of the hashed request, so a request that does not name them keeps its ``request_sha256``."""


def request_payload(body: BaseModel) -> dict[str, Any]:
    """The request as hashed in the provenance: its JSON form without conventions at default."""
    payload: dict[str, Any] = body.model_dump(mode="json")
    for name in CONVENTION_FIELDS:
        if payload.get(name) == "standard":
            del payload[name]
    return payload


Answer = TypeVar("Answer", bound=BaseModel)
T = TypeVar("T")


def _answer(
    model: type[Answer],
    test: str,
    body: BaseModel,
    result: object,
    policies: dict[str, Any],
    warnings: list[str],
    **provenance_extra: Any,
) -> Answer:
    """The answer validated by its response model (keys set as built: the bytes are those of
    the plain JSON, ``exclude_unset`` keeps the model from adding any)."""
    return model.model_validate(
        {
            "test": test,
            "result": jsonable(result),
            "policies": jsonable(policies),
            "warnings": warnings,
            "provenance": provenance(request_payload(body), test=test, **provenance_extra),
        }
    )


def friedman(body: FriedmanRequest, settings: Settings) -> FriedmanResponse:
    """Friedman χ² (tie-corrected), Iman–Davenport F, aligned ranks and Quade on a matrix."""
    matrix, _, info = _matrix(body, settings)
    with _problems(body, "values"):
        result = {
            "friedman": ranktests.friedman(matrix, rtol=body.rtol),
            "aligned_ranks": value_based(ranktests.friedman_aligned_ranks, matrix, body.rtol),
            "quade": value_based(ranktests.quade, matrix, body.rtol),
        }
    return _answer(FriedmanResponse, "friedman", body, result, info, [])


@dataclass(frozen=True, kw_only=True)
class NotComputed:
    """A value-based test that was not run on these values.

    Attributes
    ----------
    computed : bool
        Always ``False`` (the JSON field that tells it from a result; first, as sent).
    reason : str
        Why (non-finite values, differences beyond the float range, ...).
    """

    computed: bool = False
    reason: str


def value_based(
    test: Callable[..., T], matrix: npt.NDArray[np.float64], rtol: float
) -> T | NotComputed:
    """Aligned ranks or Quade, which use the values themselves (not only their ranks).

    They need finite values whose differences fit in a float; otherwise the answer says they
    were not computed and why (``{"computed": false, "reason": ...}`` as JSON), while the
    rank-based Friedman test stands.
    """
    if not np.isfinite(matrix).all():
        return NotComputed(reason="needs finite values (worst-rank puts +inf)")
    try:
        return test(matrix, rtol=rtol)
    except NotApplicable as exc:
        return NotComputed(reason=str(exc))


def posthoc(body: PosthocRequest, settings: Settings) -> PosthocResponse:
    """Post-hoc comparisons of Friedman ranks (all pairs or against a control)."""
    matrix, algorithms, info = _matrix(body, settings)
    control = None
    if body.control is not None:
        if body.control not in algorithms:
            raise InvalidInput(f"control {body.control!r} is not an algorithm", field="control")
        control = algorithms.index(body.control)
    with _problems(body, "method"):
        result = ranktests.posthoc(
            matrix,
            method=body.method,
            alpha=body.alpha,
            control=control,
            rtol=body.rtol,
            cd_convention=body.cd_convention,
        )
    named = named_posthoc(result, algorithms)
    info |= {"alpha": body.alpha, "cd_convention": body.cd_convention}
    warnings = [] if result.low_power is None else [result.low_power.message]
    return _answer(PosthocResponse, "posthoc", body, named, info, warnings)


def bradley_terry(body: BradleyTerryRequest, settings: Settings) -> BradleyTerryResponse:
    """Bradley–Terry strengths from pairwise wins over problems."""
    matrix, algorithms, info = _matrix(body, settings)
    with _problems(body, "values"):
        wins = ranktests.pairwise_wins(matrix, rtol=body.rtol)
        result = {
            "wins": wins,
            "model": named_bradley_terry(ranktests.bradley_terry(wins), algorithms),
        }
    return _answer(BradleyTerryResponse, "bradley-terry", body, result, info, [])


def _check_sample(values: list[Any], field: str, settings: Settings) -> None:
    if len(values) > settings.max_sample_size:
        raise InvalidInput(f"at most {settings.max_sample_size} values", field=field)


def _paired(body: PairedInput, settings: Settings) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    _check_sample(body.x, "x", settings)
    x = finite_or_none(body.x)
    if body.y is None:
        y = np.zeros_like(x)
    else:
        _check_sample(body.y, "y", settings)
        y = finite_or_none(body.y)
    with _problems(body, "x"):
        x, y, report = missing_policy.apply_paired_policy(x, y, policy=body.missing)
    info = {
        "missing": body.missing,
        "dropped_pairs": list(report.dropped),
        "zero_tol": body.zero_tol,
        "differences": "x" if body.y is None else "x - y",
    }
    return x, y, info


def wilcoxon(body: WilcoxonRequest, settings: Settings) -> WilcoxonResponse:
    """Wilcoxon signed-rank test (exact with ties and zeros up to the configured n)."""
    x, y, info = _paired(body, settings)
    with _problems(body, "x"):
        result = paired.wilcoxon_signed_rank(
            x,
            y,
            zero_method=body.zero_method,
            zero_tol=body.zero_tol,
            alternative=body.alternative,
            method=body.method,
            exact_max_n=settings.wilcoxon_exact_max_n,
        )
    info |= {"zero_method": body.zero_method, "exact_max_n": settings.wilcoxon_exact_max_n}
    return _answer(WilcoxonResponse, "wilcoxon", body, result, info, [])


def sign(body: SignRequest, settings: Settings) -> SignResponse:
    """Exact sign test (ties dropped and counted)."""
    x, y, info = _paired(body, settings)
    with _problems(body, "x"):
        result = paired.sign_test(x, y, zero_tol=body.zero_tol, alternative=body.alternative)
    return _answer(SignResponse, "sign", body, result, info, [])


def _samples(
    body: TwoSampleInput, settings: Settings
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    _check_sample(body.x, "x", settings)
    _check_sample(body.y, "y", settings)
    with _problems(body, "x"):
        x, rx = missing_policy.apply_sample_policy(
            finite_or_none(body.x), policy=body.missing, field="x"
        )
        y, ry = missing_policy.apply_sample_policy(
            finite_or_none(body.y), policy=body.missing, field="y"
        )
    info = {"missing": body.missing, "dropped_x": list(rx.dropped), "dropped_y": list(ry.dropped)}
    return x, y, info


def _two_sample(
    test: str,
    body: RankSumRequest | KSRequest,
    settings: Settings,
    fn: Callable[..., Any],
    options: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    x, y, info = _samples(body, settings)
    with _problems(body, "x"):
        result = {
            test.replace("-", "_"): fn(
                x,
                y,
                alternative=body.alternative,
                rtol=body.rtol,
                **({"method": body.method} | options),
            ),
            "a12": twosample.vargha_delaney_a12(x, y, rtol=body.rtol),
        }
    return result, info | {"rtol": body.rtol, "convention": body.convention}


_RANKSUMS = {"method": "asymptotic", "continuity": False, "tie_correction": False}
"""scipy.stats.ranksums: the normal approximation without tie or continuity correction."""


def rank_sum(body: RankSumRequest, settings: Settings) -> RankSumResponse:
    """Wilcoxon rank-sum / Mann–Whitney U (exact with ties when feasible) and A12.

    ``convention="scipy-ranksums"``: scipy's ``ranksums`` (Omran et al.'s printed values);
    ``method="exact"`` is then refused (422 naming ``convention``).
    """
    options: dict[str, Any] = {}
    if body.convention == "scipy-ranksums":
        if body.method == "exact":
            raise InvalidInput(
                "convention 'scipy-ranksums' is a normal approximation: use method auto or "
                "asymptotic, or convention 'standard' for the exact test",
                field="convention",
            )
        options = _RANKSUMS
    result, info = _two_sample("rank-sum", body, settings, twosample.rank_sum, options)
    if body.convention == "scipy-ranksums":  # the method is the convention's, not requested
        result["rank_sum"] = dataclasses.replace(
            result["rank_sum"],
            method_reason="convention 'scipy-ranksums' implies the normal approximation without "
            "tie or continuity correction (scipy.stats.ranksums)",
        )
    return _answer(RankSumResponse, "rank-sum", body, result, info, [])


def ks(body: KSRequest, settings: Settings) -> KSResponse:
    """Two-sample Kolmogorov–Smirnov (exact, conditional on ties, when feasible) and A12.

    ``convention="scipy-exact"``: the exact law ignores ties, as scipy's; with ties the answer
    says it is not exact (``result.ks.ties_ignored`` and a warning).
    """
    ties = "ignore" if body.convention == "scipy-exact" else "conditional"
    result, info = _two_sample("ks", body, settings, twosample.ks_2samp, {"ties": ties})
    warnings = []
    if result["ks"].ties_ignored:
        warnings.append(
            "convention 'scipy-exact': the pooled sample has ties, which the exact null law "
            "ignores (as scipy's does), so the p-value is not exact; convention 'standard' gives "
            "the exact p-value conditional on the ties"
        )
    return _answer(KSResponse, "ks", body, result, info, warnings)


def permutation_test(body: PermutationRequest, settings: Settings) -> PermutationResponse:
    """Permutation test of the difference of medians or means (exact or Monte Carlo)."""
    x, y, info = _samples(body, settings)
    if body.n_resamples > settings.permutation_max_resamples:
        raise InvalidInput(
            f"n_resamples must not exceed permutation_max_resamples = "
            f"{settings.permutation_max_resamples}",
            field="n_resamples",
        )
    n_resamples, notes = _resamples(body, x.size + y.size, settings)
    with _problems(body, "x"):
        result = permutation.permutation_test(
            x,
            y,
            statistic=body.statistic,
            alternative=body.alternative,
            method=body.method,
            n_resamples=n_resamples,
            seed=body.seed,
            rtol=body.rtol,
            exact_max_splits=settings.permutation_exact_max_splits,
        )
    info |= {
        "exact_max_splits": settings.permutation_exact_max_splits,
        "seed": body.seed,
        "n_resamples": n_resamples,
    }
    seeds = {"seed": body.seed} if result.method == "monte_carlo" else {}
    warnings = notes if result.method == "monte_carlo" else []
    remarks = [note.message for note in result.notes]
    as_json = jsonable(result) | {"notes": remarks}  # the remarks' sentences, in place
    return _answer(
        PermutationResponse, "permutation", body, as_json, info, [*warnings, *remarks], seeds=seeds
    )


def _resamples(body: PermutationRequest, n: int, settings: Settings) -> tuple[int, list[str]]:
    """Monte Carlo permutations to draw, within ``permutation_max_work`` (n_resamples × n).

    A count the request sets is refused beyond the limit (naming ``n_resamples``); the default
    count is lowered to what the limit allows, and a warning says so. ``method="exact"`` never
    draws permutations, so it is not limited here.
    """
    if body.method == "exact":
        return body.n_resamples, []
    allowed = settings.permutation_max_work // n
    if body.n_resamples <= allowed:
        return body.n_resamples, []
    if "n_resamples" in body.model_fields_set or allowed < 1:
        raise InvalidInput(
            f"n_resamples × (n_A + n_B) = {body.n_resamples * n} exceeds permutation_max_work "
            f"= {settings.permutation_max_work}; use at most {max(allowed, 0)} permutations or "
            "smaller samples",
            field="n_resamples" if "n_resamples" in body.model_fields_set else "x",
        )
    return allowed, [
        f"n_resamples lowered from the default {body.n_resamples} to {allowed} so that "
        f"n_resamples × (n_A + n_B) stays within permutation_max_work = "
        f"{settings.permutation_max_work}; the Monte Carlo standard error grows accordingly"
    ]
