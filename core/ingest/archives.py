"""Archives read as folders: .zip, .tar (plain, .gz, .bz2, .xz, .tgz ...) and single
.gz/.bz2/.xz files. Runs inside an ingest worker process, never in the app.

    for item in expand(entry, job):      # Leaf (bytes of one member) or Skip
        ...

Members are named below the archive: "export.zip/inbox/2024-03.mbox". A single
compressed file ("ls.1.gz") is one document at its own path, read as what its
name says without the suffix ("ls.1"); a compressed tar is a folder.

Hostile archives are measured while they stream, never by what their headers
claim: every inflated byte counts against the archive's total
(IngestOptions.max_archive_bytes) and against the bytes really read from disk
(past 16 MiB, more than max_archive_ratio times as many = a bomb; the rest of
the archive is refused). One member may not inflate past max_member_bytes.
Names that climb out ("../x") or are absolute, tar links and devices, and
encrypted zip members are skipped with their reason. Archives inside archives
are read up to max_archive_depth levels.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import posixpath
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from core.ingest.model import (CORRUPT, ENCRYPTED, IGNORED, TOO_LARGE, UNREADABLE, UNSAFE_NAME,
                               UNSUPPORTED, ExtractError, FileEntry, IngestOptions, Skip)

RATIO_FLOOR = 16 * 1024 * 1024     # below this many inflated bytes, any ratio is fine
CHUNK = 1024 * 1024

# Names that mark an archive (used before a file is opened: the size limit of the
# walk allows archives up to max_archive_bytes instead of max_file_bytes).
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tgz", ".tbz", ".tbz2", ".txz", ".gz", ".bz2", ".xz")
_COMPRESSED_SUFFIX = {".gz": "gzip", ".tgz": "gzip", ".bz2": "bzip2", ".tbz": "bzip2",
                      ".tbz2": "bzip2", ".xz": "xz", ".txz": "xz"}
_OOXML_EXT = (".docx", ".docm", ".pptx", ".pptm", ".xlsx", ".xlsm", ".epub")


@dataclass(frozen=True)
class Leaf:
    """One member's bytes, ready for the format extractors."""
    path: str            # "export.zip/inbox/2024-03.mbox"
    source_path: str     # the archive on disk + "/" + member name
    data: bytes
    name: str            # what to classify the bytes by ("ls.1" for "ls.1.gz")


class Refused(Exception):
    """The archive as a whole is refused from here on (a bomb, too large)."""


def looks_like_archive(name: str) -> bool:
    lower = name.lower()
    return lower.endswith(ARCHIVE_SUFFIXES)


def kind_of(head: bytes, name: str) -> str | None:
    """"zip" | "tar" | "gzip" | "bzip2" | "xz" for archive bytes, else None. A zip
    that is an Office document or EPUB (by name) is a document, not an archive;
    by content that is settled later (see zip_is_document)."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return None if name.lower().endswith(_OOXML_EXT) else "zip"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"BZh") and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bzip2"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    return None


def zip_is_document(archive: zipfile.ZipFile) -> bool:
    """A .docx/.xlsx/.pptx/.epub with another name: read it as that document."""
    names = set(archive.namelist())
    if "mimetype" in names:
        try:
            if archive.read("mimetype").strip() == b"application/epub+zip":
                return True
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError):
            return False
    return "[Content_Types].xml" in names and any(
        n in names for n in ("word/document.xml", "ppt/presentation.xml", "xl/workbook.xml"))


class Budget:
    """Inflated bytes of one dropped archive (all levels), against the compressed
    bytes really read from disk so far."""

    def __init__(self, options: IngestOptions, compressed: Callable[[], int]) -> None:
        self.options = options
        self.compressed = compressed
        self.inflated = 0

    def add(self, n: int) -> None:
        self.inflated += n
        limit = self.options.max_archive_bytes
        if self.inflated > limit:
            raise Refused(f"inflates past the {limit:,} byte archive limit")
        ratio = self.options.max_archive_ratio
        packed = max(self.compressed(), 1)
        if self.inflated > RATIO_FLOOR and self.inflated > ratio * packed:
            raise Refused(f"inflates {self.inflated:,} bytes out of {packed:,} "
                          f"(over {ratio}x: a zip bomb?)")


class _Counting(io.RawIOBase):
    """A raw file that counts the bytes read from it (the real compressed size)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self.raw.readinto(buffer)
        self.count += n or 0
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


class _Metered(io.RawIOBase):
    """An inflating stream whose every byte is charged to the budget."""

    def __init__(self, stream: IO[bytes], budget: Budget) -> None:
        self.stream = stream
        self.budget = budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.stream.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        if n:
            self.budget.add(n)
        return n


