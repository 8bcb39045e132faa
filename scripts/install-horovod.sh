#!/usr/bin/env bash
# Builds Horovod 0.28.1 from its PyPI source: Gloo + PyTorch on the CPU by default, or with NCCL
# for CUDA GPUs (opt-in, below).
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
#
# Opt-in environment (none of it is set by `make install` or CI):
#   HOROVOD_SDIST=FILE          build from this horovod-0.28.1.tar.gz instead of downloading it; the
#                               build is then offline: nothing is installed from an index, and the
#                               build and runtime dependencies must already be there
#   STITCHLAB_HOROVOD_NCCL=1    build the GPU operations with NCCL (HOROVOD_GPU_OPERATIONS=NCCL) for
#                               a CUDA build of torch: nvcc from CUDA_HOME or PATH, NCCL from
#                               HOROVOD_NCCL_HOME (include/ and lib/) or else the nvidia-nccl-cu* wheel
#                               next to torch; HOROVOD_BUILD_CUDA_CC_LIST defaults to 90 (Hopper)
#   STITCHLAB_HOROVOD_TARGET=DIR  pip install --target DIR (for a system-wide python); put DIR on
#                               PYTHONPATH and DIR/bin on PATH to use it
#   HOROVOD_WORKDIR=DIR         unpack and build in DIR and keep it (default: a temporary folder)
#   STITCHLAB_HOROVOD_DRY_RUN=1 unpack and patch the source, print the build environment, stop
#                               before building
set -euo pipefail

HOROVOD_VERSION=0.28.1
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:-$REPO_ROOT/.venv/bin/python}"
CONSTRAINTS="$REPO_ROOT/constraints.txt"
SDIST_GIVEN="${HOROVOD_SDIST:-}"
NCCL="${STITCHLAB_HOROVOD_NCCL:-0}"
TARGET="${STITCHLAB_HOROVOD_TARGET:-}"
DRY_RUN="${STITCHLAB_HOROVOD_DRY_RUN:-0}"

die() {
    echo "install-horovod.sh: error: $*" >&2
    exit 1
}

[ -x "$PY" ] || die "python '$PY' not found or not executable; pass the venv's python, e.g. .venv/bin/python"
case "$NCCL" in 0 | 1) ;; *) die "STITCHLAB_HOROVOD_NCCL=$NCCL; expected 0 or 1" ;; esac
if [ -n "$SDIST_GIVEN" ]; then
    [ -f "$SDIST_GIVEN" ] || die "HOROVOD_SDIST=$SDIST_GIVEN is not a file; download it with: python3 -m pip download --no-deps --no-binary :all: horovod==$HOROVOD_VERSION -d .sdist"
    SDIST_GIVEN="$(cd "$(dirname "$SDIST_GIVEN")" && pwd)/$(basename "$SDIST_GIVEN")"
fi
if [ -n "$TARGET" ]; then
    mkdir -p "$TARGET" || die "cannot create STITCHLAB_HOROVOD_TARGET=$TARGET"
    TARGET="$(cd "$TARGET" && pwd)"
    export PYTHONPATH="$TARGET${PYTHONPATH:+:$PYTHONPATH}"
fi

# What "already built" means: horovod.torch imports (and, for the NCCL build, has NCCL; with a
# target folder, from that folder).
CHECK='import horovod.torch as h'
[ "$NCCL" = 1 ] && CHECK="$CHECK; assert h.nccl_built()"
[ -n "$TARGET" ] && CHECK="$CHECK; import os; assert os.path.realpath(h.__file__).startswith('$TARGET/')"
if [ "$DRY_RUN" != 1 ] && "$PY" -c "$CHECK" >/dev/null 2>&1; then
    echo "install-horovod.sh: horovod.torch already importable with $PY${TARGET:+ (from $TARGET)}; nothing to do"
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
INSTALL_TO=()
[ -n "$TARGET" ] && INSTALL_TO=(--target "$TARGET" --upgrade)

start=$(date +%s)
echo "install-horovod.sh: building horovod==$HOROVOD_VERSION for $PY (torch $("$PY" -c 'import torch; print(torch.__version__)'))${TARGET:+ into $TARGET}"

