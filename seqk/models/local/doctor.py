"""`seqk doctor`: does this machine's llama.cpp build run the embedded model? Loads it in
a fresh worker process, generates a few tokens, and reports the build's CPU features,
this CPU's, and, when the worker dies, the cause and the rebuild command.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from seqk.errors import LocalModelCrashed, MissingExtra
from seqk.models.local.workers import REBUILD, check, cores, generate, start_worker

NATIVE_ONLY_FEATURES = ("AVX512", "AMX", "AVX_VNNI")
"""Features in a build's system info that a portable build leaves out: their presence means
a native build, which can die on another CPU or on a VM that hides them."""


def native_features(system_info: str) -> list[str]:
    """The features of a build's system info that only a native build enables."""
    return sorted({m.group(1) for m in re.finditer(r"(\w+) = 1", system_info)
                   if m.group(1).startswith(NATIVE_ONLY_FEATURES)})


def cpu_flags() -> list[str]:
    """This CPU's flags that decide which llama.cpp builds can run here (Linux only)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    match = re.search(r"^flags\s*:(.*)$", text, re.MULTILINE)
    wanted = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni", "amx_tile", "amx_int8")
    return [f for f in wanted if match and f in match.group(1).split()]


@dataclass
class DoctorReport:
    """What `seqk doctor` found about one local model."""

    model: str
    ok: bool
    message: str
    path: str | None = None
    llama_cpp_python: str | None = None
    build_features: str | None = None
    native_features: list[str] = field(default_factory=list)
    cpu_flags: list[str] = field(default_factory=list)
    load_s: float | None = None
    output_tokens: int | None = None
    tokens_per_s: float | None = None
    text: str | None = None


def doctor(model: str = "local/smollm2-135m", max_tokens: int = 16) -> DoctorReport:
    """Load `model` in a fresh worker, generate a few tokens, and say whether this build
    of llama.cpp runs here (and if not, why and how to fix it). Never raises for a crash."""
    report = DoctorReport(model=model, ok=False, message="", cpu_flags=cpu_flags())
    start = time.perf_counter()
    try:
        report.path = str(check(model))
        worker = start_worker(model, cores())
    except (MissingExtra, LocalModelCrashed) as exc:
        report.message = str(exc)
        return report
    report.load_s = time.perf_counter() - start
    report.llama_cpp_python = worker.info.get("llama_cpp_python")
    report.build_features = worker.info.get("system_info")
    report.native_features = native_features(report.build_features or "")
    try:
        began = time.perf_counter()
        data = generate(worker, "Count from one to ten.", max_tokens)
        elapsed = time.perf_counter() - began
        report.output_tokens = int(data["usage"]["completion_tokens"])
        report.tokens_per_s = report.output_tokens / elapsed if elapsed > 0 else None
        report.text = data["choices"][0]["message"]["content"]
        report.ok = True
        report.message = "the embedded model loads and generates in a worker process"
        if report.native_features:
            report.message += (f"; note: this is a native build ({', '.join(report.native_features)}),"
                               f" which may not run on other CPUs: {REBUILD}")
    except LocalModelCrashed as exc:
        report.message = str(exc)
    finally:
        worker.kill()
    return report
