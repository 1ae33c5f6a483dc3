"""The COCO importer agrees with cocopp's own reader (``cocopp.pproc.DataSetList``)."""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import matplotlib as mpl
import pytest

from app.domain.importers import UploadLimits, read_upload
from tests.unit.importers.loggers import SeenRun, zip_folder

# cocopp warns about its online archive list on import and sets matplotlib's pdf/ps font types:
# keep both to this import
with warnings.catch_warnings(), mpl.rc_context():
    warnings.simplefilter("ignore")
    import cocopp.pproc


def cocopp_datasets(folder: Path) -> list:
    cocopp.genericsettings.verbose = False
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return list(cocopp.pproc.DataSetList(str(folder)))


def test_final_values_and_budgets_match_cocopp(
    cocoex_experiment: tuple[Path, list[SeenRun]],
) -> None:
    folder, seen = cocoex_experiment
    ours = read_upload("coco", "r.zip", zip_folder(folder), limits=UploadLimits())
    datasets = cocopp_datasets(folder)
    assert sum(len(d.instancenumbers) for d in datasets) == len(ours.runs) == len(seen)
    got = {r.function_id: r for r in ours.runs}  # one run per (f, i, d) here
    for dataset in datasets:
        for k, instance in enumerate(dataset.instancenumbers):
            run = got[f"bbob/f{dataset.funcId}/i{instance}/d{dataset.dim}"]
            assert run.budget == dataset.maxevals[k]
            assert run.value == pytest.approx(dataset.finalfunvals[k], rel=1e-12, abs=1e-300)
