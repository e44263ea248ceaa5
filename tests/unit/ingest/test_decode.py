"""Encodings: BOMs, UTF-8, UTF-16 without BOM, Western cp1252/Latin-1, detector, binary."""

from __future__ import annotations

import codecs

import pytest

from core.ingest.decode import decode_bytes, looks_western
from core.ingest.model import ExtractError

WESTERN = ("Café crème, über naïve – “smart quotes” cost 5 €.\n"
           "Zürich Straße, L'été à Montréal; señor niño.\n")


@pytest.mark.parametrize("bom,codec", [
    (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be")])
def test_bom(bom, codec):
    text, used = decode_bytes(bom + WESTERN.encode(codec))
    assert text == WESTERN and used.startswith(codec)


def test_utf16_without_bom():
    for codec in ("utf-16-le", "utf-16-be"):
        text, used = decode_bytes("Hello world\r\nsecond line é\r\n".encode(codec))
        assert (text, used) == ("Hello world\nsecond line é\n", codec)


def test_cp1252_and_latin1_come_out_right():
    text, used = decode_bytes(WESTERN.encode("cp1252"))
    assert (text, used) == (WESTERN, "cp1252")
    latin = "Zürich, Genève, Köln: 10°C, ½ price\n"
    assert decode_bytes(latin.encode("latin-1"))[0] == latin
    assert decode_bytes("résumé\n".encode("latin-1"))[0] == "résumé\n"


def test_cyrillic_goes_to_the_detector_not_cp1252():
    russian = "Привет, как дела? Это тест кодировки для русского текста.\n" * 3
    assert not looks_western(russian.encode("cp1251").decode("cp1252"))
    text, used = decode_bytes(russian.encode("cp1251"))
    assert text == russian and used == "cp1251"


def test_strict_utf8_first():
    assert decode_bytes("naïve ✓\r\n".encode())[0] == "naïve ✓\n"


def test_undecodable_never_raises():
    text, used = decode_bytes(b"abc \x81\x8d\x8f\x90\x9d def " * 3)
    assert "abc" in text and used


def test_binary_after_decoding_is_refused(tmp_path, read_file):
    path = tmp_path / "looks16.txt"
    path.write_bytes(b"\x01\x00\x02\x00\x03\x00" * 400)   # UTF-16-ish NULs, control chars
    with pytest.raises(ExtractError) as info:
        read_file(path)
    assert info.value.reason == "binary"


def test_nbsp_and_signs_stay_western_polish_goes_to_cp1250():
    french = "Prix:\xa010\xa0€ – très cher, 5 m² ½ «ok»\n"
    assert decode_bytes(french.encode("cp1252")) == (french, "cp1252")
    polish = "Zażółć gęślą jaźń. Łódź jest dużym miastem w Polsce, a w Łodzi jest wiele ulic.\n"
    assert decode_bytes(polish.encode("cp1250"))[0] == polish
