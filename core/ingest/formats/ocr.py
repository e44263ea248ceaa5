"""OCR with tesseract (Apache-2.0), found on the system at run time and called as a
subprocess, one page at a time, from the ingest workers.

Why tesseract and not an ONNX OCR wheel: rapidocr-onnxruntime (Apache-2.0) needs
onnxruntime (a 27.8 MB wheel, 75.7 MB installed), opencv-python and numpy, which
the bundle's 250 MB budget cannot hold (it is at 243 MiB); tesseract costs the
bundle nothing, is the reference for printed text, and runs one page per core.
See docs/documents.md, "Scanned pages (OCR)".

    text = recognize(pgm_bytes, "eng")          # raises ExtractError when it cannot
    pgm = gray_pgm(pil_image)

The subprocess gets one thread (OMP_THREAD_LIMIT=1: the workers already run one
per core), no inherited environment beyond PATH/TESSDATA_PREFIX, and on Linux it
dies with its worker (PR_SET_PDEATHSIG), so cancelling an ingestion stops it too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from core.ingest.model import NO_TEXT, TIMEOUT, UNSUPPORTED, ExtractError

TESSERACT_ENV = "RLM_TESSERACT"      # path of the tesseract executable, if not on PATH
PAGE_TIMEOUT_S = 120.0
INSTALL_HINT = ("install tesseract (Debian/Ubuntu: apt install tesseract-ocr; macOS: "
                "brew install tesseract; Windows: the UB Mannheim installer) or set "
                f"{TESSERACT_ENV} to its path")


def find_tesseract() -> str | None:
    named = os.environ.get(TESSERACT_ENV)
    if named:
        return named if os.path.isfile(named) and os.access(named, os.X_OK) else None
    return shutil.which("tesseract")


def languages(exe: str | None = None) -> tuple[str, ...]:
    """The languages the tesseract found has (`tesseract --list-langs`), () when it has none
    or cannot be asked."""
    exe = exe or find_tesseract()
    if exe is None:
        return ()
    try:
        done = subprocess.run([exe, "--list-langs"], capture_output=True, timeout=10,
                              env={"PATH": os.environ.get("PATH", ""),
                                   **({"TESSDATA_PREFIX": os.environ["TESSDATA_PREFIX"]}
                                      if os.environ.get("TESSDATA_PREFIX") else {})})
    except (OSError, subprocess.TimeoutExpired):
        return ()
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    return tuple(line.strip() for line in lines[1:] if line.strip() and " " not in line.strip())


def require_tesseract() -> str:
    found = find_tesseract()
    if found is None:
        raise ExtractError(UNSUPPORTED, f"OCR is on but tesseract was not found: {INSTALL_HINT}")
    return found


def recognize(image: bytes, language: str = "eng", timeout_s: float = PAGE_TIMEOUT_S) -> str:
    """Text of one page image (any format tesseract reads; PGM is the cheapest)."""
    exe = require_tesseract()
    env = {"OMP_THREAD_LIMIT": "1", "PATH": os.environ.get("PATH", "")}
    if os.environ.get("TESSDATA_PREFIX"):
        env["TESSDATA_PREFIX"] = os.environ["TESSDATA_PREFIX"]
    try:
        done = subprocess.run([exe, "stdin", "stdout", "-l", language, "--psm", "3"],
                              input=image, capture_output=True, timeout=timeout_s, env=env,
                              preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    except subprocess.TimeoutExpired:
        raise ExtractError(TIMEOUT, f"tesseract still busy after {timeout_s:g} s on one page"
                           ) from None
    except OSError as exc:
        raise ExtractError(UNSUPPORTED, f"cannot run tesseract ({exe}): {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        if "Failed loading language" in message or "Could not initialize" in message:
            raise ExtractError(UNSUPPORTED, f"tesseract has no {language!r} language data "
                                            f"(install tesseract-ocr-{language.split('+')[0]})")
        last = message.splitlines()[-1] if message else f"exit code {done.returncode}"
        raise ExtractError(NO_TEXT, f"tesseract failed: {last[:300]}")
    return _clean(done.stdout.decode("utf-8", "replace"))


def gray_pgm(image) -> bytes:
    """A PIL image as 8-bit grayscale PGM bytes (no compression to spend time on)."""
    gray = image if image.mode == "L" else image.convert("L")
    return b"P5\n%d %d\n255\n" % gray.size + gray.tobytes()


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\f", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    return "\n".join(lines).strip("\n")


def _die_with_parent() -> None:     # pragma: no cover - runs in the child before exec
    import ctypes
    import signal
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)    # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
