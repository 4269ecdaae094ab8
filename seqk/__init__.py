"""seqk: does a model do better when it retries with feedback (seq@k) than when
it samples k times (pass@k)?

Importing seqk is cheap: it imports neither litellm nor boto3.
"""

__version__ = "0.1.0"