if [ -z "$SDIST_GIVEN" ]; then
    "${PIP[@]}" install -q "${PIN[@]}" "cmake>=3.13" setuptools wheel \
        cloudpickle psutil pyyaml packaging
else
    # offline: say what is missing instead of asking an index for it
    command -v cmake >/dev/null 2>&1 || die "cmake is not on PATH (HOROVOD_SDIST builds offline; pip install cmake first)"
    "$PY" -c 'import setuptools, wheel, cloudpickle, psutil, yaml, packaging' \
        || die "a build or runtime dependency of Horovod is missing (setuptools, wheel, cloudpickle, psutil, pyyaml, packaging)"
fi

if [ -n "${HOROVOD_WORKDIR:-}" ]; then
    WORK="$HOROVOD_WORKDIR"
    mkdir -p "$WORK"
else
    WORK="$(mktemp -d "${TMPDIR:-/tmp}/horovod-build.XXXXXX")"
    trap 'rm -rf "$WORK"' EXIT
fi

if [ -n "$SDIST_GIVEN" ]; then
    SDIST="$SDIST_GIVEN"
else
    "${PIP[@]}" download -q --no-deps --no-binary :all: -d "$WORK" "horovod==$HOROVOD_VERSION"
    SDIST="$WORK/horovod-$HOROVOD_VERSION.tar.gz"
fi
[ -f "$SDIST" ] || die "pip download did not produce $SDIST (found: $(ls "$WORK"))"
SRC="$WORK/horovod-$HOROVOD_VERSION"
rm -rf "$SRC"
tar -xzf "$SDIST" -C "$WORK"
[ -d "$SRC" ] || die "$SDIST did not unpack to $SRC; is it the horovod $HOROVOD_VERSION sdist?"

for f in "$SRC/CMakeLists.txt" "$SRC/horovod/torch/CMakeLists.txt"; do
    grep -q 'set(CMAKE_CXX_STANDARD 14)' "$f" \
        || die "$f has no 'set(CMAKE_CXX_STANDARD 14)' to patch; the sdist differs from the one this script expects"
    sed -i 's/set(CMAKE_CXX_STANDARD 14)/set(CMAKE_CXX_STANDARD 17)/' "$f"
done

# Python 3.12 has no distutils (only setuptools' shim, when it is installed the usual way).
# Horovod uses it twice: the torch build asks distutils.sysconfig for Python's include folder,
# and horovodrun imports distutils.spawn.find_executable (jsrun support). Both have exact
# standard-library equivalents; patch only where distutils is missing.
if ! "$PY" -c 'import distutils.sysconfig, distutils.spawn' >/dev/null 2>&1; then
    echo "install-horovod.sh: no distutils in $PY: using sysconfig and shutil.which instead"
    sed -i 's/from distutils.sysconfig import get_python_inc; print(get_python_inc())/import sysconfig; print(sysconfig.get_paths()[\x27include\x27])/' \
        "$SRC/horovod/torch/CMakeLists.txt"
    sed -i 's/^from distutils.spawn import find_executable$/from shutil import which as find_executable/' \
        "$SRC/horovod/runner/js_run.py"
    ! grep -q distutils "$SRC/horovod/torch/CMakeLists.txt" "$SRC/horovod/runner/js_run.py" \
        || die "could not patch distutils out of Horovod's source"
fi

# Offline (HOROVOD_SDIST), setuptools would try to download Horovod's setup_requires; all are
# already installed (checked above) except cffi, a leftover requirement of Horovod's pre-1.0
# PyTorch API that no code in 0.28.1 imports. Drop it where it is missing.
if [ -n "$SDIST_GIVEN" ] && ! "$PY" -c 'import cffi' >/dev/null 2>&1; then
    grep -q "require_list.append('cffi>=1.4.0')" "$SRC/setup.py" \
        || die "$SRC/setup.py has no cffi requirement to drop; the sdist differs from the one this script expects"
    sed -i "s/require_list.append('cffi>=1.4.0')/pass  # cffi: unused by horovod 0.28.1 (install-horovod.sh)/" "$SRC/setup.py"
    echo "install-horovod.sh: no cffi in $PY: dropped Horovod's unused cffi requirement"
