"""COCO importer: cocoex.Observer output, legacy bbobexp files, and malformed files."""

from __future__ import annotations

import contextlib
import io
import re
import zipfile
from pathlib import Path

import cocoex
import numpy as np
import pytest

from app.domain.errors import InvalidInput, UploadTooLarge
from app.domain.functions import get_function
from app.domain.importers import UploadLimits, read_upload
from app.domain.results import ImportedResults, MalformedFile
from tests.unit.importers.loggers import SeenRun, pair_runs, run_cocoex, tgz_folder, zip_folder

LIMITS = UploadLimits()


def check_against_optimizer(result: ImportedResults, seen: list[SeenRun]) -> None:
    """Every run's value, budget and trajectory equal what the optimizer saw (to print digits)."""
    assert result.format == "coco"
    assert result.values_are == "error"
    for run, want in pair_runs(result, seen):
        # the .dat prints f - Fopt with 10 significant digits
        np.testing.assert_allclose(run.value, want.best_after(run.budget), rtol=1e-9, atol=1e-14)
        for e, b in zip(run.trajectory.evaluations, run.trajectory.best, strict=True):
            np.testing.assert_allclose(b, want.best_after(e), rtol=1e-9, atol=1e-14)
    keys = [(r.function_id, r.run) for r in result.runs]
    assert keys == sorted(keys)


@pytest.mark.parametrize("pack", [zip_folder, tgz_folder])
def test_cocoex_observer_output(cocoex_experiment: tuple[Path, list[SeenRun]], pack) -> None:
    folder, seen = cocoex_experiment
    result = read_upload("coco", "results.bin", pack(folder), limits=LIMITS)
    check_against_optimizer(result, seen)
    assert result.algorithm == "seeded-rs"
    assert {r.function_id for r in result.runs} == {s.function_id for s in seen}


@pytest.mark.parametrize(
    ("suite", "observer", "options"),
    [
        ("bbob-biobj", "bbob-biobj", "dimensions:2 function_indices:1 instance_indices:1"),
        ("bbob-noisy", "bbob", "dimensions:2 function_indices:1 instance_indices:1"),
        ("bbob-largescale", "bbob", "dimensions:20 function_indices:1 instance_indices:1"),
        ("bbob-mixint", "bbob", "dimensions:5 function_indices:1 instance_indices:1"),
    ],
)
def test_other_coco_suites_are_refused(
    tmp_path: Path, suite: str, observer: str, options: str
) -> None:
    with contextlib.chdir(tmp_path):
        problems = cocoex.Suite(suite, "", options)
        logger = cocoex.Observer(observer, "result_folder:other algorithm_name:x")
        for problem in problems:
            problem.observe_with(logger)
            for _ in range(5):
                problem(np.zeros(problem.dimension))
            problem.free()
    with pytest.raises(MalformedFile, match=f"suite '{suite}' is not hosted") as info:
        read_upload("coco", "o.zip", zip_folder(tmp_path / "exdata" / "other"), limits=LIMITS)
    assert info.value.line == 1
    assert info.value.file.endswith(".info")


def test_nelder_mead_reaches_small_errors(tmp_path: Path) -> None:
    folder, seen = run_cocoex(
        tmp_path,
        functions="1",
        instances="1,2",
        dimensions="2",
        budget_per_dim=150,
        nelder_mead=True,
    )
    result = read_upload("coco", "nm.zip", zip_folder(folder), limits=LIMITS)
    check_against_optimizer(result, seen)
    assert min(r.value for r in result.runs) < 1e-6


def test_repeated_instances_get_run_ids_in_file_order(tmp_path: Path) -> None:
    folder, seen = run_cocoex(tmp_path, functions="2", instances="1", dimensions="3")
    second, seen2 = run_cocoex(
        tmp_path / "again", functions="2", instances="1", dimensions="3", seed=9
    )
    info = folder / "bbobexp_f2.info"
    # append the second experiment's run as a second entry pointing at a copied data file
    data = folder / "data_f2"
    for ext in (".dat", ".tdat"):
        (data / f"bbobexp_f2_DIM3_b{ext}").write_bytes(
            (second / "data_f2" / f"bbobexp_f2_DIM3{ext}").read_bytes()
        )
    extra = (second / "bbobexp_f2.info").read_text().replace("DIM3.dat", "DIM3_b.dat")
    info.write_text(info.read_text().rstrip("\n") + "\n" + extra)
    result = read_upload("coco", "r.zip", zip_folder(folder), limits=LIMITS)
    assert [r.run for r in result.runs] == [0, 1]
    check_against_optimizer(result, seen + seen2)


