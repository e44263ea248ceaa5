"""Which format is this file? Content first (magic bytes, NULs), name second."""

from __future__ import annotations

import re

from core.ingest.model import BINARY, CORRUPT, ENCRYPTED, UNSUPPORTED, ExtractError

HEAD_BYTES = 8192

ZIP_MAGIC = b"PK\x03\x04"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

# Known binary formats we do not read: magic prefix -> what to tell the user.
# (Other binaries are caught by the NUL/control-byte test.)
_MAGIC_UNSUPPORTED = (
    (b"GIF87a", "GIF image (OCR reads PNG, JPEG and TIFF)"),
    (b"GIF89a", "GIF image (OCR reads PNG, JPEG and TIFF)"),
    (b"\x1f\x8b", "gzip data (reading archives is off)"),
    (b"\xfd7zXZ\x00", "xz data (reading archives is off)"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive (7z is not read; repack it as .zip or .tar.xz)"),
    (b"Rar!\x1a\x07", "RAR archive (RAR is not read; repack it as .zip or .tar.xz)"),
    (b"\x7fELF", "executable (ELF)"),
    (b"\xca\xfe\xba\xbe", "Java class or Mach-O binary"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"ID3\x03", "MP3 audio"), (b"ID3\x04", "MP3 audio"),
    (b"OggS", "Ogg audio/video"),
    (b"fLaC", "FLAC audio"),
    (b"\x00asm", "WebAssembly binary"),
)

_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*")

_OOXML_EXT = {"docx": "docx", "docm": "docx", "pptx": "pptx", "pptm": "pptx",
              "xlsx": "xlsx", "xlsm": "xlsx", "epub": "epub"}
_LEGACY_OFFICE = {"doc": "Word 97-2003 .doc (save it as .docx)",
                  "xls": "Excel 97-2003 .xls (save it as .xlsx)",
                  "ppt": "PowerPoint 97-2003 .ppt (save it as .pptx)",
                  "msg": "Outlook .msg (save the mail as .eml)"}

_TEXT_EXT = {
    "md": "markdown", "markdown": "markdown", "mdown": "markdown", "mkd": "markdown",
    "csv": "csv", "tsv": "tsv", "tab": "tsv",
    "json": "json", "geojson": "json", "ipynb": "json",
    "jsonl": "jsonl", "ndjson": "jsonl",
    "html": "html", "htm": "html", "xhtml": "html",
    "xml": "xml", "svg": "xml", "xsd": "xml", "xsl": "xml", "xslt": "xml", "rss": "xml",
    "atom": "xml", "kml": "xml", "plist": "xml", "opf": "xml",
    "eml": "eml", "mbox": "mbox", "mbx": "mbox",
}
_CODE_EXT = set("""
py pyi pyw js mjs cjs ts tsx jsx java c h cc cpp cxx hpp hh cs go rs rb php swift kt kts scala
sh bash zsh fish ps1 bat cmd sql r jl lua pl pm hs ex exs erl clj cljs dart vue svelte css scss
sass less yaml yml toml ini cfg conf gradle cmake tf hcl proto graphql gql m mm f f90 asm s
vb vbs groovy nim zig v sol el lisp scm ml mli fs fsx tex bib make mk dockerfile nix
""".split())
_CODE_NAMES = {"Makefile", "Dockerfile", "CMakeLists.txt", "Rakefile", "Gemfile", "Jenkinsfile",
               "Vagrantfile", "Procfile"}

# "From sender Mon Feb  3 10:00:00 2025" followed by a header line.
_MBOX_START = re.compile(rb"From \S+ .*\d\d:\d\d.*\r?\n[A-Za-z0-9-]+:", re.ASCII)



def extension(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.lstrip(".") else ""


def classify(name: str, head: bytes) -> str:
    """Return a format name ("pdf", "zip:docx", "text", ...) for a non-empty file
    given its first bytes, or raise ExtractError(binary|unsupported|corrupt|encrypted).
    "zip" formats are settled by the extractor, which looks inside the archive."""
    ext = extension(name)
    base = name.rsplit("/", 1)[-1]
    if head.startswith(b"%PDF-") or (ext == "pdf" and b"%PDF-" in head[:1024]):
        return "pdf"
    if ext == "pdf":
        kind = "text" if _is_text(head) else "binary data"
        raise ExtractError(CORRUPT, f"not a PDF: no %PDF- header (the file holds {kind})")
    if head.startswith(ZIP_MAGIC) or head.startswith(b"PK\x05\x06"):
        return "zip:" + _OOXML_EXT.get(ext, "")
    if head.startswith(OLE_MAGIC):
        if ext in _OOXML_EXT:
            raise ExtractError(ENCRYPTED, "password-protected Office file "
                                          "(or an old .doc/.xls/.ppt renamed)")
        what = _LEGACY_OFFICE.get(ext, "legacy Office / OLE compound file")
        raise ExtractError(UNSUPPORTED, what)
    if ext in _OOXML_EXT:
        raise ExtractError(CORRUPT, f"not a .{ext} file: no zip signature")
    if ext in _LEGACY_OFFICE:
        raise ExtractError(UNSUPPORTED, _LEGACY_OFFICE[ext])
    if head.startswith(_IMAGE_MAGIC):
        return "image"            # read by OCR when it is on, else skipped saying so
    for magic, what in _MAGIC_UNSUPPORTED:
        if head.startswith(magic):
            raise ExtractError(UNSUPPORTED, what)
    if head[8:12] in (b"WEBP", b"AVI ", b"WAVE") and head.startswith(b"RIFF"):
        raise ExtractError(UNSUPPORTED, f"RIFF {head[8:12].decode().strip()} media")
    if head[4:8] == b"ftyp":
        raise ExtractError(UNSUPPORTED, "MP4/QuickTime/HEIC media")
    if not _is_text(head):
        raise ExtractError(BINARY, "binary content (NUL or control bytes)")
    if ext in _TEXT_EXT:
        return _TEXT_EXT[ext]
    if ext in _CODE_EXT or base in _CODE_NAMES:
        return "code"
    if ext == "" and _MBOX_START.match(head):
        return "mbox"
    if ext in ("", "txt"):
        lead = head.lstrip()[:64].lower()
        if lead.startswith(b"<!doctype html") or lead.startswith(b"<html"):
            return "html"
        if lead.startswith(b"<?xml"):
            return "xml"
    return "text"


def _is_text(head: bytes) -> bool:
    """Text unless it has NULs (outside UTF-16/32) or too many control bytes."""
    from core.ingest.decode import bom_encoding, utf16_without_bom
    if not head:
        return True
    if bom_encoding(head) or utf16_without_bom(head):
        return True
    if b"\x00" in head:
        return False
    controls = sum(head.count(bytes([c])) for c in _CONTROL)
    return controls <= 0.05 * len(head)


_CONTROL = [c for c in range(32) if c not in (8, 9, 10, 11, 12, 13, 27)] + [127]
