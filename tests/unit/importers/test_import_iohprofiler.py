"""IOHprofiler importer: ioh.logger.Analyzer output, ioh's BBOB against absrank, legacy files."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import ioh
import numpy as np
import pytest

from app.domain.errors import InvalidInput, UploadTooLarge
from app.domain.functions import get_function
from app.domain.functions.bbob import MAX_INSTANCE
from app.domain.importers import UploadLimits, read_upload
from app.domain.importers.iohprofiler import BBOB_NAMES
from app.domain.results import MalformedFile
from tests.unit.importers.loggers import SeenRun, pair_runs, run_ioh, tgz_folder, zip_folder

LIMITS = UploadLimits()


def test_bbob_names_are_iohs() -> None:
    assert dict(ioh.problem.BBOB.problems) == BBOB_NAMES


@pytest.mark.parametrize("dim", [2, 5, 10, 40])
def test_ioh_bbob_optimum_is_absranks_f_star(dim: int) -> None:
    """Bit-equal except f20 (Schwefel): absrank's f* is cocoex's f(x_opt), up to 4e-15 off."""
    differ = set()
    for fid in range(1, 25):
        for instance in (1, 2, 5, 15, 51, 1001, 100_000, MAX_INSTANCE):
            optimum = ioh.get_problem(fid, instance, dim, ioh.ProblemClass.BBOB).optimum.y
            expected = get_function(f"bbob/f{fid}/i{instance}/d{dim}").f_opt
            if optimum != expected:
                differ.add(fid)
                assert abs(optimum - expected) <= 1e-14, (fid, instance)
    assert differ <= {20}


def test_logged_values_are_errors_of_what_the_optimizer_saw(
    ioh_experiment: tuple[Path, list[SeenRun]],
) -> None:
    folder, seen = ioh_experiment
    # raw_y in the .dat is f - optimum.y: compare with the f values the optimizer saw
    data = next(folder.glob("data_f1_*/IOHprofiler_f1_DIM2.dat")).read_text().split("\n")
    first = float(data[1].split()[1])
    saw = seen[0]
    assert saw.function_id == "bbob/f1/i1/d2"
    assert first == pytest.approx(saw.values[0] - 79.48, abs=1e-9)
    assert first != pytest.approx(saw.values[0], abs=1.0)


@pytest.mark.parametrize("pack", [zip_folder, tgz_folder])
def test_analyzer_output(ioh_experiment: tuple[Path, list[SeenRun]], pack) -> None:
    folder, seen = ioh_experiment
    result = read_upload("iohprofiler", "ioh.zip", pack(folder), limits=LIMITS)
    assert (result.format, result.values_are, result.algorithm) == (
        "iohprofiler",
        "error",
        "seeded-rs",
    )
    assert [n.code for n in result.notes] == ["ioh-suite-assumed-bbob"] * 3
    for run, want in pair_runs(result, seen):
        assert run.value == pytest.approx(want.best_after(run.budget), rel=1e-12, abs=1e-12)
        assert run.trajectory.best[-1] == run.value
        for e, b in zip(run.trajectory.evaluations, run.trajectory.best, strict=True):
            assert b == pytest.approx(want.best_after(e), abs=1e-9)  # raw_y: 10 decimals


def test_suite_bbob_gives_no_note(tmp_path: Path) -> None:
    logger = ioh.logger.Analyzer(root=str(tmp_path), folder_name="s", algorithm_name="a")
    suite = ioh.suite.BBOB([2], [1], [3])
    suite.attach_logger(logger)
    rng = np.random.default_rng(0)
    for problem in suite:
        for _ in range(10):
            problem(rng.uniform(-5, 5, 3))
        problem.reset()
    logger.close()
    result = read_upload("iohprofiler", "s.zip", zip_folder(tmp_path / "s"), limits=LIMITS)
    assert result.notes == ()
    assert [r.function_id for r in result.runs] == ["bbob/f2/i1/d3"]


def edited_json(folder: Path, change) -> bytes:
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }
    name = next(n for n in files if n.endswith("f1_Sphere.json"))
    meta = json.loads(files[name])
    change(meta)
    files[name] = json.dumps(meta).encode()
    return zipped(files)


def zipped(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda m: m.update(maximization=True), "maximization"),
        (lambda m: m.update(suite="PBO"), "not one of ioh's BBOB"),
        (lambda m: m.update(function_name="OneMax"), "not one of ioh's BBOB"),
        (lambda m: m["scenarios"][0]["runs"].pop(), "holds"),
        (lambda m: m["scenarios"][0].update(path="elsewhere.dat"), "not in the upload"),
        (lambda m: m["scenarios"][0]["runs"][0].update(evals=3), "past the run's 3"),
        (lambda m: m["scenarios"][0]["runs"][0]["best"].update(y=1e6), "below the run's best"),
        (lambda m: m["scenarios"][0]["runs"][0]["best"].update(y=-1.0), "negative"),
        (lambda m: m["scenarios"][0]["runs"][0].pop("instance"), "without integer"),
        (lambda m: m["scenarios"].append(dict(m["scenarios"][0])), "listed twice"),
        (lambda m: m["algorithm"].update(name="other"), "one algorithm"),
        (lambda m: m["scenarios"][0].update(dimension=5), "mixed dimensions"),
        (lambda m: m["scenarios"][0].update(dimension=7), "mixed dimensions"),
    ],
)
def test_malformed_json(ioh_experiment: tuple[Path, list[SeenRun]], change, words: str) -> None:
    folder, _ = ioh_experiment
    with pytest.raises(MalformedFile, match=words) as info:
        read_upload("iohprofiler", "x.zip", edited_json(folder, change), limits=LIMITS)
    assert info.value.file.endswith(".json") or info.value.file.endswith(".dat")


def test_json_is_errors_only(ioh_experiment: tuple[Path, list[SeenRun]]) -> None:
    folder, _ = ioh_experiment
    with pytest.raises(InvalidInput) as info:
        read_upload("iohprofiler", "x.zip", zip_folder(folder), limits=LIMITS, values_are="f")
    assert info.value.field == "values_are"
    with pytest.raises(UploadTooLarge):
        read_upload("iohprofiler", "x.zip", zip_folder(folder), limits=UploadLimits(max_rows=30))


JSON_DAT = "data_f1_Sphere/IOHprofiler_f1_DIM2.dat"


@pytest.mark.parametrize(
    ("line", "new", "words"),
    [
        (1, None, "missing header"),
        (1, "evaluations best", "'raw_y' column"),
        (3, "7", "truncated"),
        (3, "x 1.0", "not a number"),
        (3, "7 nan", "not finite"),
    ],
)
def test_malformed_dat(tmp_path: Path, line: int, new: str | None, words: str) -> None:
    folder, _ = run_ioh(tmp_path, functions=(1,), instances=(1,), dims=(2,), runs_per_instance=1)
    files = {
        p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()
    }
    lines = files[JSON_DAT].split("\n")
    if new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    files[JSON_DAT] = "\n".join(lines)
    with pytest.raises(MalformedFile, match=words) as info:
        read_upload("iohprofiler", "x.zip", zipped(files), limits=LIMITS)
    assert (info.value.file, info.value.line) == (JSON_DAT, line)


LEGACY_HEADER = (
    '"function evaluation" "current f(x)" "best-so-far f(x)" "current af(x)+b" "best af(x)+b"\n'
)


def legacy(af: bool = True, info: str | None = None) -> dict[str, str]:
    """IOHexperimenter's pre-0.3 layout (its C++ logger test's form), f1 i1/i2 d2."""
    info = info or (
        "suite = 'BBOB', funcId = 1, funcName = 'Sphere', DIM = 2, maximization = 'F', "
        "algId = 'old-ea', algInfo = 'x'\n%\n"
        "data_f1_Sphere/IOHprofiler_f1_DIM2.dat, 1:12|0.25, 2:10|1.5\n"
    )
    f1, f2 = 79.48, 394.48
    rows = [
        (LEGACY_HEADER, None),
        ((1, 2.0, 2.0, f1 + 2.0, f1 + 2.0), None),
        ((5, 0.25, 0.25, f1 + 0.25, f1 + 0.25), None),
        ((12, 3.0, 0.25, f1 + 3.0, f1 + 0.25), None),
        (LEGACY_HEADER, None),
        ((1, 1.5, 1.5, f2 + 1.5, f2 + 1.5), None),
    ]
    lines = []
    for row, _ in rows:
        if isinstance(row, str):
            lines.append(row if af else '"function evaluation" "current f(x)" "best-so-far f(x)"\n')
        else:
            shown = row if af else row[:3]
            lines.append(
                " ".join(f"{v:.6f}" if isinstance(v, float) else str(v) for v in shown) + "\n"
            )
    return {
        "IOHprofiler_f1_DIM2.info": info,
        "data_f1_Sphere/IOHprofiler_f1_DIM2.dat": "".join(lines),
    }


def test_legacy_with_af_column_settles_errors() -> None:
    result = read_upload("iohprofiler", "old.zip", zipped(legacy()), limits=LIMITS)
    assert result.values_are == "error"
    one, two = result.runs
    assert (one.function_id, one.value, one.budget) == ("bbob/f1/i1/d2", 0.25, 12)
    assert one.trajectory.evaluations == (1, 5, 12)
    assert (two.function_id, two.value, two.budget) == ("bbob/f1/i2/d2", 1.5, 10)
    assert two.trajectory.evaluations == (1, 10)
    assert result.algorithm == "old-ea"


def test_legacy_without_af_column_needs_values_are() -> None:
    with pytest.raises(InvalidInput) as info:
        read_upload("iohprofiler", "old.zip", zipped(legacy(af=False)), limits=LIMITS)
    assert info.value.field == "values_are"
    result = read_upload(
        "iohprofiler", "old.zip", zipped(legacy(af=False)), limits=LIMITS, values_are="error"
    )
    assert result.values_are == "error"
    # declared f, the values (2.0, 0.25) lie below f* = 79.48: refused where they are read
    with pytest.raises(MalformedFile, match=r"below f\* = 79.48") as info:
        read_upload(
            "iohprofiler", "old.zip", zipped(legacy(af=False)), limits=LIMITS, values_are="f"
        )
    assert (info.value.file, info.value.line) == ("data_f1_Sphere/IOHprofiler_f1_DIM2.dat", 1)
    with pytest.raises(InvalidInput):
        read_upload("iohprofiler", "old.zip", zipped(legacy()), limits=LIMITS, values_are="f")
    files = legacy(af=False)
    dat = "data_f1_Sphere/IOHprofiler_f1_DIM2.dat"
    files[dat] = files[dat].replace("0.250000", "-0.250000")
    negative = zipped(files)
    with pytest.raises(MalformedFile, match="negative") as info:
        read_upload("iohprofiler", "old.zip", negative, limits=LIMITS, values_are="error")
    assert info.value.line == 1


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("maximization = 'F'", "maximization = 'T'", "maximization"),
        ("suite = 'BBOB'", "suite = 'PBO'", "not one of ioh's BBOB"),
        ("funcName = 'Sphere'", "funcName = 'OneMax'", "not one of ioh's BBOB"),
        (", 2:10|1.5", "", "lists 1 runs"),
        ("DIM = 2", "DIM = 3", "mixed dimensions"),
        ("1:12|", "1:11|", "records go to 12"),
    ],
)
def test_legacy_malformed_info(old: str, new: str, words: str) -> None:
    files = legacy()
    name = "IOHprofiler_f1_DIM2.info"
    files[name] = files[name].replace(old, new)
    with pytest.raises(MalformedFile, match=words) as info:
        read_upload("iohprofiler", "old.zip", zipped(files), limits=LIMITS)
    assert info.value.file == name
    assert info.value.line in (1, 3)


def test_dat_cut_without_a_final_line_end(tmp_path: Path) -> None:
    """ioh ends every line it writes: a last line without a line end is a cut file."""
    folder, _ = run_ioh(tmp_path, functions=(1,), instances=(1,), dims=(2,), runs_per_instance=1)
    files = {
        p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*") if p.is_file()
    }
    assert files[JSON_DAT].endswith("\n")
    lines = files[JSON_DAT].splitlines()
    files[JSON_DAT] = "\n".join(lines)[:-3]  # "12 0.38" for "12 0.3876543210"
    with pytest.raises(MalformedFile, match="no line end") as info:
        read_upload("iohprofiler", "x.zip", zipped(files), limits=LIMITS)
    assert (info.value.file, info.value.line) == (JSON_DAT, len(lines))
