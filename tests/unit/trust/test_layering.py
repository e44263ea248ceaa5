import subprocess
import sys

MODULES = ["citations", "coverage", "verify", "fork", "compare", "preview", "results", "manifest", "record",
           "replay", "rebuild"]


def test_trust_modules_import_neither_qt_nor_app_nor_litellm():
    code = ("import sys\n" + "".join(f"import core.trust.{m}\n" for m in MODULES) +
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync', 'app', 'ui', 'litellm'))\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
