"""The window on the three screens analysts have: tests/gui/on_screen.py run in its own
process per screen size (a Qt process has one set of screens), the offscreen platform
given that screen through `offscreen:configfile=` (Qt's qoffscreenintegration.cpp reads
{"screens": [{"name", "x", "y", "width", "height"}]})."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def screen_config(tmp_path: Path, width: int, height: int) -> str:
    path = tmp_path / f"screen-{width}x{height}.json"
    path.write_text(json.dumps({"screens": [{"name": f"screen{width}", "x": 0, "y": 0,
                                             "width": width, "height": height}]}))
    return str(path)


@pytest.mark.timeout(400)
@pytest.mark.parametrize("size", [(1024, 700), (1366, 768), (1920, 1080)])
def test_the_window_fits_the_screen(size, tmp_path):
    width, height = size
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screen_config(tmp_path, width, height)}",
           "RLM_TEST_SCREEN": f"{width}x{height}"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                           "tests/gui/on_screen.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=380)
    assert proc.returncode == 0, f"at {width}x{height}:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    assert re.search(r"\b2 passed", proc.stdout), proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
