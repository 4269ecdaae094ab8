"""seqk: does a model do better when it retries with feedback (seq@k) than when it samples k
times (pass@k), and at equal budget?

The public surface is `__all__` (seqk.api holds each function). `db` is the second argument
of every function that reads or writes a database. Importing seqk is cheap: it imports neither
litellm nor boto3, and each function loads what it needs when called.
"""

from typing import TYPE_CHECKING, Any

from seqk.version import __version__ as __version__

if TYPE_CHECKING:
    from seqk.api import (
        CellRun,
        SweepRun,
        VariantRun,
        compare,
        compare_by,
        export_parquet,
        export_runs,
        inspect,
        load_variant,
        query,
        report,
        run_sweep,
        run_variant,
        status,
    )

__all__ = ["CellRun", "SweepRun", "VariantRun", "__version__", "compare", "compare_by", "export_parquet",
           "export_runs", "inspect", "load_variant", "report", "query", "run_sweep", "run_variant", "status"]


def __getattr__(name: str) -> Any:
    # The public names resolve on first use, so `import seqk` does not import the engine.
    if name in __all__:
        from seqk import api

        return getattr(api, name)
    raise AttributeError(f"module 'seqk' has no attribute {name!r}")
