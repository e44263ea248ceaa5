"""EPUB -> text per chapter in spine order: zipfile + the defused XML parser for
container.xml and the package file, html_to_text for each chapter. DRM
(encryption.xml naming anything but font obfuscation) -> encrypted."""

from __future__ import annotations

import posixpath
import zipfile
from urllib.parse import unquote

from core.ingest.formats import xmlsafe
from core.ingest.formats.blocks import BlockText
from core.ingest.formats.htmldoc import html_to_text
from core.ingest.formats.plain import decode_text
from core.ingest.model import CORRUPT, ENCRYPTED, NO_TEXT, ExtractError, Extracted

_FONT_OBFUSCATION = {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}


def extract(archive: zipfile.ZipFile) -> Extracted:
    names = set(archive.namelist())
    if "META-INF/container.xml" not in names:
        raise ExtractError(CORRUPT, "not an EPUB: META-INF/container.xml missing")
    if "META-INF/encryption.xml" in names:
        _refuse_drm(archive.read("META-INF/encryption.xml"))
    try:
        container = xmlsafe.parse_tree(archive.read("META-INF/container.xml"))
        rootfile = next(container.iter("rootfile")).attrs.get("full-path", "")
        package = xmlsafe.parse_tree(archive.read(rootfile))
    except (ValueError, StopIteration, KeyError) as exc:
        raise ExtractError(CORRUPT, f"EPUB package unreadable: {exc}") from None
    base = posixpath.dirname(rootfile)
    manifest = {item.attrs.get("id"): item.attrs for item in package.iter("item")}
    blocks = BlockText()
    for ref in package.iter("itemref"):
        item = manifest.get(ref.attrs.get("idref"))
        if not item or "html" not in item.get("media-type", ""):
            continue
        href = posixpath.normpath(posixpath.join(base, unquote(item.get("href", ""))))
        if href not in names:
            continue
        body = html_to_text(decode_text(archive.read(href)))
        blocks.add(f"chapter {len(blocks.spans) + 1}", body)
    if not blocks.blocks_with_text:
        raise ExtractError(NO_TEXT, "EPUB has no chapter text")
    return Extracted("epub", blocks.text(), tuple(blocks.spans))


def _refuse_drm(data: bytes) -> None:
    try:
        tree = xmlsafe.parse_tree(data)
    except ValueError as exc:
        raise ExtractError(ENCRYPTED, f"EPUB encryption.xml unreadable: {exc}") from None
    for method in tree.iter("EncryptionMethod"):
        if method.attrs.get("Algorithm") not in _FONT_OBFUSCATION:
            raise ExtractError(ENCRYPTED, "EPUB with DRM (encrypted chapters)")
