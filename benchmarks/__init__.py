"""Benchmarks: one folder each; see seqk/benchmark.py for the contract."""
