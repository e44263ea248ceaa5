"""What machine a benchmark ran on (printed with every table)."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

PACKAGES = ("litellm", "PySide6-Essentials", "qasync", "sqlite-utils", "pypdfium2", "pypdf", "httpx",
            "aiohttp")


def memory_gb() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


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
    for pkg in PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    import sqlite3
    return {"cpus": os.cpu_count(), "cpu": cpu, "memory_gb": memory_gb(), "python": sys.version.split()[0],
            "platform": platform.platform(), "sqlite": sqlite3.sqlite_version, "packages": versions,
            "loadavg": [round(x, 2) for x in os.getloadavg()]}