def expand(entry: FileEntry, options: IngestOptions) -> Iterator[Leaf | Skip]:
    """Leaves and skips of the archive `entry`, in archive order."""
    try:
        raw = open(entry.source_path, "rb")
    except OSError as exc:
        yield Skip(entry.path, entry.source_path, UNREADABLE, exc.strerror or str(exc))
        return
    counting = _Counting(raw)
    with counting:
        head = raw.read(512)
        raw.seek(0)
        kind = kind_of(head, entry.path)
        budget = Budget(options, lambda: entry.size if kind == "zip" else counting.count)
        yield from _guarded(entry.path, entry.source_path, kind, counting, entry.path, 1,
                            budget, options)


def _guarded(path: str, source: str, kind: str | None, stream: IO[bytes], name: str, depth: int,
             budget: Budget, options: IngestOptions) -> Iterator[Leaf | Skip]:
    """One archive level; a refusal ends this archive (and those holding it) with a skip."""
    try:
        yield from _level(path, source, kind, stream, name, depth, budget, options)
    except Refused as exc:
        if depth > 1:
            raise
        yield Skip(path, source, TOO_LARGE, f"archive refused after {budget.inflated:,} "
                                            f"inflated bytes: {exc}")


def _level(path: str, source: str, kind: str | None, stream: IO[bytes], name: str, depth: int,
           budget: Budget, options: IngestOptions) -> Iterator[Leaf | Skip]:
    if kind == "zip":
        yield from _zip(path, source, stream, depth, budget, options)
    elif kind == "tar":
        yield from _tar(path, source, _Metered(stream, budget), depth, budget, options)
    elif kind in ("gzip", "bzip2", "xz"):
        yield from _compressed(path, source, kind, stream, name, depth, budget, options)
    else:
        yield Skip(path, source, UNSUPPORTED, "not an archive")


def _compressed(path: str, source: str, kind: str, stream: IO[bytes], name: str, depth: int,
                budget: Budget, options: IngestOptions) -> Iterator[Leaf | Skip]:
    opener = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
    inflating = opener(fileobj=stream) if kind == "gzip" else opener(stream)
    metered = io.BufferedReader(_Metered(inflating, budget), CHUNK)
    try:
        head = metered.peek(512)[:512]
        if len(head) >= 262 and head[257:262] == b"ustar":
            yield from _tar(path, source, metered, depth, budget, options)
            return
        inner = _strip_suffix(name)
        data = _read_capped(metered, options.max_member_bytes, drain=False)
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        yield Skip(path, source, CORRUPT, f"bad {kind} data: {exc}")
        return
    except ExtractError as exc:
        yield Skip(path, source, exc.reason, exc.detail)
        return
    yield from _member(path, source, data, inner, depth, budget, options, compressed_name=True)


def _zip(path: str, source: str, stream: IO[bytes], depth: int, budget: Budget,
         options: IngestOptions) -> Iterator[Leaf | Skip]:
    try:
        archive = zipfile.ZipFile(stream if depth > 1 else source)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        yield Skip(path, source, CORRUPT, f"bad zip archive: {exc}")
        return
    with archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            shown, src = f"{path}/{info.filename}", f"{source}/{info.filename}"
            problem = _unsafe(info.filename)
            if problem is None and stat.S_ISLNK(info.external_attr >> 16):
                problem = "symlink member (links are not followed)"
            if problem:
                yield Skip(shown, src, UNSAFE_NAME, problem)
                continue
            ignored = _ignored(info.filename, options)
            if ignored:
                if options.report_ignored:
                    yield Skip(shown, src, IGNORED, ignored)
                continue
            if info.flag_bits & 0x1:
                yield Skip(shown, src, ENCRYPTED, "encrypted zip member (password-protected)")
                continue
            try:
                data = _read_zip_member(archive, info, budget, options)
            except ExtractError as exc:
                yield Skip(shown, src, exc.reason, exc.detail)
                continue
            yield from _member(shown, src, data, info.filename, depth, budget, options)


def _read_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget,
                     options: IngestOptions) -> bytes:
    limit = options.max_member_bytes
    ratio = options.max_archive_ratio
    parts, size = [], 0
    try:
        with archive.open(info) as member:
            while chunk := member.read(CHUNK):
                size += len(chunk)
                budget.add(len(chunk))
                if size > limit:
                    raise ExtractError(TOO_LARGE, f"member inflates past the {limit:,} byte "
                                                  "limit")
                if size > RATIO_FLOOR and size > ratio * max(info.compress_size, 1):
                    raise ExtractError(TOO_LARGE, f"member inflates over {ratio}x its "
                                                  f"{info.compress_size:,} compressed bytes "
                                                  "(a zip bomb?)")
                parts.append(chunk)
    except NotImplementedError as exc:
        raise ExtractError(UNSUPPORTED, f"zip member: {exc}") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError,
            zipfile.LargeZipFile) as exc:
        raise ExtractError(CORRUPT, f"zip member: {exc}") from None
    return b"".join(parts)


