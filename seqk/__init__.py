"""seqk: does a model do better when it retries with feedback (seq@k) than when
it samples k times (pass@k)?

Importing seqk is cheap: it imports neither litellm nor boto3.
"""

from typing import Any

from seqk.version import __version__ as __version__


def __getattr__(name: str) -> Any:
    # seqk.run_variant and seqk.load_variant without importing the engine on `import seqk`.
    if name in ("run_variant", "load_variant"):
        from seqk import api

        return getattr(api, name)
    raise AttributeError(f"module 'seqk' has no attribute {name!r}")
