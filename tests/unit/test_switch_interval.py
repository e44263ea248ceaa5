"""core/switch_interval.py: the lowest interval asked for, restored when nobody asks."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import sys
sys.setswitchinterval(0.005)
from core import switch_interval as si
seen = []
with si.at_most(0.001):                 # litellm's import starts first
    seen.append(sys.getswitchinterval())
    si.keep_at_most(0.002)              # the window's engine thread meanwhile
    seen.append(sys.getswitchinterval())
seen.append(sys.getswitchinterval())    # the import ended: the window's 2 ms stays
with si.at_most(0.003):                 # a higher request lowers nothing
    seen.append(sys.getswitchinterval())
print(seen)
"""


def test_holds_and_keeps_combine_to_the_lowest_and_the_window_keeps_its_own():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}).stdout
    assert out.strip() == "[0.001, 0.001, 0.002, 0.002]"
