"""Importers: the field's result formats read into :class:`app.domain.results.ImportedResults`.

One module per format (``coco``, ``iohprofiler``, ``nevergrad``, ``longcsv``), one shared
result model (:mod:`app.domain.results`), one safe reader of uploaded archives (``archive``).
:func:`read_upload` is the single entry point the archive service calls.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.domain.errors import InvalidInput

if TYPE_CHECKING:
    from app.domain.results import ImportedResults, ValuesAre

__all__ = ["UploadLimits", "UploadedFile", "read_upload"]


@dataclass(frozen=True)
class UploadedFile:
    """One file of an upload: its path inside the archive (or the upload's own name) and bytes."""

    path: str
    data: bytes


@dataclass(frozen=True)
class UploadLimits:
    """Bounds on what one upload may cost; exceeding one is refused before more is read.

    Attributes
    ----------
    max_upload_bytes : int
        Size of the uploaded file itself.
    max_decompressed_bytes : int
        Total size of the files inside a ``.zip``/``.tgz``/``.tar.gz`` (a zip bomb stops here).
    max_files : int
        Members of an archive.
    max_rows : int
        Runs plus trajectory points over all files.
    """

    max_upload_bytes: int = 64 * 1024 * 1024
    max_decompressed_bytes: int = 256 * 1024 * 1024
    max_files: int = 10_000
    max_rows: int = 2_000_000


_READERS = {
    "coco": "coco",
    "iohprofiler": "iohprofiler",
    "nevergrad": "nevergrad",
    "csv": "longcsv",
}
"""Upload format -> module of this package whose ``read(files, *, limits, values_are)`` reads it."""

_NAMES = {"coco": "COCO", "iohprofiler": "IOHprofiler", "nevergrad": "nevergrad", "csv": "long CSV"}
"""Format -> its name in a refusal's hint."""

Reader = Callable[..., "ImportedResults"]


def read_upload(
    fmt: str,
    filename: str,
    data: bytes,
    *,
    limits: UploadLimits,
    values_are: ValuesAre | None = None,
) -> ImportedResults:
    """Read one uploaded file (an archive or a single file) in a standard format.

    Parameters
    ----------
    fmt : {"coco", "iohprofiler", "nevergrad", "csv"}
        The upload's format (``multipart/form-data`` field ``format``).
    filename : str
        The upload's own name; a single file keeps it as its path.
    data : bytes
        The uploaded bytes. Archives (zip, tar, tar.gz/tgz, also bz2/xz) are recognised by
        their magic bytes and unpacked in memory (:mod:`app.domain.importers.archive`).
    limits : UploadLimits
        Bounds on size, members, decompressed bytes and rows, checked while reading.
    values_are : {"f", "error"}, optional
        The user's declaration, for formats that do not say (``csv``, ``nevergrad``, legacy
        IOHprofiler). A format that knows (COCO and IOHprofiler JSON: errors ``f - f*``)
        refuses a contradicting declaration.

    Returns
    -------
    ImportedResults
        Runs ordered by ``(function_id, run)``, run ids 0-based per function in file order.

    Raises
    ------
    InvalidInput
        ``field="format"`` for an unknown format, ``field="values_are"`` for a declaration the
        format contradicts or needs.
    MalformedFile
        A file cannot be read; the message names the file and the 1-based line.
    UploadTooLarge
        A limit is exceeded (HTTP 413).
    """
    module_name = _READERS.get(fmt)
    if module_name is None:
        raise InvalidInput(
            f"unknown format {fmt!r}; formats: {', '.join(_READERS)}", field="format"
        )
    from app.domain.importers.archive import unpack
    from app.domain.importers.common import guess_format
    from app.domain.results import MalformedFile

    if not data:
        raise MalformedFile("is empty (0 bytes): nothing was uploaded", file=filename)
    files = unpack(filename, data, limits=limits)
    module = importlib.import_module(f"{__name__}.{module_name}")
    reader: Reader = module.read
    try:
        return reader(files, limits=limits, values_are=values_are)
    except InvalidInput as exc:
        other = guess_format(files)
        if other is None or other == fmt:
            raise
        hint = f"; these files look like {_NAMES[other]} output: send format={other}"
        if isinstance(exc, MalformedFile):
            raise MalformedFile(
                exc.message + hint, file=exc.file, line=exc.line, field=exc.field or "file"
            ) from exc
        raise InvalidInput(f"{exc}{hint}", field=exc.field) from exc
