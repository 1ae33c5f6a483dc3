"""COCO importer: real cocoex output cut while being written is refused, naming file and line.

A cut last record would store a wrong final value (``+1.83`` for ``+1.832715108e+02``), which
then tops the leaderboard; every way of cutting the files the loggers write is refused.
"""

from __future__ import annotations

import io
import re
import zipfile

import pytest

from app.domain.importers import UploadLimits, read_upload
from app.domain.results import MalformedFile
from tests.unit.importers.loggers import run_cocoex

LIMITS = UploadLimits()
INFO = "bbobexp_f1.info"
DAT = "data_f1/bbobexp_f1_DIM{}.dat"
TDAT = "data_f1/bbobexp_f1_DIM{}.tdat"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """cocoex.Observer output of random search on f1, instances 1-2, d = 2 and 10."""
    folder, _ = run_cocoex(
        tmp_path_factory.mktemp("cut"), functions="1", instances="1-2", dimensions="2,10"
    )
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def last_line(data: bytes) -> tuple[int, str]:
    lines = data.decode().splitlines()
    return len(lines), lines[-1]


def with_last_line(data: bytes, new: str) -> bytes:
    head = data.decode().splitlines()[:-1]
    return ("\n".join(head) + "\n" + new).encode()


def refused(files: dict[str, bytes]) -> MalformedFile:
    with pytest.raises(MalformedFile) as info:
        read_upload("coco", "cut.zip", zipped(files), limits=LIMITS)
    return info.value


def test_intact_output_is_read(written: dict[str, bytes]) -> None:
    result = read_upload("coco", "ok.zip", zipped(written), limits=LIMITS)
    assert len(result.runs) == 4
    for dim, columns in ((2, 7), (10, 5)):  # cocoex writes the x columns in small d only
        _, text = last_line(written[DAT.format(dim)])
        assert len(text.split()) == columns


@pytest.mark.parametrize("dim", [2, 10])
@pytest.mark.parametrize("keep", ["exponent", "mid-number", "columns"])
def test_last_record_cut_without_line_end(written: dict[str, bytes], dim: int, keep: str) -> None:
    dat = DAT.format(dim)
    number, text = last_line(written[dat])
    e, g, best, *rest = text.split()
    cut = {
        "exponent": f"{e} {g} {best[:-1]}",  # +1.832715108e+0 for +1.832715108e+02
        "mid-number": f"{e} {g} {best[:5]}",  # +1.83
        "columns": f"{e} {g} {best} {rest[0]}",
    }[keep]
    files = written | {dat: with_last_line(written[dat], cut)}
    error = refused(files)
    assert (error.file, error.line) == (dat, number)
    assert str(error).startswith(f"{dat}, line {number}: the last line has no line end")
    # the same cut with a line end added afterwards: the record is short of columns
    files[dat] += b"\n"
    error = refused(files)
    assert (error.file, error.line) == (dat, number)
    assert "truncated row" in str(error)
    assert f"implies {5 if dim == 10 else '5 or 7'}" in str(error)


def test_dat_and_tdat_both_cut(written: dict[str, bytes]) -> None:
    files = dict(written)
    for name in (DAT.format(2), TDAT.format(2)):
        _, text = last_line(files[name])
        e, g, best, *_ = text.split()
        files[name] = with_last_line(files[name], f"{e} {g} {best[:5]}")
    error = refused(files)
    assert error.file == DAT.format(2)
    assert "no line end" in str(error)


def test_final_record_disagreeing_with_the_info_item(written: dict[str, bytes]) -> None:
    """Both data files end at the same, complete but wrong value: the .info item refutes it."""
    files = dict(written)
    for name in (DAT.format(2), TDAT.format(2)):
        _, text = last_line(files[name])
        e, g, best, *rest = text.split()
        smaller = f"{float(best) / 100:+.9e}"
        files[name] = with_last_line(files[name], " ".join([e, g, smaller, *rest]) + "\n")
    error = refused(files)
    assert (error.file, error.line) == (INFO, 3)
    assert "final error" in str(error)
    assert DAT.format(2) in str(error)
    assert TDAT.format(2) in str(error)


def test_info_item_cut(written: dict[str, bytes]) -> None:
    info = written[INFO].decode()
    assert not info.endswith("\n")  # cocoex leaves the .info's last line open
    item = info.rsplit(", ", 1)[1]  # e.g. "2:400|9.8e+00"
    files = written | {INFO: info[: -len(item)].encode() + item[: item.index("e") + 1].encode()}
    error = refused(files)
    assert (error.file, error.line) == (INFO, 6)
    assert "not a number" in str(error)


def test_info_value_with_its_exponent_cut(written: dict[str, bytes]) -> None:
    """An item's value cut to ``1.4e+0`` (for ``1.4e+01``) disagrees with the records."""
    info = written[INFO].decode()
    items = re.findall(r"\|(\d\.\de[+-](?!00)\d\d)", info)
    assert items  # random search on f1 ends far from the optimum
    files = written | {INFO: info.replace(f"|{items[0]}", f"|{items[0][:-1]}", 1).encode()}
    error = refused(files)
    assert error.file == INFO
    assert "final error" in str(error)


def test_dat_and_tdat_ending_differently(written: dict[str, bytes]) -> None:
    tdat = TDAT.format(10)
    number, text = last_line(written[tdat])
    e, g, best, *rest = text.split()
    larger = f"{float(best) * 3:+.9e}"  # the .dat's value stays the minimum: the .info agrees
    files = written | {tdat: with_last_line(written[tdat], " ".join([e, g, larger, *rest]) + "\n")}
    error = refused(files)
    assert (error.file, error.line) == (tdat, number)
    assert DAT.format(10) in str(error)
    assert "same evaluation" in str(error)