fi

# GCC 13 and later no longer include <cstdint>, <string>, <cstdio>, <cstdlib> and <system_error>
# through other standard headers, and <stdexcept> goes with them. Horovod 0.28.1 relies on that
# (seen with GCC 13.3: std::string in horovod/common/group_table.h, std::logic_error in
# common.h, std::invalid_argument in torch/handle_manager.cc), as may the bundled gloo
# (uint8_t). Force-include them into every C++ file rather than patch the sources one by one.
gcc_major="$(c++ -dumpversion 2>/dev/null | cut -d. -f1)"
if [ "${gcc_major:-0}" -ge 13 ] 2>/dev/null; then
    for h in cstdint cstdio cstdlib string stdexcept system_error; do
        CXXFLAGS="${CXXFLAGS:-} -include $h"
    done
    export CXXFLAGS
fi

export CMAKE_POLICY_VERSION_MINIMUM=3.5
export HOROVOD_WITH_PYTORCH=1 HOROVOD_WITH_GLOO=1
export HOROVOD_WITHOUT_MPI=1 HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1
export HOROVOD_CPU_OPERATIONS=gloo
export MAKEFLAGS="-j$(nproc 2>/dev/null || echo 2)"

if [ "$NCCL" = 1 ]; then
    if ! "$PY" -c 'import torch, sys; sys.exit(torch.version.cuda is None)'; then
        msg="STITCHLAB_HOROVOD_NCCL=1 needs a CUDA build of torch; $PY has torch $("$PY" -c 'import torch; print(torch.__version__)')"
        [ "$DRY_RUN" = 1 ] || die "$msg"
        echo "install-horovod.sh: warning (dry run goes on): $msg"
    fi
    # CUDA: the toolkit that holds nvcc (CUDA_HOME, else nvcc on PATH, resolved through links:
    # some images put a wrapper script on PATH that execs the real nvcc).
    NVCC=""
    [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ] && NVCC="$CUDA_HOME/bin/nvcc"
    [ -z "$NVCC" ] && NVCC="$(command -v nvcc || true)"
    [ -n "$NVCC" ] || die "no nvcc: set CUDA_HOME to the CUDA toolkit or put nvcc on PATH"
    NVCC="$(readlink -f "$NVCC")"
    if ! head -c 4 "$NVCC" | grep -q 'ELF'; then
        # a wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`): take the nvcc it execs
        real="$(grep -o '/[^ "]*/bin/nvcc' "$NVCC" | head -n 1 || true)"
        [ -n "$real" ] && [ -x "$real" ] || die "$NVCC is not a program and names no other nvcc; set CUDA_HOME"
        NVCC="$(readlink -f "$real")"
    fi
    export CUDA_HOME="$(dirname "$(dirname "$NVCC")")"
    export HOROVOD_CUDA_HOME="$CUDA_HOME"
    export PATH="$CUDA_HOME/bin:$PATH"
    # NCCL: the nvidia-nccl-cu* wheel (what torch itself loads) holds include/nccl.h and
    # lib/libnccl.so.2 only; CMake's find_library looks for libnccl.so, so link a copy of the
    # layout with that name in the work folder. Linking the same libnccl.so.2 torch uses keeps
    # one NCCL in the process.
    if [ -z "${HOROVOD_NCCL_HOME:-}" ]; then
        HOROVOD_NCCL_HOME="$("$PY" -c 'import nvidia.nccl as n, os; print(list(n.__path__)[0])' 2>/dev/null || true)"
        [ -n "$HOROVOD_NCCL_HOME" ] || die "no NCCL: set HOROVOD_NCCL_HOME (a folder with include/nccl.h and lib/libnccl.so*) or install the nvidia-nccl-cu* wheel"
    fi
    [ -f "$HOROVOD_NCCL_HOME/include/nccl.h" ] || die "$HOROVOD_NCCL_HOME/include/nccl.h not found (HOROVOD_NCCL_HOME)"
    NCCL_SO="$(ls "$HOROVOD_NCCL_HOME"/lib/libnccl.so* 2>/dev/null | head -n 1 || true)"
    [ -n "$NCCL_SO" ] || die "no libnccl.so* in $HOROVOD_NCCL_HOME/lib (HOROVOD_NCCL_HOME)"
    NCCL_LINKS="$WORK/nccl"
    mkdir -p "$NCCL_LINKS/lib"
    ln -sfn "$HOROVOD_NCCL_HOME/include" "$NCCL_LINKS/include"
    ln -sf "$(readlink -f "$NCCL_SO")" "$NCCL_LINKS/lib/libnccl.so"
    ln -sf "$(readlink -f "$NCCL_SO")" "$NCCL_LINKS/lib/$(basename "$NCCL_SO")"
    export HOROVOD_NCCL_HOME="$NCCL_LINKS"
    export HOROVOD_NCCL_INCLUDE="$NCCL_LINKS/include" HOROVOD_NCCL_LIB="$NCCL_LINKS/lib"
    export HOROVOD_NCCL_LINK=SHARED        # the wheel has no libnccl_static.a
    export HOROVOD_GPU_OPERATIONS=NCCL
    # Horovod compiles its CUDA kernels for every architecture `nvcc --help` lists unless told;
    # CUDA 13 has dropped the old ones Horovod's CMake would otherwise also pass. 90 = Hopper.
    export HOROVOD_BUILD_CUDA_CC_LIST="${HOROVOD_BUILD_CUDA_CC_LIST:-90}"
    # The NCCL library must be found at run time too: torch loads the wheel's libnccl.so.2 by
    # its folder; Horovod's extension records this folder as its RUNPATH (below).
    export LDFLAGS="${LDFLAGS:-} -Wl,-rpath,$(dirname "$(readlink -f "$NCCL_SO")")"
    echo "install-horovod.sh: NCCL build: $NVCC ($("$NVCC" --version | tail -n 1)), NCCL $NCCL_SO, CUDA archs $HOROVOD_BUILD_CUDA_CC_LIST"
