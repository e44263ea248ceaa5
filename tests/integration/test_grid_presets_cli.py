"""`rlm-studio grid` as a real process against the scripted server: columns saved as a
preset and run again from it; the HTML report read back; the Ray address in Settings used
when --ray is not given, --ray winning over it, --local running here."""

import json

import pytest

from tests.integration.test_grid_cli import grid_cmd, run
from tests.support.grid_corpus import COLUMNS, answer_cell, write_columns, write_corpus
from tests.support.grid_html import GridPage


@pytest.mark.timeout(300)
def test_columns_saved_as_a_preset_run_again_from_it_into_an_html_report(server, tmp_path):
    server.script("m", fn=answer_cell)
    write_corpus(tmp_path / "docs", 3)
    write_columns(tmp_path / "cols.jsonl")
    first = run(grid_cmd(server, tmp_path, tmp_path / "grid.csv", "--save-preset", "contracts"), tmp_path)
    assert first.returncode == 0, first.stderr
    assert "saved 3 columns as preset 'contracts'" in first.stderr
    presets = json.loads(next((tmp_path / "home").rglob("grid_presets.json")).read_text())
    assert [c["name"] for c in presets["presets"]["contracts"]] == [c["name"] for c in COLUMNS]

    # --preset: every positional is a PATH; the same columns over the same documents: the same grid.
    (tmp_path / "cols.jsonl").unlink()
    asked = len(server.history)
    cmd = grid_cmd(server, tmp_path, tmp_path / "grid.html", "--preset", "contracts")
    cmd.remove(str(tmp_path / "cols.jsonl"))
    again = run(cmd, tmp_path)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["grid_id"] == json.loads(first.stdout)["grid_id"] and summary["done"] == 9
    assert len(server.history) == asked and summary["output"].endswith("grid.html")

    page = GridPage((tmp_path / "grid.html").read_text(encoding="utf-8"))
    assert "script" not in page.tags
    assert [c.split("done")[0] for c in page.cells[:3]] == ["2025-01-01", "1000", "no"]
    assert all("done · $" in c for c in page.cells) and len(page.cells) == 9
    assert "Renewal date: 2025-01-01" in page.quotes and "Liability cap: $1,000" in page.quotes

    missing = run(grid_cmd(server, tmp_path, tmp_path / "g.csv", "--preset", "nope"), tmp_path, timeout=60)
    assert missing.returncode == 2
    assert "no column preset named 'nope' (presets: contracts)" in missing.stderr
    assert len(server.history) == asked


@pytest.mark.timeout(120)
def test_the_ray_address_in_settings_is_used_unless_ray_or_local_says_otherwise(server, tmp_path):
    server.script("m", fn=answer_cell)
    write_corpus(tmp_path / "docs", 1)
    write_columns(tmp_path / "cols.jsonl", COLUMNS[:1])
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"ray_address": "127.0.0.1:9"}))   # nothing listens on 9

    from_settings = run(grid_cmd(server, tmp_path, tmp_path / "g.csv"), tmp_path, timeout=60)
    assert from_settings.returncode == 2
    assert "cannot run on Ray: the Ray cluster at 127.0.0.1:9 does not answer" in from_settings.stderr

    given = run(grid_cmd(server, tmp_path, tmp_path / "g.csv", "--ray", "127.0.0.1:8"), tmp_path, timeout=60)
    assert given.returncode == 2 and "the Ray cluster at 127.0.0.1:8 does not answer" in given.stderr
    assert server.history == []

    here = run(grid_cmd(server, tmp_path, tmp_path / "g.csv", "--local"), tmp_path)
    assert here.returncode == 0, here.stderr
    assert json.loads(here.stdout)["done"] == 1 and len(server.history) == 1

    both = run(grid_cmd(server, tmp_path, tmp_path / "g.csv", "--local", "--ray", "127.0.0.1:8"), tmp_path)
    assert both.returncode == 2 and "--local and --ray cannot both be given" in both.stderr
