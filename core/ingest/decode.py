"""Bytes -> str for text files, without mojibake.

Order: BOM (UTF-32/UTF-8/UTF-16), strict UTF-8, UTF-16 without a BOM (NUL
pattern), Western single-byte text as cp1252 (a plausibility check, because
detectors misread short French or German text as cp1250 or worse), then
charset-normalizer, then cp1252 with replacement characters as a last resort.
Newlines always come out as "\n".
"""

from __future__ import annotations

import codecs
import logging

log = logging.getLogger(__name__)

SAMPLE = 64 * 1024

_BOMS = (  # longest first: the UTF-32-LE BOM starts with the UTF-16-LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Characters that Western European text in cp1252/Latin-1 really uses: the
# Latin-1 supplement and cp1252's extras, minus rare signs that are letters in
# Central European cp1250 (so Polish "ą ł Ż Ą ź" is not taken for cp1252).
_CP1250_TELLS = set("¹³¯¥¤¦¨¸¼¾ŸƒˆŠ‹›˜†‡")
_WESTERN = ({chr(c) for c in range(0xA0, 0x100)}
            | set("€‚„…‰‘’“”•–—™šœžŒŽ")) - _CP1250_TELLS


def normalize_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def bom_encoding(data: bytes) -> tuple[str, int] | None:
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    return None


def utf16_without_bom(sample: bytes) -> str | None:
    """'utf-16-le'/'utf-16-be' if the NUL bytes sit on one parity, as in
    ASCII-heavy UTF-16 text; None otherwise."""
    if len(sample) < 4:
        return None
    n = len(sample) - len(sample) % 2
    even = sample[0:n:2].count(0)
    odd = sample[1:n:2].count(0)
    half = n // 2
    if odd > 0.3 * half and even < 0.05 * half:
        return "utf-16-le"
    if even > 0.3 * half and odd < 0.05 * half:
        return "utf-16-be"
    return None


def looks_western(text: str) -> bool:
    """True when the non-ASCII letters of `text` are few and all common in
    Western European languages (Cyrillic or Greek read as cp1252 fails both)."""
    letters = 0
    high = 0
    for ch in text:
        if ch.isalpha():
            letters += 1
        if ord(ch) > 127:
            if ch not in _WESTERN:
                return False
            if ch.isalpha():
                high += 1
    return letters > 0 and high <= 0.35 * letters


def decode_bytes(data: bytes) -> tuple[str, str]:
    """(text, encoding name). Never raises; the last resort replaces bytes."""
    found = bom_encoding(data)
    if found:
        name, skip = found
        try:
            return normalize_newlines(data[skip:].decode(name)), name + " (BOM)"
        except UnicodeDecodeError as exc:
            log.info("BOM says %s but decoding failed (%s); guessing instead", name, exc)
            data = data[skip:]
    try:
        return normalize_newlines(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    name = utf16_without_bom(data[:SAMPLE])
    if name:
        try:
            return normalize_newlines(data.decode(name)), name
        except UnicodeDecodeError:
            pass
    try:
        western = data.decode("cp1252")
    except UnicodeDecodeError:
        western = None
    if western is not None and looks_western(western[:SAMPLE]):
        return normalize_newlines(western), "cp1252"
    guess = _detect(data)
    if guess:
        try:
            return normalize_newlines(data.decode(guess)), guess
        except (UnicodeDecodeError, LookupError) as exc:
            log.info("charset-normalizer guessed %s but decoding failed: %s", guess, exc)
    return normalize_newlines(data.decode("cp1252", errors="replace")), "cp1252 (lossy)"


def _detect(data: bytes) -> str | None:
    from charset_normalizer import from_bytes
    best = from_bytes(data[: 4 * SAMPLE]).best()
    return best.encoding if best is not None else None
