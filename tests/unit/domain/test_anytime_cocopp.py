"""ERT, runtimes, ECDFs and simulated restarts agree with cocopp on a real cocoex archive.

cocoex.Observer writes a COCO archive (random search and Nelder-Mead on bbob f1, f8, d2/d3, six
instances: some targets reached by every run, some by a few, some by none); absrank reads it with
its importer and cocopp with ``pproc.DataSetList``; both are asked the same questions.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any

import matplotlib as mpl
import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import stats

from app.domain.anytime import (
    DEFAULT_TARGETS,
    RuntimeTable,
    runtime_ecdf,
    runtime_tables,
    simulated_restarts,
)
from app.domain.importers import UploadLimits, read_upload
from tests.unit.importers.loggers import run_cocoex, zip_folder

# cocopp warns about its online archive list on import and sets matplotlib's pdf/ps font types:
# keep both to this import
with warnings.catch_warnings(), mpl.rc_context():
    warnings.simplefilter("ignore")
    import cocopp.pproc

TARGETS = list(DEFAULT_TARGETS)
Floats = NDArray[np.float64]


@pytest.fixture(scope="module", params=["random-search", "nelder-mead"])
def pair(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[Any, RuntimeTable]]:
    """(cocopp DataSet, our RuntimeTable) per (function, dimension), from the same archive."""
    nelder_mead = request.param == "nelder-mead"
    folder, _ = run_cocoex(
        tmp_path_factory.mktemp("coco"),
        functions="1,8",
        instances="1-6",
        dimensions="2,3",
        budget_per_dim=25 if nelder_mead else 100,
        nelder_mead=nelder_mead,
    )
    ours = read_upload("coco", "r.zip", zip_folder(folder), limits=UploadLimits())
    tables = {t.function_id: t for t in runtime_tables(ours.runs, pool_instances=True)}
    cocopp.genericsettings.verbose = False
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        datasets = list(cocopp.pproc.DataSetList(str(folder)))
    assert len(datasets) == len(tables) == 4
    return [(d, tables[f"bbob/f{d.funcId}/d{d.dim}"]) for d in datasets]


def cocopp_evals(dataset: Any, targets: list[float]) -> np.ndarray:
    """cocopp's first hits, shape (T, R), ``nan`` → ``inf``, each row sorted."""
    rows = np.array(dataset.detEvals(targets), dtype=float)
    return np.sort(np.where(np.isnan(rows), np.inf, rows), axis=1)


def test_the_data_has_full_partial_and_no_success(pair: list[tuple[Any, RuntimeTable]]) -> None:
    counts = np.concatenate([table.successes for _, table in pair])
    runs = pair[0][1].n_runs
    assert runs == 6
    assert {0, runs} <= set(counts.tolist())
    assert np.any((counts > 0) & (counts < runs))


def test_ert_equals_cocopp_detERT(pair: list[tuple[Any, RuntimeTable]]) -> None:
    for dataset, table in pair:
        theirs = np.array(dataset.detERT(TARGETS), dtype=float)
        np.testing.assert_allclose(table.ert, theirs, rtol=1e-13)
        np.testing.assert_array_equal(np.isinf(table.ert), np.isinf(theirs))


def test_budgets_and_successes_equal_cocopp(pair: list[tuple[Any, RuntimeTable]]) -> None:
    for dataset, table in pair:
        np.testing.assert_array_equal(np.sort(table.budgets), np.sort(dataset.maxevals))
        np.testing.assert_array_equal(
            table.successes, np.isfinite(cocopp_evals(dataset, TARGETS)).sum(axis=1)
        )


def test_runtimes_equal_cocopp_detEvals(pair: list[tuple[Any, RuntimeTable]]) -> None:
    for dataset, table in pair:
        np.testing.assert_array_equal(
            np.sort(table.runtimes.T, axis=1), cocopp_evals(dataset, TARGETS)
        )