def to_legacy(folder: Path, out: Path) -> None:
    """Rewrite a cocoex folder in the pre-cocoex bbobexp layout, .info with Windows separators."""
    out.mkdir()
    for info in folder.glob("*.info"):
        lines = info.read_text().splitlines()
        legacy = []
        for line in lines:
            if line.startswith("suite"):
                keys = dict(re.findall(r"(\w+) = ('[^']*'|[^,]+)", line))
                line = (
                    f"funcId = {keys['funcId']}, DIM = {keys['DIM']}, Precision = "
                    f"{keys['Precision']}, algId = {keys['algId']}"
                )
            elif line.startswith("data_"):
                line = line.replace("/", "\\")
            legacy.append(line)
        (out / info.name).write_text("\r\n".join(legacy) + "\r\n")
    for dat in list(folder.rglob("*.dat")) + list(folder.rglob("*.tdat")):
        target = out / dat.relative_to(folder)
        target.parent.mkdir(exist_ok=True)
        rows = []
        for line in dat.read_text().splitlines():
            if line.startswith("%"):
                fopt = re.search(r"Fopt \(([^)]+)\)", line)[1]
                rows.append(
                    f"% function evaluation | noise-free fitness - Fopt ({fopt}) | best noise-free "
                    "fitness - Fopt | measured fitness | best measured fitness | x1 | x2..."
                )
            else:
                e, _g, best, measured, best_measured, *x = line.split()
                rows.append(" ".join([e, best, best, measured, best_measured, *x]))
        target.write_text("\n".join(rows) + "\n")


def test_cocoex_run_converted_to_legacy_layout(
    cocoex_experiment: tuple[Path, list[SeenRun]], tmp_path: Path
) -> None:
    folder, seen = cocoex_experiment
    to_legacy(folder, tmp_path / "legacy")
    result = read_upload("coco", "legacy.zip", zip_folder(tmp_path / "legacy"), limits=LIMITS)
    check_against_optimizer(result, seen)


FOPT_F1_I1 = "7.948000000000e+01"


def legacy_files(dat: str | None = None, info: str | None = None, tdat: str | None = "same"):
    """A hand-written legacy bbobexp experiment: f1, DIM 2, instances 1 and 2."""
    info = info or (
        "funcId = 1, DIM = 2, Precision = 1.000e-08, algId = 'hand'\n"
        "% a comment\n"
        "data_f1\\bbobexp_f1_DIM2.dat, 1:30|1.5e-01, 2:25|3.0e+00\n"
    )
    head = (
        "% function evaluation | noise-free fitness - Fopt ({}) | best noise-free fitness - "
        "Fopt | measured fitness | best measured fitness | x1 | x2\n"
    )
    dat = dat or (
        head.format(FOPT_F1_I1)
        + "1 +2.000000000e+00 +2.000000000e+00 +8.148000000e+01 +8.148000000e+01 0.1 0.2\n"
        + "7 +5.000000000e-01 +5.000000000e-01 +7.998000000e+01 +7.998000000e+01 0.1 0.2\n"
        + "30 +9.000000000e-01 +1.500000000e-01 +8.038000000e+01 +7.963000000e+01 0.1 0.2\n"
        + head.format("3.944800000000e+02")
        + "1 +3.000000000e+00 +3.000000000e+00 +3.974800000e+02 +3.974800000e+02 0.1 0.2\n"
        + "25 +4.000000000e+00 +3.000000000e+00 +3.984800000e+02 +3.974800000e+02 0.1 0.2\n"
    )
    files = {"exp/bbobexp_f1.info": info, "exp/data_f1/bbobexp_f1_DIM2.dat": dat}
    if tdat == "same":
        files["exp/data_f1/bbobexp_f1_DIM2.tdat"] = (
            head.format(FOPT_F1_I1)
            + "10 +6.000000000e-01 +4.000000000e-01 +7.988000000e+01 +7.988000000e+01 0.1 0.2\n"
            + "30 +9.000000000e-01 +1.500000000e-01 +8.038000000e+01 +7.963000000e+01 0.1 0.2\n"
            + head.format("3.944800000000e+02")
            + "25 +4.000000000e+00 +3.000000000e+00 +3.984800000e+02 +3.974800000e+02 0.1 0.2\n"
        )
    return files


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_hand_written_legacy_bbobexp() -> None:
    result = read_upload("coco", "hand.zip", zipped(legacy_files()), limits=LIMITS)
    runs = {r.function_id: r for r in result.runs}
    one, two = runs["bbob/f1/i1/d2"], runs["bbob/f1/i2/d2"]
    assert (one.value, one.budget) == (0.15, 30)
    assert one.trajectory.evaluations == (1, 7, 10, 30)  # .dat records, plus the .tdat's at 10
    assert one.trajectory.best == (2.0, 0.5, 0.4, 0.15)
    assert (two.value, two.budget) == (3.0, 25)
    assert result.algorithm == "hand"
    assert result.notes == ()
    assert get_function("bbob/f1/i2/d2").f_opt == pytest.approx(394.48)


