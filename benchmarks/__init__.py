"""Benchmarks: one folder each; see seqk/benchmark/contract.py for the contract."""
