"""nevergrad benchmark CSV: mapping to absrank ids only where unambiguous."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app.domain.errors import UploadTooLarge
from app.domain.functions import get_function
from app.domain.importers import UploadLimits, read_upload
from app.domain.importers.nevergrad import CLASSIC_NAMES
from app.domain.results import MalformedFile

LIMITS = UploadLimits()
DATA = Path(__file__).parent / "data"

# the columns nevergrad.benchmark writes for ArtificialFunction experiments (docs/benchmarking)
HEADER = (
    "loss,optimizer_name,budget,num_workers,batch_mode,elapsed_budget,elapsed_time,pseudotime,"
    "error,seed,name,block_dimension,useful_dimensions,useless_variables,translation_factor,"
    "num_blocks,rotation,noise_level,noise_dissymmetry,hashing,aggregator,split,bounded,expo,"
    "dimension,function_class"
)


def row(loss="0.5", optimizer="CMA", name="sphere", dim="2", rotation="False", translation="0.0",
        noise="0", elapsed="100", error="", budget="100", seed="", workers="1") -> str:  # fmt: skip
    values = [loss, optimizer, budget, workers, "True", elapsed, "0.01", "100", error, seed, name,
              dim, dim, "0", translation, "1", rotation, noise, "False", "False", "max", "False",
              "False", "1.0", dim, "ArtificialFunction"]  # fmt: skip
    return ",".join(values)


def csv(*rows: str) -> bytes:
    return ("\n".join([HEADER, *rows]) + "\n").encode()


# nevergrad's definitions (nevergrad/functions/corefuncs.py), rewritten for the comparison
NEVERGRAD = {
    "sphere": lambda x: float(np.sum(x**2)),
    "rastrigin": lambda x: float(10 * (len(x) - np.sum(np.cos(2 * np.pi * x))) + np.sum(x**2)),
    "rosenbrock": lambda x: float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)),
    "griewank": lambda x: float(
        1 + np.sum(x**2) / 4000.0 - np.prod(np.cos(x / np.sqrt(np.arange(1, len(x) + 1))))
    ),
}


@pytest.mark.parametrize("name", CLASSIC_NAMES)
def test_mapped_names_are_nevergrads_definitions(name: str) -> None:
    rng = np.random.default_rng(4)
    for dim in (2, 5, 10):
        function = get_function(f"classic/{name}/d{dim}")
        x = rng.uniform(function.lower, function.upper, size=(20, dim))
        np.testing.assert_allclose(
            function.evaluate(x), [NEVERGRAD[name](p) for p in x], rtol=1e-12, atol=1e-12
        )


def test_nevergrads_ellipsoid_is_not_absranks() -> None:
    x = np.ones((1, 3))
    nevergrad = sum(10 ** (6 * (i - 1) / 2) * x[0, i] ** 2 for i in range(3))
    assert get_function("classic/ellipsoid/d3").evaluate(x)[0] != pytest.approx(nevergrad)


def test_untransformed_artificial_functions() -> None:
    data = csv(
        row("0.5"),
        row("0.25", elapsed="80", translation="0.00"),
        row("3.5", name="rastrigin", dim="5", rotation="false"),
    )
    result = read_upload("nevergrad", "ng.csv", data, limits=LIMITS)
    assert (result.format, result.values_are, result.algorithm) == ("nevergrad", "f", "CMA")
    assert [(r.function_id, r.run, r.value, r.budget) for r in result.runs] == [
        ("classic/rastrigin/d5", 0, 3.5, 100),
        ("classic/sphere/d2", 0, 0.5, 100),
        ("classic/sphere/d2", 1, 0.25, 80),
    ]
    assert all(r.trajectory is None for r in result.runs)
    declared = read_upload("nevergrad", "ng.csv", data, limits=LIMITS, values_are="error")
    assert declared.values_are == "error"


def test_csv_written_by_nevergrad() -> None:
    """Rows of nevergrad 1.0.12's Experiment (data/make_nevergrad_csv.py): loss = absrank's f."""
    data = (DATA / "nevergrad-1.0.12-randomsearch.csv").read_bytes()
    points = json.loads((DATA / "nevergrad-1.0.12-randomsearch.json").read_text())
    result = read_upload("nevergrad", "ng.csv", data, limits=LIMITS)
    assert result.algorithm == "RandomSearch"
    expected = {}
    for line, x in zip(data.decode().splitlines()[1:], points, strict=True):
        name = line.split(",")[7]
        function_id = f"classic/{name}/d{len(x)}"
        value = get_function(function_id).evaluate(np.array([x]))[0]
        expected.setdefault(function_id, []).append((float(line.split(",")[0]), value))
    got = {(r.function_id, r.run): r for r in result.runs}
    assert len(got) == len(points) == 5
    for function_id, pairs in expected.items():
        for k, (loss, value) in enumerate(pairs):
            run = got[(function_id, k)]
            assert run.value == loss
            assert loss == pytest.approx(value, rel=1e-12, abs=1e-15)
            assert run.budget == 30


def test_transformed_rows_written_by_nevergrad_are_refused() -> None:
    data = (DATA / "nevergrad-1.0.12-transformed.csv").read_bytes()
    with pytest.raises(MalformedFile, match="rotation='true'") as info:
        read_upload("nevergrad", "t.csv", data, limits=LIMITS)
    assert info.value.line == 2
    second = b"\n".join(data.split(b"\n")[:1] + data.split(b"\n")[2:])
    with pytest.raises(MalformedFile, match=r"translation_factor='1.0'") as info:
        read_upload("nevergrad", "t.csv", second, limits=LIMITS)
    assert info.value.line == 2


def test_explicit_function_id_column() -> None:
    data = b"loss,optimizer_name,budget,function_id\n1.5,NGOpt,200,bbob/f3/i1/d5\n"
    result = read_upload("nevergrad", "ng.csv", data, limits=LIMITS)
    assert [(r.function_id, r.value, r.budget) for r in result.runs] == [
        ("bbob/f3/i1/d5", 1.5, 200)
    ]


@pytest.mark.parametrize(
    ("bad", "line", "words"),
    [
        (row(rotation="True"), 3, "rotation='true'"),
        (row(translation="1.0"), 3, "translation_factor='1.0'"),
        (row(translation="x"), 3, "translation_factor='x'"),
        (row(noise="0.9"), 3, "noise_level"),
        (row(name="ellipsoid"), 3, "no absrank counterpart"),
        (row(name="hm"), 3, "no absrank counterpart"),
        (row(optimizer="DE"), 3, "column optimizer_name"),
        (row(workers="4"), 3, "column num_workers"),
        (row(seed="7", loss="0.1"), 3, "duplicate runs"),
        (row(loss="abc"), 3, "not a number"),
        (row(loss="nan"), 3, "not finite"),
        (row(error="ValueError"), 3, "experiment failed"),
        (row(dim="7")[: -len(",7,ArtificialFunction")], 3, "truncated"),
        (row(dim="101"), 3, "not hosted"),
        (row(elapsed="0"), 3, "at least 1"),
        (row(loss="-1.0"), 3, r"value -1.0 is below f\* = 0.0 of classic/sphere/d2"),
    ],
)
def test_refusals_name_file_and_line(bad: str, line: int, words: str) -> None:
    with pytest.raises(MalformedFile, match=words) as info:
        read_upload("nevergrad", "ng.csv", csv(row(seed="7"), bad), limits=LIMITS)
    assert (info.value.file, info.value.line) == ("ng.csv", line)
    assert str(info.value).startswith(f"ng.csv, line {line}: ")


def test_missing_header_and_empty() -> None:
    with pytest.raises(MalformedFile, match="header needs 'loss'") as info:
        read_upload("nevergrad", "ng.csv", row().encode(), limits=LIMITS)
    assert info.value.line == 1
    with pytest.raises(MalformedFile, match="empty"):
        read_upload("nevergrad", "ng.csv", b"", limits=LIMITS)


def test_row_limit() -> None:
    with pytest.raises(UploadTooLarge):
        read_upload("nevergrad", "ng.csv", csv(*[row()] * 11), limits=UploadLimits(max_rows=10))
