#!/usr/bin/env bash
# The H200 GPU machine's check: install the carried wheels, show the machine, run `pytest -m gpu`
# and the benchmark suite. Results go to $OUT (the device tool's folder), else ./gpu-results.
# How to call it through the device tool, and how to fetch the wheels: docs/gpu-check.md.
#
# Environment:
#   GPU_CHECK_TESTS=0     skip pytest -m gpu tests/gpu
#   GPU_CHECK_BENCH=0     skip the benchmarks
#   BENCH_ARGS="..."      extra arguments for benchmarks/run.py (e.g. "--sizes large --dtypes float32 --budget-s 300")
#   STITCHLAB_COMMIT=...  commit id to record (the device machine's copy of the tree has no .git)
#   PYTEST_ARGS="..."     extra arguments for pytest (with pytest-xdist it runs -n 8 unless these set -n)
#   GPU_CHECK_NOTEBOOKS=1 also run examples/*.ipynb in Jupyter kernels (scripts/run-notebooks.py)
#                         into $OUT/notebooks/ and $OUT/notebooks.log; NOTEBOOK_BACKEND (cupy) is
#                         the stitchlab backend each notebook must use
#   GPU_CHECK_SWEEP="float16:layernorm,adam;float32@1024,128256:logsumexp"
#                         also time every schedule of these workloads (benchmarks/kernel_sweep.py),
#                         at 8192 x 4096 or at the shape after "@"
#   GPU_CHECK_RANDOM=1    also time random draws and dropout against CuPy and torch
#                         (benchmarks/random_dropout.py) into $OUT/random/
#   GPU_CHECK_PROBES="vectorize fast_math"
#                         also run these side-by-side probes (benchmarks/<name>.py, each against
#                         CuPy, torch and torch.compile) into $OUT/<name>/ and $OUT/<name>.log;
#                         "all": assignment convolve fast_math int8_ops scans stencil stencil_steps
#                         tall_columns ufunc_at vectorize (random_dropout: GPU_CHECK_RANDOM)
#   GPU_CHECK_FUZZ=S      also run random programs against NumPy (tests/fuzzgraphs.py) for S seconds,
#                         one process per entry of FUZZ_RUNS (default: two mixed, wide, reductions,
#                         assign, at, rows, bfloat16, capture), seeds from FUZZ_FIRST (default 10000000) on,
#                         a million apart; their logs one after another in $OUT/fuzz.log
#   GPU_CHECK_NCU=a,b     also profile these workloads' stitchlab kernels with Nsight Compute
#                         (large, --clock-control none) into $OUT/ncu.txt; NCU_TIMEOUT_S (90),
#                         NCU_DTYPE (float32), NCU_SECTIONS ("SpeedOfLight LaunchStats Occupancy")
set -u -o pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
OUT="${OUT:-$REPO/gpu-results}"
mkdir -p "$OUT"
export STITCHLAB_CACHE_DIR="${STITCHLAB_CACHE_DIR:-/tmp/stitchlab-cache}"

step() { printf '\n=== %s (%s) ===\n' "$1" "$(date -u +%H:%M:%S)"; }

# 1. wheels carried in .whl/, the stitchlab package shim, PYTHONPATH, a neutral cwd, the commit
#    (shared with x2-check.sh)
step "install carried wheels"
# shellcheck source=scripts/device-env.sh
source "$REPO/scripts/device-env.sh" || exit 2

# 2. the machine
step "machine"
{
    echo "commit: $COMMIT   date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    nvidia-smi
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
    python3 -m stitchlab info
    python3 -c 'import stitchlab, stitchlab.registry as r; print("stitchlab from", stitchlab.__file__, "| registry from", r.__file__)'
    python3 -c 'import cupy, torch, numpy; print("cupy", cupy.__version__, "torch", torch.__version__, "numpy", numpy.__version__)'
} 2>&1 | tee "$OUT/machine.txt"

