"""Importers: the field's result formats read into :class:`app.domain.results.ImportedResults`.

One module per format (``coco``, ``iohprofiler``, ``nevergrad``, ``longcsv``), one shared
result model (:mod:`app.domain.results`), one safe reader of uploaded archives (``archive``).
:func:`read_upload` is the single entry point the archive service calls.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["UploadLimits", "UploadedFile"]


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