fi

if [ "$DRY_RUN" = 1 ]; then
    echo "install-horovod.sh: dry run: patched source in $SRC; would build with:"
    env | grep -E '^(HOROVOD_|CMAKE_POLICY|CUDA_HOME|LDFLAGS|CXXFLAGS)' | sort | sed 's/^/  /'
    echo "  pip install --no-build-isolation --no-deps --force-reinstall --no-cache-dir ${INSTALL_TO[*]:-} $SRC"
    exit 0
fi

OFFLINE=()
[ -n "$SDIST_GIVEN" ] && OFFLINE=(--no-index)
# --no-deps: the runtime dependencies are installed above; pip must not touch torch.
"${PIP[@]}" install -q --no-build-isolation --no-deps --force-reinstall --no-cache-dir \
    "${OFFLINE[@]}" "${PIN[@]}" "${INSTALL_TO[@]}" "$SRC" \
    || die "building horovod $HOROVOD_VERSION failed (see the compiler output above)"

STITCHLAB_HOROVOD_NCCL="$NCCL" "$PY" - <<'PYTHON' || die "horovod installed but 'import horovod.torch' fails (see above)"
import os
import horovod.torch as hvd
assert hvd.gloo_built(), "horovod was built without Gloo"
if os.environ["STITCHLAB_HOROVOD_NCCL"] == "1":
    assert hvd.nccl_built(), "horovod was built without NCCL"
print("install-horovod.sh: horovod", __import__("horovod").__version__, "gloo_built:", hvd.gloo_built(),
      "nccl_built:", hvd.nccl_built())
PYTHON
RUNNER="$BIN_DIR/horovodrun"
[ -n "$TARGET" ] && RUNNER="$TARGET/bin/horovodrun"
[ -x "$RUNNER" ] || die "horovodrun missing from $(dirname "$RUNNER") after the install"
echo "install-horovod.sh: done in $(( $(date +%s) - start )) s"
