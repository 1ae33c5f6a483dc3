"""Test oracle: the comparison's NIIA report and absolute pairwise tests as computed before
issue 15 item 2 (every subset re-analysed from scratch, one Wilcoxon and one sign test call per
pair), kept verbatim so that the fast paths can be checked against it on random inputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from app.config import Settings
from app.domain import niia, paired, ranktests
from app.domain.errors import InvalidInput
from app.domain.ranking import rank_rows
from app.schemas.comparisons import ComparisonCreate
from app.services._comparison_common import ABSOLUTE_ADJUSTMENT, data_field, request_problems


def reference_niia_check(
    values: Any,
    subsets: Sequence[Sequence[int]],
    analyse: Callable[[np.ndarray, list[int]], niia.Analysis],
) -> niia.NiiaCheck:
    a = np.asarray(values, dtype=np.float64)
    k = a.shape[1]
    everyone = list(range(k))
    full = niia.conclusions(analyse(a, everyone), everyone)
    reports = []
    for s, subset in enumerate(subsets):
        members = sorted({int(i) for i in subset})
        if len(members) < 2 or members[0] < 0 or members[-1] >= k:
            raise InvalidInput(
                f"subset {s} needs at least 2 distinct known algorithms", field=f"niia_subsets.{s}"
            )
        sub = niia.conclusions(analyse(a[:, members], members), members)
        flips = tuple(
            niia.Flip(pair=pair, kinds=kinds, full=full[pair], subset=c)
            for pair, c in sorted(sub.items())
            if (kinds := niia.flip_kinds(full[pair], c))
        )
        reports.append(niia.SubsetReport(tuple(members), len(sub), flips))
    return niia.NiiaCheck(full, tuple(reports))


def _significance(result: ranktests.PosthocResult, k: int) -> np.ndarray:
    sig = np.full((k, k), None, dtype=object)
    for pair in result.pairs:
        sig[pair.i, pair.j] = sig[pair.j, pair.i] = bool(pair.significant)
    return sig


def _posthoc(matrix: np.ndarray, body: ComparisonCreate, control: int | None) -> Any:
    with request_problems("posthoc"):
        return ranktests.posthoc(
            matrix,
            method=body.posthoc,
            alpha=body.alpha,
            control=control,
            rtol=body.rtol,
            cd_convention=body.cd_convention,
        )


def reference_relative_analyse(
    body: ComparisonCreate, control: int | None
) -> Callable[[np.ndarray, list[int]], niia.Analysis]:
    def analyse(sub: np.ndarray, members: list[int]) -> niia.Analysis:
        sub_control = members.index(control) if control in members else None
        if control is not None and sub_control is None:
            avg = rank_rows(sub, rtol=body.rtol).mean(axis=0)
            return niia.Analysis(avg, np.full((len(members),) * 2, None, dtype=object))
        post = _posthoc(sub, body, sub_control)
        return niia.Analysis(np.asarray(post.average_ranks), _significance(post, len(members)))

    return analyse


def reference_pairwise_absolute(
    v: np.ndarray,
    body: ComparisonCreate,
    control: int | None,
    settings: Settings,
    names: Sequence[str] | None = None,
) -> tuple[list[dict[str, Any]], np.ndarray]:
    k = v.shape[1]
    pairs = [
        (i, j) for i in range(k) for j in range(i + 1, k) if control is None or control in (i, j)
    ]
    tests = []
    with request_problems(data_field(body)):
        for i, j in pairs:
            w = paired.wilcoxon_signed_rank(
                v[:, i],
                v[:, j],
                zero_method=body.zero_method,
                exact_max_n=settings.wilcoxon_exact_max_n,
            )
            s = paired.sign_test(v[:, i], v[:, j])
            tests.append((i, j, w, s))
        p = np.array([t[2].p_value for t in tests], dtype=np.float64)
        log_p = np.array([t[2].log10_p_value for t in tests], dtype=np.float64)
        adjusted = ranktests.adjusted_family(p, log_p, method=ABSOLUTE_ADJUSTMENT[body.posthoc])
    sig = np.full((k, k), None, dtype=object)
    out = []
    for (i, j, w, s), p_adj, log_adj in zip(tests, adjusted.p, adjusted.log10_p, strict=True):
        significant = bool(p_adj < body.alpha)
        sig[i, j] = sig[j, i] = significant
        if names is None:
            continue
        out.append(
            {
                "pair": [i, j],
                "i": i,
                "j": j,
                "a": names[i],
                "b": names[j],
                "wilcoxon": w,
                "sign_test": s,
                "p_adjusted": float(p_adj),
                "log10_p_adjusted": float(log_adj),
                "adjustment": ABSOLUTE_ADJUSTMENT[body.posthoc],
                "significant": significant,
            }
        )
    return out, sig


def reference_absolute_analyse(
    body: ComparisonCreate, control: int | None, settings: Settings
) -> Callable[[np.ndarray, list[int]], niia.Analysis]:
    def analyse(sub: np.ndarray, members: list[int]) -> niia.Analysis:
        sub_control = members.index(control) if control in members else None
        if control is not None and sub_control is None:
            return niia.Analysis(sub.mean(axis=0), np.full((len(members),) * 2, None, object))
        _, sig = reference_pairwise_absolute(sub, body, sub_control, settings)
        return niia.Analysis(sub.mean(axis=0), sig)

    return analyse


def reference_niia_side(
    matrix: np.ndarray,
    subsets: list[list[int]],
    analyse: Callable[[np.ndarray, list[int]], niia.Analysis],
    algorithms: tuple[str, ...],
) -> dict[str, Any]:
    with request_problems("niia_subsets"):
        _, reports = reference_niia_check(matrix, subsets, analyse)
    named = [
        {
            "subset": [algorithms[i] for i in r.members],
            "pairs_compared": r.pairs_compared,
            "flips": [
                {
                    "pair": [algorithms[f.pair[0]], algorithms[f.pair[1]]],
                    "kinds": list(f.kinds),
                    "full": f.full,
                    "subset": f.subset,
                }
                for f in r.flips
            ],
        }
        for r in reports
    ]
    flipped = sorted(
        {(algorithms[f.pair[0]], algorithms[f.pair[1]]) for r in reports for f in r.flips}
    )
    return {"subsets": named, "flipped_pairs": [list(p) for p in flipped]}
