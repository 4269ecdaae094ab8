"""Packaging glue that pyproject.toml cannot express: sql/ ships as seqk.sql.

Benchmarks are found by folder, so adding one is adding a folder.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["seqk", "seqk.*", "benchmarks", "benchmarks.*"]) + ["seqk.sql"],
    package_dir={"seqk.sql": "sql"},
)
