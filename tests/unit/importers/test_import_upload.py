"""read_upload: the single entry point (format dispatch, archive detection, declarations)."""

from __future__ import annotations

import gzip
import io
import tarfile

import pytest

from app.domain.errors import InvalidInput, UploadTooLarge
from app.domain.importers import _READERS, UploadLimits, read_upload
from app.domain.results import FORMATS, MalformedFile


def test_unknown_format() -> None:
    with pytest.raises(InvalidInput, match="unknown format 'hdf5'") as info:
        read_upload("hdf5", "x", b"", limits=UploadLimits())
    assert info.value.field == "format"


def test_every_declared_format_has_a_reader() -> None:
    assert set(_READERS) == set(FORMATS)


def test_single_file_upload_without_index() -> None:
    with pytest.raises(MalformedFile) as info:
        read_upload("coco", "bbobexp_f1_DIM2.dat", b"% Fopt (1)\n1 0 1\n", limits=UploadLimits())
    assert info.value.file == "bbobexp_f1_DIM2.dat"


def test_many_rows_are_refused_before_they_are_parsed() -> None:
    # 10^6 records in a 30 kB gzip: refused by the row limit, never turned into runs
    rows = b"% f evaluations | g | best noise-free fitness - Fopt (7.948000000000e+01) +\n"
    rows += b"1 0 +1.0e+00\n" * 1_000_000
    data = gzip.compress(rows)
    assert len(data) < 100_000
    info = b"funcId = 1, DIM = 2, algId = 'a'\n%\nbbobexp_f1_DIM2.dat, 1:1|1.0\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in (("bbobexp_f1.info", info), ("bbobexp_f1_DIM2.dat", rows)):
            member = tarfile.TarInfo(name)
            member.size = len(content)
            archive.addfile(member, io.BytesIO(content))
    with pytest.raises(UploadTooLarge, match="more than 100000 rows"):
        read_upload("coco", "big.tgz", buffer.getvalue(), limits=UploadLimits(max_rows=100_000))


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_file_is_called_empty(fmt: str) -> None:
    with pytest.raises(MalformedFile) as info:
        read_upload(fmt, "results.zip", b"", limits=UploadLimits(), values_are="f")
    assert str(info.value) == "results.zip: is empty (0 bytes): nothing was uploaded"


def test_the_wrong_format_gets_a_hint_naming_the_right_one(
    cocoex_experiment, ioh_experiment
) -> None:
    from tests.unit.importers.loggers import zip_folder

    coco, ioh = zip_folder(cocoex_experiment[0]), zip_folder(ioh_experiment[0])
    nevergrad = b"loss,optimizer_name,budget,function_id\n0.5,NGOpt,200,classic/sphere/d2\n"
    longcsv = b"function_id,run,value,budget\nclassic/sphere/d2,0,0.5,200\n"
    for data, sent, right in [
        (coco, "iohprofiler", "coco"),
        (coco, "nevergrad", "coco"),
        (ioh, "coco", "iohprofiler"),
        (ioh, "csv", "iohprofiler"),
        (nevergrad, "csv", "nevergrad"),
        (longcsv, "nevergrad", "csv"),
    ]:
        with pytest.raises(InvalidInput) as info:
            read_upload(sent, "up.zip", data, limits=UploadLimits(), values_are="error")
        assert str(info.value).endswith(f"output: send format={right}"), (sent, str(info.value))
        read_upload(right, "up.zip", data, limits=UploadLimits(), values_are="error")  # reads
