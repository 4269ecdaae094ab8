"""The `seqk` console script and `python -m seqk`.

Start-up pauses Python's cyclic garbage collector: importing seqk's libraries and loading a
variant's tasks allocate a few hundred thousand objects and free almost none, so the
collections that the allocations trigger would find nothing and cost ~40 ms of the ~0.5 s
before a run's first request (bench/bench_startup.py). Each command resumes collection
before its real work (seqk.cli.app.resume_gc): every command but `run` as it is invoked,
`run` once its run is registered, just before its first calls.
"""

import gc


def main() -> None:
    """Entry point of the `seqk` console script."""
    gc.disable()
    try:
        from seqk.cli import main as cli_main

        cli_main()
    finally:
        gc.enable()


if __name__ == "__main__":
    main()
