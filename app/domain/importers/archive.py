"""Safe, in-memory reading of uploaded ``.zip``, ``.tar``, ``.tgz``/``.tar.gz`` archives.

Nothing is written to disk. The kind is told by magic bytes, not by the name. Every limit is
checked while reading, never trusted from headers:

- the upload itself: ``max_upload_bytes``;
- members: ``max_files`` (directories count);
- decompressed bytes: a running counter over what is actually read (tar headers included, since
  a gzip stream is read through a bounded reader), so a zip bomb stops at
  ``max_decompressed_bytes`` with :class:`UploadTooLarge` (HTTP 413).

Refused members (:class:`MalformedFile` naming the member, HTTP 422): absolute paths (``/x``,
``C:\\x``), ``..`` components, symbolic and hard links, devices and FIFOs, encrypted zip
members, two members with one path. Windows separators are normalised to ``/``; directories and
macOS resource forks (``__MACOSX/``) are skipped.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from typing import IO, Protocol

from app.domain.errors import UploadTooLarge
from app.domain.importers import UploadedFile, UploadLimits
from app.domain.results import MalformedFile

__all__ = ["is_archive", "unpack"]

_CHUNK = 1 << 16
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_ZIP_ENTRY = b"PK\x01\x02"
_GZIP_MAGIC = b"\x1f\x8b"
_BZ2_MAGIC = b"BZh"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_DRIVE = re.compile(r"^[A-Za-z]:")


def is_archive(data: bytes) -> bool:
    """Whether ``data`` is a zip, a (compressed) tar or a gzip stream, by its magic bytes."""
    return data.startswith((*_ZIP_MAGIC, _GZIP_MAGIC, _BZ2_MAGIC, _XZ_MAGIC)) or _is_tar(data)


def _is_tar(data: bytes) -> bool:
    return data[257:262] == b"ustar"


def unpack(filename: str, data: bytes, *, limits: UploadLimits) -> tuple[UploadedFile, ...]:
    """Read the files of an uploaded archive (or the upload itself when it is no archive).

    Parameters
    ----------
    filename : str
        The upload's own name (used for a single file and in messages).
    data : bytes
        The uploaded bytes.
    limits : UploadLimits
        Bounds on size, members and decompressed bytes.

    Returns
    -------
    tuple of UploadedFile
        Regular files in archive order, paths normalised (``/``-separated, relative).

    Raises
    ------
    UploadTooLarge
        The upload, its member count or its decompressed size exceeds a limit.
    MalformedFile
        A member is unsafe (absolute, ``..``, link, device, encrypted) or the archive is corrupt.
    """
    if len(data) > limits.max_upload_bytes:
        raise UploadTooLarge(
            f"{filename}: the upload has {len(data)} bytes; at most {limits.max_upload_bytes} "
            f"are accepted",
            limit="max_upload_bytes",
            field="file",
        )
    if data.startswith(_ZIP_MAGIC):
        return _unpack_zip(filename, data, limits)
    if data.startswith(_GZIP_MAGIC):
        return _unpack_compressed(filename, gzip.GzipFile(fileobj=io.BytesIO(data)), limits)
    if data.startswith(_BZ2_MAGIC):
        return _unpack_compressed(filename, bz2.BZ2File(io.BytesIO(data)), limits)
    if data.startswith(_XZ_MAGIC):
        return _unpack_compressed(filename, lzma.LZMAFile(io.BytesIO(data)), limits)
    if _is_tar(data):
        return _unpack_tar(filename, io.BytesIO(data), limits, _Counter(filename, limits))
    name = filename.replace("\\", "/").rsplit("/", 1)[-1] or "upload"
    return (UploadedFile(path=_safe_path(name, filename), data=data),)


class _Counter:
    """Running total of decompressed bytes over one upload."""

    def __init__(self, filename: str, limits: UploadLimits) -> None:
        self.filename = filename
        self.limit = limits.max_decompressed_bytes
        self.total = 0

    def add(self, n: int, member: str) -> None:
        self.total += n
        if self.total > self.limit:
            raise UploadTooLarge(
                f"{self.filename}: decompressing {member} passes {self.limit} bytes in total; "
                f"the archive is refused",
                limit="max_decompressed_bytes",
                field="file",
            )


class _ByteSource(Protocol):
    """What a decompressor (``GzipFile``, ``BZ2File``, ``LZMAFile``) offers: ``read(n)``."""

    def read(self, size: int = -1, /) -> bytes: ...


class _BoundedReader(io.RawIOBase):
    """A readable stream over a decompressor that counts every byte it hands out."""

    def __init__(self, raw: _ByteSource, counter: _Counter) -> None:
        self.raw = raw
        self.counter = counter

    def readable(self) -> bool:
        return True

    # typeshed's parameter is any writable Buffer, which has no slice assignment; io hands over
    # a bytearray or memoryview
    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # narrower
        chunk = self.raw.read(min(len(buffer), _CHUNK))
        self.counter.add(len(chunk), "the archive")
        buffer[: len(chunk)] = chunk
        return len(chunk)


def _unpack_compressed(
    filename: str, raw: _ByteSource, limits: UploadLimits
) -> tuple[UploadedFile, ...]:
    counter = _Counter(filename, limits)
    stream = io.BufferedReader(_BoundedReader(raw, counter), buffer_size=_CHUNK)
    try:
        head = stream.peek(512)[:512]
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise MalformedFile(f"cannot decompress: {exc}", file=filename) from exc
    if not _is_tar(head):  # a single compressed file, e.g. results.dat.gz
        name = re.sub(r"\.(gz|bz2|xz)$", "", filename.rsplit("/", 1)[-1]) or "upload"
        data = _read_all(stream, name, counter)
        return (UploadedFile(path=_safe_path(name, filename), data=data),)
    # the bounded reader already counts the decompressed stream; members are not counted twice
    return _unpack_tar(filename, stream, limits, None)


def _unpack_tar(
    filename: str, stream: IO[bytes], limits: UploadLimits, counter: _Counter | None
) -> tuple[UploadedFile, ...]:
    files: list[UploadedFile] = []
    seen: set[str] = set()
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for count, member in enumerate(tar, start=1):
                _check_count(count, filename, limits)
                path = _tar_member_path(member)
                if path is None:
                    continue
                extracted = tar.extractfile(member)
                if extracted is None:  # pragma: no cover - regular files always extract
                    raise MalformedFile("cannot be read", file=member.name)
                data = _read_all(extracted, path, counter)
                files.append(_unique(path, data, seen))
    except (tarfile.TarError, EOFError, OSError, lzma.LZMAError) as exc:
        raise MalformedFile(f"is not a readable tar archive: {exc}", file=filename) from exc
    return tuple(files)


def _tar_member_path(member: tarfile.TarInfo) -> str | None:
    if member.issym() or member.islnk():
        raise MalformedFile(
            f"is a {'symbolic' if member.issym() else 'hard'} link (to {member.linkname!r}); "
            f"links are refused",
            file=member.name,
        )
    if member.isdir():
        return None
    if not member.isfile():
        raise MalformedFile("is a device, FIFO or other special file; refused", file=member.name)
    return _member_path(member.name)


def _unpack_zip(filename: str, data: bytes, limits: UploadLimits) -> tuple[UploadedFile, ...]:
    # zipfile parses the whole central directory into objects before any count can be checked:
    # bound it first by its entries' signatures (never fewer than the entries)
    _check_count(data.count(_ZIP_ENTRY), filename, limits)
    counter = _Counter(filename, limits)
    files: list[UploadedFile] = []
    seen: set[str] = set()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            _check_count(len(infos), filename, limits)
            for info in infos:
                path = _zip_member_path(info)
                if path is None:
                    continue
                with archive.open(info) as member:
                    files.append(_unique(path, _read_all(member, path, counter), seen))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        raise MalformedFile(f"is not a readable zip archive: {exc}", file=filename) from exc
    except NotImplementedError as exc:  # unsupported compression method
        raise MalformedFile(f"uses an unsupported zip feature: {exc}", file=filename) from exc
    return tuple(files)


def _zip_member_path(info: zipfile.ZipInfo) -> str | None:
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise MalformedFile("is a symbolic link; links are refused", file=info.filename)
    if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise MalformedFile("is a device, FIFO or other special file; refused", file=info.filename)
    if info.flag_bits & 0x1:
        raise MalformedFile("is encrypted; encrypted members are refused", file=info.filename)
    if info.is_dir():
        return None
    return _member_path(info.filename)


def _member_path(name: str) -> str | None:
    path = _safe_path(name, name)
    if path.startswith("__MACOSX/") or path.rsplit("/", 1)[-1] == ".DS_Store":
        return None
    return path


def _safe_path(name: str, shown: str) -> str:
    path = name.replace("\\", "/")
    if path.startswith("/") or _DRIVE.match(path):
        raise MalformedFile("has an absolute path; archive members must be relative", file=shown)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise MalformedFile("climbs out of the archive ('..'); refused", file=shown)
    if not parts:
        raise MalformedFile("has an empty name", file=shown)
    return "/".join(parts)


def _check_count(count: int, filename: str, limits: UploadLimits) -> None:
    if count > limits.max_files:
        raise UploadTooLarge(
            f"{filename}: the archive has more than {limits.max_files} members",
            limit="max_files",
            field="file",
        )


def _unique(path: str, data: bytes, seen: set[str]) -> UploadedFile:
    if path in seen:
        raise MalformedFile("appears twice in the archive", file=path)
    seen.add(path)
    return UploadedFile(path=path, data=data)


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(_CHUNK):
        yield chunk


def _read_all(stream: IO[bytes], member: str, counter: _Counter | None) -> bytes:
    buffer = bytearray()
    for chunk in _chunks(stream):
        if counter is not None:
            counter.add(len(chunk), member)
        buffer += chunk
    return bytes(buffer)
