#!/usr/bin/env bash
# Builds Horovod 0.28.1 (Gloo + PyTorch, CPU) from its PyPI source into a virtual environment.
#
#   bash scripts/install-horovod.sh [PYTHON]      # PYTHON defaults to .venv/bin/python
#
# Horovod 0.28.1 is the last release; it needs two changes to build against current PyTorch
# (DESIGN.md section 5): C++17 instead of C++14 in CMakeLists.txt and horovod/torch/CMakeLists.txt,
# and CMAKE_POLICY_VERSION_MINIMUM=3.5 so that CMake 4 accepts its old cmake_minimum_required.
# It is built with --no-build-isolation against the torch already in the environment, which is
# never replaced (every pip call passes -c constraints.txt).
#
# Build dependencies installed into the environment: cmake (from PyPI), setuptools, wheel.
# Runtime dependencies of Horovod: cloudpickle, psutil, pyyaml, packaging.
# The system needs a C++17 compiler (g++ >= 9) and make.
#
# Idempotent: exits at once when `import horovod.torch` already works. Fails loudly on any error.
set -euo pipefail

HOROVOD_VERSION=0.28.1
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:-$REPO_ROOT/.venv/bin/python}"
CONSTRAINTS="$REPO_ROOT/constraints.txt"

die() {
    echo "install-horovod.sh: error: $*" >&2
    exit 1
}

[ -x "$PY" ] || die "python '$PY' not found or not executable; pass the venv's python, e.g. .venv/bin/python"

if "$PY" -c 'import horovod.torch' >/dev/null 2>&1; then
    echo "install-horovod.sh: horovod.torch already importable with $PY; nothing to do"
    exit 0
fi

"$PY" -c 'import torch' >/dev/null 2>&1 \
    || die "torch is not installed in $PY's environment; run 'make install' (pip install -c constraints.txt -e '.[dev]') first"
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 \
    || die "no C++ compiler on PATH; install one (Debian: apt-get install g++ make)"
command -v make >/dev/null 2>&1 || die "make is not on PATH; install it (Debian: apt-get install make)"

BIN_DIR="$(dirname "$PY")"
export PATH="$BIN_DIR:$PATH"     # the cmake installed below lands here
PIP=("$PY" -m pip --disable-pip-version-check)
PIN=()
[ -f "$CONSTRAINTS" ] && PIN=(-c "$CONSTRAINTS")

start=$(date +%s)
echo "install-horovod.sh: building horovod==$HOROVOD_VERSION for $PY (torch $("$PY" -c 'import torch; print(torch.__version__)'))"

"${PIP[@]}" install -q "${PIN[@]}" "cmake>=3.13" setuptools wheel \
    cloudpickle psutil pyyaml packaging

WORK="$(mktemp -d "${TMPDIR:-/tmp}/horovod-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

"${PIP[@]}" download -q --no-deps --no-binary :all: -d "$WORK" "horovod==$HOROVOD_VERSION"
SDIST="$WORK/horovod-$HOROVOD_VERSION.tar.gz"
[ -f "$SDIST" ] || die "pip download did not produce $SDIST (found: $(ls "$WORK"))"
tar -xzf "$SDIST" -C "$WORK"
SRC="$WORK/horovod-$HOROVOD_VERSION"

for f in "$SRC/CMakeLists.txt" "$SRC/horovod/torch/CMakeLists.txt"; do
    grep -q 'set(CMAKE_CXX_STANDARD 14)' "$f" \
        || die "$f has no 'set(CMAKE_CXX_STANDARD 14)' to patch; the sdist differs from the one this script expects"
    sed -i 's/set(CMAKE_CXX_STANDARD 14)/set(CMAKE_CXX_STANDARD 17)/' "$f"
done

export CMAKE_POLICY_VERSION_MINIMUM=3.5
export HOROVOD_WITH_PYTORCH=1 HOROVOD_WITH_GLOO=1
export HOROVOD_WITHOUT_MPI=1 HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1
export HOROVOD_CPU_OPERATIONS=gloo
export MAKEFLAGS="-j$(nproc 2>/dev/null || echo 2)"

# --no-deps: the runtime dependencies are installed above; pip must not touch torch.
"${PIP[@]}" install -q --no-build-isolation --no-deps --force-reinstall --no-cache-dir "${PIN[@]}" "$SRC" \
    || die "building horovod $HOROVOD_VERSION failed (see the compiler output above)"

"$PY" - <<'EOF' || die "horovod installed but 'import horovod.torch' fails (see above)"
import horovod.torch as hvd
assert hvd.gloo_built(), "horovod was built without Gloo"
print("install-horovod.sh: horovod", __import__("horovod").__version__, "gloo_built:", hvd.gloo_built())
EOF
[ -x "$BIN_DIR/horovodrun" ] || die "horovodrun missing from $BIN_DIR after the install"
echo "install-horovod.sh: done in $(( $(date +%s) - start )) s"
