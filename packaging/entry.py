"""The frozen app's entry point: the same `main()` as the `rlm-studio` console
script (GUI without arguments, CLI subcommands, `--repl-worker` for the REPL)."""

import sys


def _multiprocessing_child() -> bool:
    """The ingest pool uses multiprocessing (forkserver): a frozen app starts
    its helper processes as `<exe> ... -c "from multiprocessing..."` or
    `<exe> --multiprocessing-fork ...`, and freeze_support() must run them.
    Checked cheaply so ordinary starts do not import multiprocessing."""
    return "--multiprocessing-fork" in sys.argv or (
        len(sys.argv) >= 3 and sys.argv[-2] == "-c" and sys.argv[-1].startswith("from multiprocessing"))


if __name__ == "__main__":
    if _multiprocessing_child():
        import multiprocessing
        multiprocessing.freeze_support()
    from app.main import main
    sys.exit(main())