def test_missing_tdat_is_tolerated_with_a_note() -> None:
    result = read_upload("coco", "h.zip", zipped(legacy_files(tdat=None)), limits=LIMITS)
    assert [n.code for n in result.notes] == ["coco-no-tdat"]
    assert len(result.runs) == 2


def test_single_info_without_comment_line_and_extra_files() -> None:
    files = legacy_files()
    files["exp/bbobexp_f1.info"] = files["exp/bbobexp_f1.info"].replace("% a comment\n", "")
    files["exp/README.txt"] = "not written through the standard observer"
    result = read_upload("coco", "h.zip", zipped(files), limits=LIMITS)
    assert len(result.runs) == 2


def test_fopt_equal_within_printed_digits() -> None:
    # 7.9e+01 is 79 to one unit: consistent with 79.48 at the printed precision
    files = edit(DAT, "(7.948000000000e+01)", "(7.9e+01)")
    assert len(read_upload("coco", "h.zip", zipped(files), limits=LIMITS).runs) == 2


def test_moved_data_files_found_by_a_unique_name() -> None:
    files = {
        (name.replace("exp/data_f1/", "exp/moved/") if name != INFO else name): text
        for name, text in legacy_files().items()
    }
    assert len(read_upload("coco", "h.zip", zipped(files), limits=LIMITS).runs) == 2
    files["other/bbobexp_f1_DIM2.dat"] = files["exp/moved/bbobexp_f1_DIM2.dat"]
    error = refused(files)  # two candidates: ambiguous
    assert (error.file, error.line) == (INFO, 3)
    assert "not in the upload" in str(error)


def test_evals_mismatch_with_info_gives_a_note() -> None:
    files = legacy_files()
    files["exp/bbobexp_f1.info"] = files["exp/bbobexp_f1.info"].replace("1:30|", "1:31|")
    result = read_upload("coco", "h.zip", zipped(files), limits=LIMITS)
    assert [n.code for n in result.notes] == ["coco-evals-mismatch"]


def refused(files: dict[str, str]) -> MalformedFile:
    with pytest.raises(MalformedFile) as info:
        read_upload("coco", "bad.zip", zipped(files), limits=LIMITS)
    return info.value


DAT = "exp/data_f1/bbobexp_f1_DIM2.dat"
TRUNCATED = "7 +5.000000000e-01 +5.000000000e-01 +7.998000000e+01 +7.998000000e+01 0.1 0.2"
INFO = "exp/bbobexp_f1.info"


def edit(path: str, old: str, new: str, files: dict[str, str] | None = None) -> dict[str, str]:
    files = files or legacy_files()
    assert old in files[path]
    files[path] = files[path].replace(old, new, 1)
    return files


