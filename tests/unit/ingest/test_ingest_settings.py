"""The settings file's "ingest" entry becomes IngestOptions; --ocr wins; bad values are ignored."""

from __future__ import annotations

from app.settings import ingest_options, load_settings, save_settings, settings_from_dict


def test_ingest_entry_round_trips_and_becomes_options(tmp_path):
    settings = settings_from_dict({"ingest": {"ocr": True, "ocr_language": "eng+deu",
                                              "tables": False}})
    path = save_settings(settings, tmp_path / "settings.json")
    options = ingest_options(load_settings(path))
    assert (options.ocr, options.ocr_language, options.tables, options.archives) == \
        (True, "eng+deu", False, True)
    assert ingest_options(load_settings(path), ocr=False).ocr is False


def test_defaults_and_bad_values(caplog):
    assert ingest_options(settings_from_dict({})).ocr is False
    options = ingest_options(settings_from_dict({"ingest": {"ocr": "yes", "ocr_language": "e; rm"}}))
    assert options.ocr is False and options.ocr_language == "eng"
    assert "ingest.ocr must be true or false" in caplog.text
    assert ingest_options(settings_from_dict({"ingest": "nonsense"}), ocr=True).ocr is True


def test_largest_file_from_the_settings_and_the_flag(caplog):
    assert ingest_options(settings_from_dict({})).max_file_bytes == 0          # any size
    assert ingest_options(settings_from_dict({"ingest": {"max_file_mb": 500}})).max_file_bytes == 500 << 20
    flagged = ingest_options(settings_from_dict({"ingest": {"max_file_mb": 500}}), max_file_mb=0.5)
    assert flagged.max_file_bytes == 512 << 10
    assert ingest_options(settings_from_dict({"ingest": {"max_file_mb": -1}})).max_file_bytes == 0
    assert "ingest.max_file_mb must be a number of MB" in caplog.text
