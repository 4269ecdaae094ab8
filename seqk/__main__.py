"""The `seqk` console script and `python -m seqk`.

Start-up pauses Python's cyclic garbage collector: importing seqk's libraries and loading a
variant's tasks allocate a few hundred thousand objects and free almost none, so the
collections that the allocations trigger would find nothing and cost ~40 ms of the ~0.5 s
before a run's first request (bench/bench_startup.py). Each command resumes collection
before its real work (seqk.cli.app.resume_gc): every command but `run` as it is invoked,
`run` once its run is registered, just before its first calls.

It also keeps OpenBLAS to one thread (unless OPENBLAS_NUM_THREADS is set), before numpy loads:
the report's estimators run on thread pools of their own (seqk.analysis.frontier BLOCK_THREADS,
metrics ESTIMATE_THREADS), and their small matrix products (2,000 resamples x a few hundred task
types x ~200 features) spun OpenBLAS's threads beside the pool's on the same cores: the 80
equal-budget blocks of the 1M synthetic database took ~30% more CPU for the same figures
(docs/performance.md). A product's every element is summed by one thread in the same order
however many threads share the matrix, so no figure changes.
"""

import gc
import os


def main() -> None:
    """Entry point of the `seqk` console script."""
    gc.disable()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from seqk.cli import main as cli_main

        cli_main()
    finally:
        gc.enable()


if __name__ == "__main__":
    main()