def test_ecdf_points_equal_those_of_cocopps_runtimes(pair: list[tuple[Any, RuntimeTable]]) -> None:
    """The step function's breakpoints and levels are the ECDF of cocopp's (target, run) data."""
    for dataset, table in pair:
        ecdf = runtime_ecdf([table.runtimes.T])
        theirs = cocopp_evals(dataset, TARGETS).reshape(-1)
        finite = np.sort(theirs[np.isfinite(theirs)])
        np.testing.assert_array_equal(ecdf.x, np.unique(finite))
        levels = np.searchsorted(finite, ecdf.x, side="right") / theirs.size
        np.testing.assert_array_equal(ecdf(ecdf.x), levels)
        assert ecdf.total == theirs.size


def cocopp_simulated(dataset: Any, targets: list[float], samples: int) -> list[np.ndarray]:
    np.random.seed(3)  # noqa: NPY002 - cocopp draws from numpy's global generator
    return [
        np.where(np.isnan(r), np.inf, r)
        for r in dataset.evals_with_simulated_restarts(targets, samplesize=samples)
    ]


def test_simulated_restarts_equal_cocopps_where_the_runs_decide(
    pair: list[tuple[Any, RuntimeTable]],
) -> None:
    """Targets hit by every run or by none: the simulated runs are the runs themselves."""
    for dataset, table in pair:
        sure = (table.successes == 0) | (table.successes == table.n_runs)
        targets = [t for t, s in zip(TARGETS, sure, strict=True) if s]
        ours = simulated_restarts(table, n_samples=3 * table.n_runs, rng=np.random.default_rng(1))
        theirs = cocopp_simulated(dataset, targets, 3 * table.n_runs)
        for mine, cocos in zip(ours.runtimes[sure], theirs, strict=True):
            np.testing.assert_array_equal(np.sort(mine), np.sort(cocos))


def test_simulated_restarts_follow_cocopps_law_where_some_runs_fail(
    pair: list[tuple[Any, RuntimeTable]],
) -> None:
    """Partly reached targets: the same distribution (two-sample KS), and mean ≈ ERT."""
    tested = 0
    for dataset, table in pair:
        partial = np.nonzero((table.successes > 0) & (table.successes < table.n_runs))[0][:3]
        samples = 4000 * table.n_runs
        ours = simulated_restarts(table, n_samples=samples, rng=np.random.default_rng(2))
        theirs = cocopp_simulated(dataset, [TARGETS[j] for j in partial], samples)
        for j, cocos in zip(partial, theirs, strict=True):
            mine = ours.runtimes[j]
            assert stats.ks_2samp(mine, cocos).pvalue > 1e-4
            for sample in (mine, cocos):
                se = sample.std() / np.sqrt(sample.size)
                assert abs(sample.mean() - table.ert[j]) < 5 * se
            tested += 1
    assert tested > 0


def test_a_perturbed_ert_would_disagree_with_cocopp(pair: list[tuple[Any, RuntimeTable]]) -> None:
    """The comparison can fail: the usual mistakes give other numbers on this data."""

    def all_runs(s: Floats, u: Floats, n_s: Floats, n: int) -> Floats:
        return (s + u) / n

    def failures_free(s: Floats, u: Floats, n_s: Floats, n: int) -> Floats:
        return s / n_s

    def mean_plus_share(s: Floats, u: Floats, n_s: Floats, n: int) -> Floats:
        return s / n_s + u / n

    wrong = {
        "divide by all runs": all_runs,
        "unsuccessful runs count nothing": failures_free,
        "mean runtime of the successes plus a share": mean_plus_share,
    }
    for name, ert in wrong.items():
        differs = False
        for dataset, table in pair:
            success = np.isfinite(table.runtimes)
            s = np.where(success, table.runtimes, 0).sum(axis=0)
            u = np.where(success, 0, table.budgets[:, None]).sum(axis=0)
            n_s = success.sum(axis=0).astype(float)
            hit = n_s > 0
            theirs = np.array(dataset.detERT(TARGETS), dtype=float)[hit]
            perturbed = ert(s[hit], u[hit], n_s[hit], table.n_runs)
            differs |= not np.allclose(perturbed, theirs, rtol=1e-13)
        assert differs, name
