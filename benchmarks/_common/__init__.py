"""Helpers shared by several benchmarks; the underscore keeps this folder out of the registry."""
