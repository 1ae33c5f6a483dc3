"""Safe archive reading: bombs, traversal, absolute paths, links, devices, limits."""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile

import pytest

from app.domain.errors import UploadTooLarge
from app.domain.importers import UploadedFile, UploadLimits
from app.domain.importers.archive import is_archive, unpack
from app.domain.results import MalformedFile

LIMITS = UploadLimits(max_decompressed_bytes=1_000_000, max_files=20, max_upload_bytes=2_000_000)


def a_zip(members: dict[str, bytes], *, mode: int | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode is not None:
                info.external_attr = mode << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def a_tar(members: list[tarfile.TarInfo | tuple[str, bytes]], *, compress: str = "gz") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compress}") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                archive.addfile(info, io.BytesIO(member[1]))
    return buffer.getvalue()


def test_zip_members_are_read_in_order_with_normalised_paths() -> None:
    data = a_zip(
        {"exp\\data_f1\\a.dat": b"1", "./exp/b.info": b"2", "exp/": b"", "__MACOSX/._a": b"x"}
    )
    assert unpack("u.zip", data, limits=LIMITS) == (
        UploadedFile("exp/data_f1/a.dat", b"1"),
        UploadedFile("exp/b.info", b"2"),
    )


@pytest.mark.parametrize("compress", ["gz", "bz2", "xz", ""])
def test_tar_by_magic_bytes_not_name(compress: str) -> None:
    data = a_tar([("exp/a.dat", b"abc"), ("exp/b.info", b"d")], compress=compress)
    assert is_archive(data)
    assert unpack("results.bin", data, limits=LIMITS) == (
        UploadedFile("exp/a.dat", b"abc"),
        UploadedFile("exp/b.info", b"d"),
    )


def test_single_file_and_single_gzip_file() -> None:
    assert unpack("r.csv", b"a,b\n", limits=LIMITS) == (UploadedFile("r.csv", b"a,b\n"),)
    assert unpack("r.csv.gz", gzip.compress(b"a,b\n"), limits=LIMITS) == (
        UploadedFile("r.csv", b"a,b\n"),
    )


def test_zip_bomb_stops_at_the_decompressed_limit() -> None:
    bomb = a_zip({"big.dat": b"\0" * 50_000_000})
    assert len(bomb) < 100_000
    with pytest.raises(UploadTooLarge, match="passes 1000000 bytes") as info:
        unpack("bomb.zip", bomb, limits=LIMITS)
    assert info.value.limit == "max_decompressed_bytes"


def test_zip_bomb_with_lying_header_sizes_is_refused() -> None:
    bomb = bytearray(a_zip({"big.dat": b"\0" * 5_000_000}))
    # claim 10 bytes in both the local header and the central directory
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = bomb.index(signature)
        bomb[at + offset : at + offset + 4] = (10).to_bytes(4, "little")
    with pytest.raises((UploadTooLarge, MalformedFile)):
        unpack("bomb.zip", bytes(bomb), limits=LIMITS)


def test_many_small_members_add_up_to_the_limit() -> None:
    members = {f"m{i}.dat": b"x" * 300_000 for i in range(4)}
    with pytest.raises(UploadTooLarge):
        unpack("u.zip", a_zip(members), limits=LIMITS)


def test_tgz_bomb_stops_at_the_decompressed_limit() -> None:
    bomb = a_tar([("big.dat", b"\0" * 20_000_000)])
    assert len(bomb) < 100_000
    with pytest.raises(UploadTooLarge):
        unpack("bomb.tgz", bomb, limits=LIMITS)


def test_gzip_bomb_that_is_no_tar() -> None:
    with pytest.raises(UploadTooLarge):
        unpack("x.dat.gz", gzip.compress(b"\0" * 20_000_000), limits=LIMITS)


def test_upload_and_member_count_limits() -> None:
    with pytest.raises(UploadTooLarge, match="at most 2000000") as info:
        unpack("u.csv", b"x" * 2_000_001, limits=LIMITS)
    assert info.value.limit == "max_upload_bytes"
    with pytest.raises(UploadTooLarge, match="more than 20 members") as info:
        unpack("u.zip", a_zip({f"m{i}": b"" for i in range(21)}), limits=LIMITS)
    assert info.value.limit == "max_files"
    with pytest.raises(UploadTooLarge, match="more than 20 members") as info:
        unpack("u.tgz", a_tar([(f"m{i}", b"") for i in range(21)]), limits=LIMITS)
    assert info.value.limit == "max_files"


@pytest.mark.parametrize("name", ["../x.dat", "exp/../../x.dat", "..\\x.dat"])
@pytest.mark.parametrize("kind", ["zip", "tgz"])
def test_traversal_is_refused(name: str, kind: str) -> None:
    data = a_zip({name: b"1"}) if kind == "zip" else a_tar([(name, b"1")])
    with pytest.raises(MalformedFile, match="climbs out") as info:
        unpack("u", data, limits=LIMITS)
    assert info.value.file == name


@pytest.mark.parametrize("name", ["/etc/passwd", "C:\\x.dat", "\\\\server\\x"])
def test_absolute_paths_are_refused(name: str) -> None:
    with pytest.raises(MalformedFile, match="absolute") as info:
        unpack("u.zip", a_zip({name: b"1"}), limits=LIMITS)
    assert info.value.file == name
    assert info.value.line is None


def test_tar_absolute_path_is_refused() -> None:
    with pytest.raises(MalformedFile, match="absolute"):
        unpack("u.tgz", a_tar([("/etc/x", b"1")]), limits=LIMITS)


def tar_member(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


@pytest.mark.parametrize(
    ("member", "words"),
    [
        (tar_member("exp/link.dat", tarfile.SYMTYPE, "/etc/passwd"), "symbolic link"),
        (tar_member("exp/hard.dat", tarfile.LNKTYPE, "exp/a.dat"), "hard link"),
        (tar_member("exp/dev", tarfile.CHRTYPE), "device"),
        (tar_member("exp/fifo", tarfile.FIFOTYPE), "device, FIFO"),
    ],
)
def test_tar_links_and_devices_are_refused(member: tarfile.TarInfo, words: str) -> None:
    data = a_tar([("exp/a.dat", b"1"), member])
    with pytest.raises(MalformedFile, match=words) as info:
        unpack("u.tgz", data, limits=LIMITS)
    assert info.value.file == member.name


def test_zip_symlink_member_is_refused() -> None:
    data = a_zip({"exp/link.dat": b"/etc/passwd"}, mode=stat.S_IFLNK | 0o777)
    with pytest.raises(MalformedFile, match="symbolic link"):
        unpack("u.zip", data, limits=LIMITS)


def test_duplicate_member_and_corrupt_archives() -> None:
    with pytest.raises(MalformedFile, match="twice"):
        unpack("u.tgz", a_tar([("a/x.dat", b"1"), ("a\\x.dat", b"2")]), limits=LIMITS)
    corrupt = a_zip({"a.dat": b"abc" * 1000})[:-30]
    with pytest.raises(MalformedFile, match="zip"):
        unpack("u.zip", corrupt, limits=LIMITS)
    with pytest.raises(MalformedFile, match=r"decompress|tar"):
        unpack("u.tgz", a_tar([("a.dat", b"abc" * 1000)])[:-40], limits=LIMITS)
