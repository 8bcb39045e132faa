# Shared set-up for the scripts that run on the lent GPU machines (gpu-check.sh, x2-check.sh).
# Source it with REPO (the repository root) set; it
#
#   * installs the wheels carried in .whl/ (diskcache, ...) into $SITE (/tmp/site),
#   * builds $SHIM (/tmp/stitchlab-shim): setup.py maps registry/, topology/, compression/ to
#     stitchlab.registry etc., which a plain PYTHONPATH=<repo> cannot see, so the same package
#     tree is made of symlinks,
#   * exports PYTHONPATH=$SITE:$SHIM:$REPO, PYTHONUNBUFFERED=1 and STITCHLAB_COMMIT (from the
#     environment, else git, else "unknown": the device machine's copy has no .git),
#   * changes to a neutral directory, $RUNDIR (default /tmp/gpu-check-cwd): `python3 -m` puts the
#     current directory first on sys.path, where the repo's unmapped stitchlab/ would hide the shim.
#
# Returns 2 (the caller decides whether to stop) when the carried wheels do not install.
# shellcheck shell=bash

SITE="${SITE:-/tmp/site}"
SHIM="${SHIM:-/tmp/stitchlab-shim}"
RUNDIR="${RUNDIR:-/tmp/gpu-check-cwd}"
export PYTHONUNBUFFERED=1

device_env_rc=0
cd "$REPO" || return 2
# 1. wheels carried in .whl/ (diskcache and any other pure-Python package the machine lacks)
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" .whl/*.whl || { echo "wheel install failed"; device_env_rc=2; }
    ls .whl
else
    echo "no .whl/*.whl carried: stitchlab.registry needs diskcache (see docs/gpu-check.md)"
fi

# 2. the stitchlab package as setup.py lays it out, made of symlinks
rm -rf "$SHIM" && mkdir -p "$SHIM/stitchlab"
for f in stitchlab/* stitchlab/.[!.]*; do
    [ -e "$f" ] && ln -s "$REPO/$f" "$SHIM/stitchlab/$(basename "$f")"
done
for d in registry topology compression; do
    [ -d "$d" ] && [ ! -e "$SHIM/stitchlab/$d" ] && ln -s "$REPO/$d" "$SHIM/stitchlab/$d"
done
export PYTHONPATH="$SITE:$SHIM:$REPO${PYTHONPATH:+:$PYTHONPATH}"

COMMIT="${STITCHLAB_COMMIT:-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
export STITCHLAB_COMMIT="$COMMIT"

mkdir -p "$RUNDIR"
cd "$RUNDIR" || return 2
return "$device_env_rc"