@pytest.mark.parametrize(
    ("files", "file", "line", "words"),
    [
        (edit(DAT, TRUNCATED, "7 +5.0"), DAT, 3, "truncated"),
        (edit(DAT, "+5.000000000e-01 +5.000000000e-01", "+5.0e-01 abc"), DAT, 3, "not a number"),
        (
            edit(DAT, "% function evaluation", "1 2 3\n% function evaluation"),
            DAT,
            1,
            "missing header",
        ),
        (edit(DAT, "(7.948000000000e+01)", "(7.8e+01)"), DAT, 1, "disagrees with f*"),
        (edit(DAT, "(7.948000000000e+01)", "(79.49)"), DAT, 1, "disagrees with f*"),
        (edit(DAT, "(7.948000000000e+01)", "(unknown)"), DAT, 1, "Fopt"),
        (
            edit(DAT, "| noise-free fitness - Fopt (7.948000000000e+01)", "| nothing"),
            DAT,
            1,
            "Fopt",
        ),
        (edit(DAT, "30 +9.000000000e-01 +1.5", "30 +9.000000000e-01 -1.5"), DAT, 4, "negative"),
        (edit(INFO, "funcId = 1,", "funcId = 25,"), INFO, 1, "not hosted"),
        (edit(INFO, "funcId = 1,", "funcId = 101,"), INFO, 1, "bbob-noisy"),
        (edit(INFO, "funcId = 1,", "suite = 'bbob-boxed', funcId = 1,"), INFO, 1, "bbob-boxed"),
        (edit(INFO, "DIM = 2,", "DIM = 5,"), INFO, 3, "named for dimension 2"),
        (edit(INFO, "DIM = 2,", "DIM = 7,"), INFO, 3, "named for dimension 2"),
        (edit(INFO, ", 2:25|3.0e+00", ""), INFO, 3, "lists 1 runs"),
        (edit(INFO, "1:30|1.5e-01", "x:30|1.5e-01"), INFO, 3, "not a number"),
        (edit(INFO, "funcId = 1, DIM = 2,", "DIM = 2,"), INFO, 1, "funcId and DIM"),
        (edit(INFO, "bbobexp_f1_DIM2.dat", "elsewhere_DIM2.dat"), INFO, 3, "not in the upload"),
        (edit(INFO, "algId = 'hand'", "algId = 'hand', garbage"), INFO, 1, "key = value"),
    ],
)
def test_malformed_files_name_file_and_line(files, file, line, words) -> None:
    error = refused(files)
    assert (error.file, error.line) == (file, line)
    assert words in str(error)
    assert str(error).startswith(f"{file}, line {line}: ")
    assert error.field == "file"


def test_dimension_not_hosted() -> None:
    files = legacy_files()
    for name in list(files):
        files[name.replace("DIM2", "DIM7")] = files.pop(name).replace("DIM2", "DIM7")
    files[INFO] = files[INFO].replace("DIM = 2,", "DIM = 7,")
    for name in list(files)[1:]:  # records without the x columns, as cocoex writes from d = 6
        files[name] = files[name].replace(" 0.1 0.2\n", "\n")
    error = refused(files)
    assert error.file == "exp/data_f1/bbobexp_f1_DIM7.dat"
    assert "not available in dimension 7" in str(error)


def test_duplicate_runs_listed_twice() -> None:
    files = legacy_files()
    entry = files[INFO]
    files[INFO] = entry + entry
    error = refused(files)
    assert (error.file, error.line) == (INFO, 6)
    assert "indexed again" in str(error)
    assert "duplicate runs" in str(error)


def test_later_batch_appended_to_the_same_data_file() -> None:
    # the legacy loggers append a later batch's runs to the same file under a new entry
    files = legacy_files()
    header = "funcId = 1, DIM = 2, Precision = 1.000e-08, algId = 'hand'\n% batch {}\n"
    files[INFO] = (
        header.format(1)
        + "data_f1\\bbobexp_f1_DIM2.dat, 1:30|1.5e-01\n"
        + header.format(2)
        + "data_f1/bbobexp_f1_DIM2.dat, 2:25|3.0e+00\n"
    )
    result = read_upload("coco", "h.zip", zipped(files), limits=LIMITS)
    assert [(r.function_id, r.value, r.budget) for r in result.runs] == [
        ("bbob/f1/i1/d2", 0.15, 30),
        ("bbob/f1/i2/d2", 3.0, 25),
    ]


def test_two_algorithms_are_refused() -> None:
    files = legacy_files()
    files["exp/bbobexp_f1_other.info"] = (
        files[INFO]
        .replace("'hand'", "'other'")
        .replace("bbobexp_f1_DIM2.dat", "bbobexp_f1_DIM2_o.dat")
    )
    files["exp/data_f1/bbobexp_f1_DIM2_o.dat"] = files[DAT]
    error = refused(files)
    assert error.file == "exp/bbobexp_f1_other.info"
    assert "one algorithm" in str(error)


def test_no_info_file() -> None:
    error = refused({DAT: legacy_files()[DAT]})
    assert "no COCO .info" in str(error)


def test_values_are_f_contradicts_coco() -> None:
    with pytest.raises(InvalidInput) as info:
        read_upload("coco", "h.zip", zipped(legacy_files()), limits=LIMITS, values_are="f")
    assert info.value.field == "values_are"
    assert not isinstance(info.value, MalformedFile)
    read_upload("coco", "h.zip", zipped(legacy_files()), limits=LIMITS, values_are="error")


def test_max_rows_stops_reading(cocoex_experiment: tuple[Path, list[SeenRun]]) -> None:
    folder, _ = cocoex_experiment
    with pytest.raises(UploadTooLarge) as info:
        read_upload("coco", "r.zip", zip_folder(folder), limits=UploadLimits(max_rows=50))
    assert "more than 50 rows" in str(info.value)
