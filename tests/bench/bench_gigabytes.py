"""Folders of gigabytes through `rlm-studio ask` (issue 26; figures printed, never asserted):

    .venv/bin/python tests/bench/bench_gigabytes.py [--sizes 100,300,1000,2000] [--kinds ascii,wide]
        [--old /tmp/old-tree] [--trees this,old] [--corpora DIR] [--runs 2]

Each corpus is a folder of 1 MB text files, unique per file, with the word ZEBRAFISH planted
once in every tenth file; "wide" puts one character above U+FFFF (an emoji) in three files.
Corpora are generated once into --corpora (default /tmp/rlm-gigabytes) and kept.

Each tree (this one, and --old: a checkout of the branch point, `git worktree add --detach
/tmp/old-tree COMMIT`) runs `ask` twice over the same unchanged folder with a fresh home (so
the second run can take unchanged files back). The scripted root counts the planted word with
one regex over `context` in its first cell and answers in its second. Printed per run, all from
outside the CLI process:
  wall      launch to exit
  first     launch to the first model request (the scripted server's request log)
  count     end of the first root reply to the start of the second: the counting cell
  peak MB   resident memory summed over the CLI's whole process tree (worker, its children,
            ingestion workers), sampled from /proc every 20 ms
  x corpus  that peak over the corpus's UTF-8 size
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.machine import machine_info  # noqa: E402
from tests.bench.server_proc import ServerProcess  # noqa: E402
from tests.support.proc_tree import run_measured  # noqa: E402

FILE_BYTES = 1_000_000
WORD = "ZEBRAFISH"
WIDE_FILES = 3
EMOJI = "\U0001F600"
# Bytes to lowercase letters, with spaces and newlines about where prose has them.
_TABLE = bytes(32 if i % 7 == 0 else 10 if i == 255 else 97 + i % 26 for i in range(256))

COUNT_CELL = ("import re\nn = sum(len(re.findall(r'ZEBRAFISH', c)) for c in "
              "([context] if isinstance(context, str) else context))\nprint(n)")
FINAL_CELL = "FINAL(str(n))"


def _cell(src: str) -> str:
    return f"```repl\n{src}\n```"


def build(folder: Path, files: int, wide: bool) -> int:
    """Write the corpus (unless a finished one is there); returns its UTF-8 size in bytes."""
    done = folder / ".rlmignore"            # written last; also keeps itself out of the corpus
    if done.exists():
        return int(done.read_text().split()[2])
    folder.mkdir(parents=True, exist_ok=True)
    wide_at = {files // (WIDE_FILES + 1) * (k + 1) + 3 for k in range(WIDE_FILES)} if wide else set()
    total = 0
    for i in range(files):
        head = f"file {i:06d}\n".encode()
        body = bytearray(os.urandom(FILE_BYTES - len(head)).translate(_TABLE))
        if i % 10 == 0:
            body[1000:1000 + len(WORD) + 2] = f" {WORD} ".encode()
        if i in wide_at:
            body[5000:5006] = f" {EMOJI} ".encode()
        data = head + bytes(body)
        (folder / f"f{i:06d}.txt").write_bytes(data)
        total += len(data)
    done.write_text(f"# utf8 {total}\n.rlmignore\n")
    return total


def run_ask(tree: Path, server: ServerProcess, folder: Path, home: Path, timeout_s: float) -> dict:
    server.script("root", replies=[_cell(COUNT_CELL), _cell(FINAL_CELL)])
    server.log()                                           # clear
    env = dict(os.environ, RLMSTUDIO_DESKTOP_HOME=str(home), OPENAI_API_KEY="sk-bench", PYTHONPATH=str(tree),
               PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    cmd = [sys.executable, "-m", "app.main", "ask", "How many files hold the planted word?", str(folder),
           "--root", "openai/root", "--sub", "openai/sub", "--api-base", server.url, "--json", "--quiet",
           "--max-wall-seconds", str(int(timeout_s))]
    proc, out, err, started, wall, sampler = run_measured(cmd, timeout_s + 60, cwd=tree, env=env)
    roots = [r for r in server.log() if r["model"].endswith("root")]
    try:
        data = json.loads(out)
        answer = data.get("answer")
        status = data.get("status") + (f": {str(data.get('error'))[:70]}" if data.get("error") else "")
    except ValueError:
        answer, status = None, f"exit {proc.returncode}: {err.strip().splitlines()[-1:] or out[:200]}"
    return {"wall": wall, "first": roots[0]["started"] - started if roots else None,
            "count": (roots[1]["started"] - roots[0]["finished"]) if len(roots) > 1 else None,
            "peak_mb": sampler.peak_kb / 1024, "answer": answer, "status": status}


def _f(value: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,300,1000,2000", help="corpus sizes in MB")
    parser.add_argument("--kinds", default="ascii,wide")
    parser.add_argument("--old", default="/tmp/old-tree", help="the branch point's tree ('' for none)")
    parser.add_argument("--corpora", default="/tmp/rlm-gigabytes")
    parser.add_argument("--runs", type=int, default=2, help="runs per tree over the same folder")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--trees", default="this,old", help="which trees run: this, old or both")
    args = parser.parse_args()
    wanted = args.trees.split(",")
    trees = ([("this", ROOT)] if "this" in wanted else []) + \
        ([("old", Path(args.old))] if "old" in wanted and args.old and Path(args.old).exists() else [])
    info = machine_info()
    print(f"{info['cpus']} cpus, {info['cpu']}, {info['memory_gb']} GB RAM, python {info['python']}")
    print("| corpus | tree | run | wall s | first request s | count s | peak MB | x corpus | answer | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with ServerProcess() as server:
        for size in (int(s) for s in args.sizes.split(",")):
            for kind in args.kinds.split(","):
                folder = Path(args.corpora) / f"{size}mb-{kind}"
                utf8 = build(folder, size, kind == "wide")
                expected = str(len(range(0, size, 10)))
                for name, tree in trees:
                    with tempfile.TemporaryDirectory(prefix="rlm-gb-home-") as home:
                        for run in range(1, args.runs + 1):
                            r = run_ask(tree, server, folder, Path(home), args.timeout)
                            ok = "right" if r["answer"] == expected else f"WRONG ({r['answer']!r}, {r['status']})"
                            print(f"| {size} MB {kind} | {name} | {run} | {r['wall']:.1f} | {_f(r['first'])} | "
                                  f"{_f(r['count'])} | {r['peak_mb']:,.0f} | {r['peak_mb'] * 2**20 / utf8:.2f} | "
                                  f"{ok} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