rc_tests=0
rc_bench=0
# 3. GPU tests: every test marked gpu in tests/gpu and tests/compiler (the compiler's GPU checks
#    sit beside its source-level ones)
if [ "${GPU_CHECK_TESTS:-1}" != "0" ]; then
    # eight processes where pytest-xdist is there (carried in .whl/) and PYTEST_ARGS picks no -n: one
    # process can outlast the device call's 600 s
    parallel=""
    case " ${PYTEST_ARGS:-} " in *" -n "*|*" -n="*|*" --numprocesses"*) ;; *) python3 -c "import xdist" 2>/dev/null && parallel="-n 8" ;; esac
    step "pytest -m gpu tests/gpu tests/compiler $parallel"
    # shellcheck disable=SC2086
    python3 -m pytest -m gpu "$REPO/tests/gpu" "$REPO/tests/compiler" -q -p no:cacheprovider -c "$REPO/pyproject.toml" \
        --rootdir "$REPO" --junitxml="$OUT/junit-gpu.xml" $parallel ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest-gpu.log"
    rc_tests=$?
fi

# 3b. optional: the example notebooks, top to bottom in Jupyter kernels (nbclient + ipykernel, one
# kernel each), as CI runs them on the CPU; the Jupyter packages travel as wheels in .whl/. The
# executed notebooks (outputs, widget state) go to $OUT/notebooks/. Where no kernel can run (exit 2,
# the cause printed), the same cells run in-process for information, and the check still fails.
rc_nb=0
if [ "${GPU_CHECK_NOTEBOOKS:-0}" != "0" ]; then
    step "notebooks (expected backend: ${NOTEBOOK_BACKEND:-cupy})"
    python3 "$REPO/scripts/run-notebooks.py" --expect-backend "${NOTEBOOK_BACKEND:-cupy}" \
        --out "$OUT/notebooks" "$REPO"/examples/*.ipynb 2>&1 | tee "$OUT/notebooks.log"
    rc_nb=$?
    if [ "$rc_nb" = "2" ]; then
        step "notebooks in-process (no Jupyter kernel: see the cause above)"
        python3 "$REPO/scripts/run-notebooks.py" --in-process --expect-backend "${NOTEBOOK_BACKEND:-cupy}" \
            "$REPO"/examples/*.ipynb 2>&1 | tee -a "$OUT/notebooks.log"
    fi
fi

# 3c. optional: a fuzz campaign on new seeds, one process per family (the GPU tests run fixed seeds)
rc_fuzz=0
if [ -n "${GPU_CHECK_FUZZ:-}" ]; then
    runs="${FUZZ_RUNS:-mixed mixed wide reductions assign at rows bfloat16 capture}"
    step "fuzz for ${GPU_CHECK_FUZZ} s: $runs"
    first="${FUZZ_FIRST:-10000000}"
    k=0
    pids=()
    for run in $runs; do
        case "$run" in
            bfloat16) extra=(--dtypes bfloat16,bfloat16,float32,int32,bool) ;;
            capture) extra=(--capture) ;;
            *) extra=(--family "$run") ;;
        esac
        python3 "$REPO/tests/fuzzgraphs.py" $((first + k * 1000000)) 1000000 --budget-s "$GPU_CHECK_FUZZ" "${extra[@]}" \
            > "/tmp/fuzz-$k-$run.log" 2>&1 &
        pids+=($!)
        k=$((k + 1))
    done
    for pid in "${pids[@]}"; do wait "$pid" || rc_fuzz=1; done
    # one file (the device tool brings back few): each process's log under its name
    for log in /tmp/fuzz-*.log; do printf '\n### %s\n' "$(basename "$log")"; cat "$log"; done > "$OUT/fuzz.log"
    tail -qn 1 /tmp/fuzz-*.log
fi

# 4. optional: Nsight Compute over stitchlab's kernels of a few workloads (clocks left alone)
if [ -n "${GPU_CHECK_NCU:-}" ]; then
    step "ncu: $GPU_CHECK_NCU"
    NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)"
    if [ -n "$NCU" ]; then
        timeout "${NCU_TIMEOUT_S:-90}" "$NCU" --clock-control none --profile-from-start off -k regex:^sl_ \
            $(for s in ${NCU_SECTIONS:-SpeedOfLight LaunchStats Occupancy}; do printf -- '--section %s ' "$s"; done) \
            python3 "$REPO/benchmarks/ncu_profile.py" --workloads "$GPU_CHECK_NCU" \
            --dtype "${NCU_DTYPE:-float32}" 2>&1 | tee "$OUT/ncu.txt"
    else
        echo "ncu not found" | tee "$OUT/ncu.txt"
    fi
fi

# 5. benchmarks: results.json, results.md, results.png (matplotlib is on the machine's image)
rc_random=0
if [ "${GPU_CHECK_RANDOM:-0}" != "0" ]; then
    step "random draws and dropout"
    python3 "$REPO/benchmarks/random_dropout.py" --out "$OUT/random" --commit "$COMMIT" 2>&1 | tee "$OUT/random.log"
    rc_random=$?
fi

rc_probes=0
if [ -n "${GPU_CHECK_PROBES:-}" ]; then
    probes="$GPU_CHECK_PROBES"
    [ "$probes" = "all" ] && probes="assignment convolve fast_math int8_ops scans stencil stencil_steps tall_columns ufunc_at vectorize"
    for probe in $probes; do
        step "probe $probe"
        if [ ! -f "$REPO/benchmarks/$probe.py" ]; then
            echo "no benchmarks/$probe.py (GPU_CHECK_PROBES names the scripts without .py)" | tee "$OUT/$probe.log"
            rc_probes=1
            continue
        fi
        python3 "$REPO/benchmarks/$probe.py" --out "$OUT/$probe" --commit "$COMMIT" 2>&1 | tee "$OUT/$probe.log" || rc_probes=1
    done
fi

if [ -n "${GPU_CHECK_SWEEP:-}" ]; then
    # schedule sweeps (benchmarks/kernel_sweep.py): "dtype[@rows,cols]:workload,workload;..."
    IFS=';' read -r -a sweeps <<<"$GPU_CHECK_SWEEP"
    for entry in "${sweeps[@]}"; do
        dt="${entry%%:*}"; wls="${entry#*:}"; shape="8192,4096"
        if [ "${dt#*@}" != "$dt" ]; then shape="${dt#*@}"; dt="${dt%%@*}"; fi
        step "schedule sweep $dt $shape: $wls"
        python3 "$REPO/benchmarks/kernel_sweep.py" --dtype "$dt" --shape "$shape" --workloads "$wls" \
            --out "$OUT/sweep-$dt-${shape/,/x}" 2>&1 | tee -a "$OUT/sweep.log"
    done
fi

if [ "${GPU_CHECK_BENCH:-1}" != "0" ]; then
    step "benchmarks"
    # shellcheck disable=SC2086
    python3 "$REPO/benchmarks/run.py" --out "$OUT" --commit "$COMMIT" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log"
    rc_bench=$?
    if [ "$rc_bench" != "0" ] && [ -f "$OUT/results.json" ]; then
        # a run stopped part way still leaves its JSON: make the markdown from what is there
        python3 "$REPO/benchmarks/report.py" "$OUT/results.json" --out "$OUT/results.md" --png "$OUT/results.png" || true
    fi
fi

step "done: tests rc=$rc_tests, notebooks rc=$rc_nb, fuzz rc=$rc_fuzz, random rc=$rc_random, probes rc=$rc_probes, benchmarks rc=$rc_bench; results in $OUT"
ls -la "$OUT"
[ "$rc_tests" = "0" ] && [ "$rc_nb" = "0" ] && [ "$rc_fuzz" = "0" ] && [ "$rc_random" = "0" ] && [ "$rc_probes" = "0" ] && [ "$rc_bench" = "0" ]
