"""Archive fixtures written by the tests themselves: zips and tars with folders,
nesting, hostile names, links, devices, encrypted members and bombs. Also used
by tests/bench."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import struct
import tarfile
import zipfile
from pathlib import Path


def zip_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, (2024, 3, 1, 12, 0, 0)), data,
                             compress_type=compression)
    return buffer.getvalue()


def tar_bytes(members: dict[str, bytes], mode: str = "w:gz") -> bytes:
    """mode "w", "w:gz", "w:bz2" or "w:xz"."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_709_294_400
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def tar_with_specials(regular: dict[str, bytes]) -> bytes:
    """A tar.gz holding regular files plus a symlink, a hard link, a character
    device, a FIFO, an absolute name and a name that climbs out."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in regular.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, kind, link in (("passwd-link", tarfile.SYMTYPE, "/etc/passwd"),
                                 ("hard-link", tarfile.LNKTYPE, "ok.txt"),
                                 ("dev/null", tarfile.CHRTYPE, ""),
                                 ("pipe", tarfile.FIFOTYPE, "")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, link
            archive.addfile(info)
        for name in ("/etc/cron.d/evil", "../../outside.txt"):
            info = tarfile.TarInfo(name)
            data = b"should never be read\n"
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def compressed(data: bytes, kind: str) -> bytes:
    return {"gz": lambda: gzip.compress(data, mtime=0), "bz2": lambda: bz2.compress(data),
            "xz": lambda: lzma.compress(data)}[kind]()


def mark_encrypted(data: bytes, member: str) -> bytes:
    """Set the 'encrypted' flag of one zip member in its local and central headers
    (what a password-protected zip has; Python's zipfile cannot write those)."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        offset = archive.getinfo(member).header_offset
    assert out[offset:offset + 4] == b"PK\x03\x04"
    flags = struct.unpack_from("<H", out, offset + 6)[0]
    struct.pack_into("<H", out, offset + 6, flags | 1)
    position = out.find(b"PK\x01\x02")
    while position >= 0:
        name_length = struct.unpack_from("<H", out, position + 28)[0]
        name = bytes(out[position + 46:position + 46 + name_length]).decode()
        if name == member:
            flags = struct.unpack_from("<H", out, position + 8)[0]
            struct.pack_into("<H", out, position + 8, flags | 1)
        position = out.find(b"PK\x01\x02", position + 4)
    return bytes(out)


def zip_bomb(inflated: int = 64 << 20) -> bytes:
    """One member of `inflated` zero bytes (about 1000:1)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("zeros.txt", "w", force_zip64=True) as member:
            chunk = bytes(1 << 20)
            for _ in range(inflated >> 20):
                member.write(chunk)
    return buffer.getvalue()


def tar_gz_bomb(members: int = 8, each: int = 16 << 20) -> bytes:
    """Several members of zeros in one gzip stream: no single member is large, the
    whole inflates about 1000:1."""
    return tar_bytes({f"part{i}.txt": bytes(each) for i in range(members)}, "w:gz")


def nested(depth: int, leaf: bytes = b"found at the bottom\n") -> bytes:
    """A zip holding a tar.gz holding a zip ... `depth` archives in all, the text
    file in the innermost one."""
    data = leaf
    name = "bottom.txt"
    for level in range(depth, 0, -1):
        if level % 2:
            data, name = zip_bytes({name: data}), f"level{level}.zip"
        else:
            data, name = tar_bytes({name: data}), f"level{level}.tar.gz"
    return data


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def lie_about_size(data: bytes, member: str, claimed: int) -> bytes:
    """Make the local and central headers claim `claimed` inflated bytes for a member
    (a bomb that hides behind a small declared size)."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        offset = archive.getinfo(member).header_offset
    struct.pack_into("<I", out, offset + 22, claimed)
    position = out.find(b"PK\x01\x02")
    while position >= 0:
        name_length = struct.unpack_from("<H", out, position + 28)[0]
        if bytes(out[position + 46:position + 46 + name_length]).decode() == member:
            struct.pack_into("<I", out, position + 24, claimed)
        position = out.find(b"PK\x01\x02", position + 4)
    return bytes(out)
