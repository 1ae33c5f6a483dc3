"""Fixtures: one cocoex and one ioh experiment per module, written by the real loggers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.importers.loggers import SeenRun, run_cocoex, run_ioh


@pytest.fixture(scope="module")
def cocoex_experiment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[SeenRun]]:
    return run_cocoex(tmp_path_factory.mktemp("coco"))


@pytest.fixture(scope="module")
def ioh_experiment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[SeenRun]]:
    return run_ioh(tmp_path_factory.mktemp("ioh"))
