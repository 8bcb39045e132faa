#!/usr/bin/env bash
# The 2-GPU machine's check (device kind nvidia-h200-x2): Horovod built with NCCL, the iteration
# simulator against real NCCL data-parallel steps, and plain Horovod against stitchlab's planner.
# How to call it through the device tool: docs/distributed.md ("Two H200 GPUs").
#
# Phases, each time-bounded and independent (a failed phase does not stop the next; the whole
# script keeps within X2_BUDGET_S seconds):
#   machine     nvidia-smi (and topo -m), versions, discovered topology      -> machine.txt
#   validate    python -m stitchlab.topology.validation --backend nccl (DDP) -> validation-ddp.json
#   build       scripts/install-horovod.sh with STITCHLAB_HOROVOD_NCCL=1 from .sdist/ into
#               /tmp/horovod-site                                           -> horovod-build.log
#   hvd-check   horovodrun --check-build; a 2-rank NCCL all-reduce/all-gather that checks its sums
#   bench       benchmarks/horovod_step.py --device cuda (wide, narrow, wide:8192) -> horovod-step.json
#   validate-hvd  the validation with Horovod over NCCL                      -> validation-horovod.json
# then results.json (everything above, plus each phase's exit status and seconds) and a table.
# The whole output is also in x2-check.log. Results go to $OUT (the device tool's folder), else
# ./x2-results.
#
# Environment:
#   STITCHLAB_COMMIT=abc1234  commit to record (the device machine's copy has no .git)
#   X2_BUDGET_S=540           seconds for the whole script (phases that would start later are skipped)
#   X2_PHASES="..."           which phases to run (default: all, in the order above)
#   X2_VALIDATE_ARGS="..."    arguments of the validation runs (default below)
#   X2_BENCH_ARGS="..."       arguments of horovod_step.py (default below)
# Carry .whl (diskcache) and .sdist (horovod-0.28.1.tar.gz) with the call.
set -u -o pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$REPO/x2-results}"
mkdir -p "$OUT"
BUDGET_S="${X2_BUDGET_S:-540}"
T0=$(date +%s)
PHASES="${X2_PHASES:-machine validate build hvd-check bench validate-hvd}"
VALIDATE_ARGS="${X2_VALIDATE_ARGS:---np 2 --topology h200-2gpu --width 8192 --depth 8 --batch 64 --steps 15 --warmup 3}"
BENCH_ARGS="${X2_BENCH_ARGS:---np 2 --device cuda --threads 4 --steps 30 --warmup 8 --models wide,narrow,wide:8192}"
HVD_SITE=/tmp/horovod-site
PHASE_LOG=/tmp/x2-phases.tsv
: >"$PHASE_LOG"

# NVLink multicast stays off in every process started here (horovodrun passes the environment on).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

exec > >(tee -a "$OUT/x2-check.log") 2>&1

