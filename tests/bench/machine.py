"""What machine a benchmark ran on (printed with every table)."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata


def machine_info() -> dict:
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions = {}
    for pkg in ("litellm", "PySide6-Essentials", "sqlite-utils", "pypdfium2"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": sys.version.split()[0],
            "platform": platform.platform(), "packages": versions}
