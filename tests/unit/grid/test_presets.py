"""Column presets: saved in a JSON file in the settings folder and read back checked."""

import json

import pytest

from core.grid.model import Column, parse_columns
from core.grid.presets import PresetError, preset_columns, preset_names, presets_path, save_preset


def test_a_preset_is_saved_replaced_and_read_back(tmp_path):
    path = presets_path(tmp_path / "settings.json")
    assert path == tmp_path / "grid_presets.json" and preset_names(path) == []
    cols = parse_columns('{"name": "renewal", "question": "Renewal date?", "type": "date", '
                         '"instruction": "The first one."}\nWho signed?\n')
    save_preset(path, "  contracts ", cols)
    save_preset(path, "short", cols[:1])
    assert preset_names(path) == ["contracts", "short"]
    assert preset_columns(path, "contracts") == cols
    save_preset(path, "short", cols[1:])                   # the same name: replaced
    assert preset_columns(path, "short") == [Column("Who signed?", "Who signed?")]
    assert json.loads(path.read_text())["version"] == 1


@pytest.mark.parametrize("name, columns, sentence", [
    ("", [Column("a", "A?")], "a column preset needs a name"),
    ("two\nlines", [Column("a", "A?")], "one line of at most 80 characters"),
    ("x" * 81, [Column("a", "A?")], "one line of at most 80 characters"),
    ("empty", [], "needs at least one column"),
])
def test_a_preset_that_cannot_be_saved_says_why(tmp_path, name, columns, sentence):
    path = tmp_path / "grid_presets.json"
    with pytest.raises(PresetError, match=sentence):
        save_preset(path, name, columns)
    assert not path.exists()


def test_an_unknown_or_damaged_preset_is_refused_with_a_sentence(tmp_path):
    path = tmp_path / "grid_presets.json"
    with pytest.raises(PresetError, match=r"no column preset named 'x' \(presets: none saved yet\)"):
        preset_columns(path, "x")
    save_preset(path, "contracts", [Column("a", "A?")])
    with pytest.raises(PresetError, match=r"no column preset named 'x' \(presets: contracts\)"):
        preset_columns(path, "x")
    path.write_text(json.dumps({"presets": {"bad": [{"question": "When?", "type": "colour"}],
                                            "blank": [{"question": "  "}], "none": [],
                                            "twice": [{"question": "A?"}, {"question": "A?"}]}}))
    with pytest.raises(PresetError, match="column preset 'bad' column 1: unknown type 'colour'"):
        preset_columns(path, "bad")
    with pytest.raises(PresetError, match="column preset 'blank' column 1: the question is empty"):
        preset_columns(path, "blank")
    with pytest.raises(PresetError, match="'none' .* has no columns"):
        preset_columns(path, "none")
    with pytest.raises(PresetError, match="column 2: two columns are named 'A\\?'"):
        preset_columns(path, "twice")
    path.write_text("{not json")
    with pytest.raises(PresetError, match="is not valid JSON"):
        preset_names(path)
    with pytest.raises(PresetError, match="is not valid JSON"):     # nothing is overwritten
        save_preset(path, "new", [Column("a", "A?")])
    assert path.read_text() == "{not json"