step() { printf '\n=== %s (%s, %d s in) ===\n' "$1" "$(date -u +%H:%M:%S)" "$(( $(date +%s) - T0 ))"; }
wanted() { case " $PHASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# phase NAME LIMIT_S COMMAND...: runs COMMAND under timeout (its process group is killed at the
# limit), never past the script's budget, and records NAME, exit status and seconds.
phase() {
    local name="$1" limit="$2" start rc left
    shift 2
    wanted "$name" || return 0
    left=$(( BUDGET_S - ($(date +%s) - T0) - 10 ))
    [ "$limit" -gt "$left" ] && limit="$left"
    if [ "$limit" -lt 20 ]; then
        step "$name: skipped, $left s of the budget left"
        printf '%s\tskipped\t0\n' "$name" >>"$PHASE_LOG"
        return 0
    fi
    step "$name (at most $limit s)"
    start=$(date +%s)
    timeout -k 5 "$limit" "$@"
    rc=$?
    [ "$rc" = 124 ] && echo "$name: stopped at its limit of $limit s"
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(( $(date +%s) - start ))" >>"$PHASE_LOG"
    return 0
}

step "set-up"
# shellcheck source=scripts/device-env.sh
source "$REPO/scripts/device-env.sh" || echo "the carried wheels did not install: stitchlab.registry will not import"
export PYTHONPATH="$HVD_SITE:$PYTHONPATH"
export PATH="$HVD_SITE/bin:$PATH"
PY="$(command -v python3)"
export PY

machine() {
    echo "commit: $STITCHLAB_COMMIT   date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')   cores: $(nproc)"
    nvidia-smi
    nvidia-smi topo -m
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv
    echo "python3: $PY"
    "$PY" -c 'import sys, torch, numpy; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())), "gpus", torch.cuda.device_count(), "numpy", numpy.__version__)'
    "$PY" -c 'import nvidia.nccl as n; print("nccl wheel:", list(n.__path__))' || true
    echo "nvcc: $(command -v nvcc) $(nvcc --version | tail -n 1)"
    echo "cmake: $(command -v cmake) $(cmake --version | head -n 1)   c++: $(c++ --version | head -n 1)"
    env | grep -E '^(NCCL_|TORCH_SYMM|NVSHMEM_)' | sort
    "$PY" -m stitchlab topology discover --json
}

hvd_check() {
    horovodrun --check-build || return 1
    cat >/tmp/x2-hvd-nccl.py <<'PYTHON'
import os

import horovod.torch as hvd
import torch

hvd.init()
torch.cuda.set_device(hvd.local_rank())
n, p = 1 << 22, hvd.size()
summed = hvd.allreduce(torch.full((n,), float(hvd.rank() + 1), device="cuda"), op=hvd.Sum)
gathered = hvd.allgather(torch.full((3, 2), float(hvd.rank()), device="cuda"))
ok = bool(torch.all(summed == p * (p + 1) / 2)) and gathered[:, 0].tolist() == [
    float(r) for r in range(p) for _ in range(3)]
print(f"rank {hvd.rank()} of {p}: GPU {torch.cuda.current_device()}, nccl_built {hvd.nccl_built()}, "
      f"all-reduce and all-gather {'right' if ok else 'WRONG'}, "
      f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}")
raise SystemExit(0 if ok else 1)
PYTHON
    # NCCL_DEBUG=INFO shows that NCCL (not Gloo) moved the GPU tensors, and its version
    local rc
    NCCL_DEBUG=INFO horovodrun --gloo -np 2 -H localhost:2 "$PY" /tmp/x2-hvd-nccl.py >/tmp/x2-hvd-nccl.log 2>&1
    rc=$?
    grep -E 'rank [0-9] of|NCCL version|Channel 00|NVLS|rror' /tmp/x2-hvd-nccl.log | head -n 20
    [ "$rc" = 0 ] || tail -n 30 /tmp/x2-hvd-nccl.log
    return "$rc"
}

build_horovod() {
    HOROVOD_SDIST="$REPO/.sdist/horovod-0.28.1.tar.gz" STITCHLAB_HOROVOD_NCCL=1 \
        STITCHLAB_HOROVOD_TARGET="$HVD_SITE" bash "$REPO/scripts/install-horovod.sh" "$PY" \
        >"$OUT/horovod-build.log" 2>&1
}

export REPO OUT HVD_SITE
export -f machine hvd_check build_horovod   # timeout runs programs: the phases below run them through bash -c
wanted machine && phase machine 60 bash -c machine 2>&1 | tee "$OUT/machine.txt"
# shellcheck disable=SC2086
phase validate 210 "$PY" -m stitchlab.topology.validation --backend nccl $VALIDATE_ARGS --repeat 3 \
    --raw --json "$OUT/validation-ddp.json"
phase build 260 bash -c build_horovod
wanted build && tail -n 25 "$OUT/horovod-build.log"
phase hvd-check 90 bash -c hvd_check
# shellcheck disable=SC2086
phase bench 150 "$PY" "$REPO/benchmarks/horovod_step.py" $BENCH_ARGS --json "$OUT/horovod-step.json"
# shellcheck disable=SC2086
phase validate-hvd 150 "$PY" -m stitchlab.topology.validation --backend nccl --horovod $VALIDATE_ARGS \
    --repeat 2 --raw --json "$OUT/validation-horovod.json"

step "summary"
"$PY" "$REPO/scripts/x2_summary.py" "$OUT" "$PHASE_LOG"
