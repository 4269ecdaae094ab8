"""The installed seqk's version: stored with every run, printed by `seqk --version`."""

__version__ = "0.1.0"