def _tar(path: str, source: str, stream: IO[bytes], depth: int, budget: Budget,
         options: IngestOptions) -> Iterator[Leaf | Skip]:
    try:
        archive = tarfile.open(fileobj=stream, mode="r|")
    except (tarfile.TarError, OSError, EOFError) as exc:
        yield Skip(path, source, CORRUPT, f"bad tar archive: {exc}")
        return
    with archive:
        while True:
            try:
                member = archive.next()
            except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
                yield Skip(path, source, CORRUPT, f"tar archive ends badly: {exc}")
                return
            if member is None:
                return
            if member.isdir():
                continue
            shown, src = f"{path}/{member.name}", f"{source}/{member.name}"
            problem = _unsafe(member.name)
            if problem:
                yield Skip(shown, src, UNSAFE_NAME, problem)
                continue
            if member.issym() or member.islnk():
                what = "symlink" if member.issym() else "hard link"
                yield Skip(shown, src, UNSAFE_NAME,
                           f"{what} member to {member.linkname!r} (links are not followed)")
                continue
            if not member.isreg():
                yield Skip(shown, src, UNSUPPORTED, "device, FIFO or special member, "
                                                    "not a regular file")
                continue
            ignored = _ignored(member.name, options)
            if ignored:
                if options.report_ignored:
                    yield Skip(shown, src, IGNORED, ignored)
                continue
            try:
                handle = archive.extractfile(member)
                data = _read_capped(handle, options.max_member_bytes) if handle else b""
            except ExtractError as exc:
                yield Skip(shown, src, exc.reason, exc.detail)
                continue
            except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
                yield Skip(shown, src, CORRUPT, f"tar member: {exc}")
                return
            yield from _member(shown, src, data, member.name, depth, budget, options)


def _member(path: str, source: str, data: bytes, name: str, depth: int, budget: Budget,
            options: IngestOptions, compressed_name: bool = False) -> Iterator[Leaf | Skip]:
    """A member's bytes: a nested archive is opened (up to the depth limit), the
    rest is a Leaf for the extractors."""
    kind = kind_of(data[:512], name)
    if kind == "zip":
        try:
            if zip_is_document(zipfile.ZipFile(io.BytesIO(data))):
                kind = None
        except (zipfile.BadZipFile, OSError, ValueError, EOFError):
            kind = None                  # the extractors report the broken zip
    if kind is None:
        yield Leaf(path, source, data, name)
        return
    if depth >= options.max_archive_depth:
        yield Skip(path, source, UNSUPPORTED, f"archive nested more than "
                                              f"{options.max_archive_depth} levels deep")
        return
    inner = posixpath.basename(name) if compressed_name else name
    yield from _guarded(path, source, kind, io.BytesIO(data), inner, depth + 1, budget, options)


def _read_capped(stream: IO[bytes], limit: int, drain: bool = True) -> bytes:
    parts, size = [], 0
    while chunk := stream.read(CHUNK):
        size += len(chunk)
        if size > limit:
            # A tar member: read on to its end (charged to the budget) so the stream
            # stays in step. A single compressed file: nothing follows, stop here.
            while drain and stream.read(CHUNK):
                pass
            raise ExtractError(TOO_LARGE, f"member inflates past the {limit:,} byte limit")
        parts.append(chunk)
    return b"".join(parts)


def _unsafe(name: str) -> str | None:
    """Why a member name may not be used, or None."""
    if name.startswith(("/", "\\")) or (len(name) > 2 and name[0].isalpha() and name[1] == ":"
                                         and name[2] in "/\\"):
        return f"absolute member name {name!r} refused"
    parts = name.replace("\\", "/").split("/")
    if ".." in parts:
        return f"member name {name!r} climbs out of the archive (../); refused"
    if "\x00" in name:
        return "member name with a NUL byte refused"
    return None


def _ignored(name: str, options: IngestOptions) -> str | None:
    from core.ingest.walk import ignored_name
    for part in name.replace("\\", "/").split("/"):
        if part:
            why = ignored_name(part, options)
            if why:
                return why
    return None


def _strip_suffix(name: str) -> str:
    base = posixpath.basename(name)
    lower = base.lower()
    for suffix, short in ((".tgz", ".tar"), (".tbz2", ".tar"), (".tbz", ".tar"), (".txz", ".tar")):
        if lower.endswith(suffix):
            return base[: -len(suffix)] + short
    for suffix in (".gz", ".bz2", ".xz"):
        if lower.endswith(suffix):
            return base[: -len(suffix)]
    return base
