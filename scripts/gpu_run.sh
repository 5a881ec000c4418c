#!/usr/bin/env bash
# Run THERE (the GPU box, repository root, one device call): offline build + tests + bench.
# Needs .carry/ from scripts/gpu_prepare.sh. Writes at most 8 files to $OUT:
#   setup.log  build.log  ctest_gpu.log  bench.log  bench.csv  bench_liger.log  ctest_all.log  summary.txt
# Order: build the CUDA reference targets, run the GPU tests, full build, bench, then the
# rest of ctest, so a slow torch build or suite cannot crowd the GPU work out of the
# device call. Every step is recorded; the summary is printed last. Env knobs:
#   FLCE_DEADLINE_S (default 570: whole-script budget, s)  FLCE_BENCH_ARGS (extra flce_bench args)
#   FLCE_CTEST_ARGS (extra ctest args for the full run)    FLCE_JOBS (default nproc)
#   FLCE_BUILD_DIR (default build)     FLCE_BENCH_BUDGETS (default "384 1536": extra --budget-mib rows)
#   FLCE_CTEST_JOBS (default 8)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
CARRY=$ROOT/.carry
OUT=${OUT:-$ROOT/out}
mkdir -p "$OUT"
T0=$(date +%s)
DEADLINE=${FLCE_DEADLINE_S:-570}
JOBS=${FLCE_JOBS:-$(nproc)}
BUILD=${FLCE_BUILD_DIR:-build}
declare -a SUMMARY=()
FAILED=0
record() {  # record NAME STATUS DETAIL
  SUMMARY+=("$(printf '%-14s %-6s %s' "$1" "$2" "$3")")
  [[ $2 == ok || $2 == skip ]] || FAILED=1
}
left() {  # seconds left, at least 1 (timeout 0 would mean "no limit")
  local l=$((DEADLINE - ($(date +%s) - T0)))
  echo $((l > 0 ? l : 1))
}
finish() {
  {
    echo "== flce gpu_run summary ($(($(date +%s) - T0)) s) =="
    printf '%s\n' "${SUMMARY[@]}"
    ((FAILED)) && echo "RESULT: FAILED (see the logs named above in \$OUT)" || echo "RESULT: OK"
  } | tee "$OUT/summary.txt"
  exit $FAILED
}

# ---- setup: environment, liger wheel, configure ----
{
  echo "## $(date -u)"; uname -a
  nvidia-smi -L 2>&1 || echo "nvidia-smi: unavailable"
  command -v nvcc && nvcc --version | tail -2
  cmake --version | head -1; ninja --version; g++ --version | head -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
} >"$OUT/setup.log" 2>&1
[[ -d $CARRY/root ]] || { record carry FAIL ".carry/root missing: run scripts/gpu_prepare.sh on the build host"; finish; }

WHEEL=$(find "$CARRY" -maxdepth 2 -name 'liger_kernel-0.8.5-*.whl' 2>/dev/null | sort | head -1)
SITE=/tmp/site
if [[ -n $WHEEL ]] && python3 -m pip install -q --no-index --no-deps --target "$SITE" --upgrade "$WHEEL" >>"$OUT/setup.log" 2>&1; then
  export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
  record liger ok "$(basename "$WHEEL") -> $SITE"
else
  record liger FAIL "liger wheel ${WHEEL:-not found in .carry} did not install (setup.log)"
fi

TORCH_PREFIX=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>>"$OUT/setup.log")
# The box's default /opt/gcc g++ links libstdc++ statically; the embedded Python host must
# share libtorch's shared libstdc++ (see cmake/FlceTorch.cmake), so prefer the system g++.
CXX_FLAGS=()
if [[ -x /usr/bin/g++ ]]; then
  CXX_FLAGS=(-DCMAKE_CXX_COMPILER=/usr/bin/g++ -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++)
fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
     -DFLCE_PYTHON="$(command -v python3)" \
     -DCMAKE_PREFIX_PATH="$CARRY/root/usr;$TORCH_PREFIX" \
     "${CXX_FLAGS[@]}" -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES=90 -DFLCE_CUDA_ARCHITECTURES=90 \
     -DFLCE_FUZZER_RUNTIME_DIR="$CARRY/libfuzzer" >>"$OUT/setup.log" 2>&1; then
  record configure ok "torch cmake: $TORCH_PREFIX"
else
  record configure FAIL "cmake configure failed (setup.log tail below)"
  tail -25 "$OUT/setup.log"
  finish
fi

# ---- build: the CUDA reference targets first, so a slow torch build cannot starve them ----
if timeout "$(left)" cmake --build "$BUILD" -j "$JOBS" --target flce_gpu_tests flce_gpu_properties flce_bench >"$OUT/build.log" 2>&1; then
  record build_cuda ok "flce_gpu_tests flce_gpu_properties flce_bench"
else
  record build_cuda FAIL "CUDA reference targets failed to build (build.log; first errors below)"
  grep -n -m 20 -E "error:|undefined reference|FAILED:" "$OUT/build.log"
fi

# ---- GPU reference tests ----
TESTS=$( [[ -d $BUILD ]] && cd "$BUILD" && ctest -N 2>/dev/null)  # no `| grep -q`: SIGPIPE under pipefail
if [[ $TESTS == *"gpu_reference"* ]]; then
  if (cd "$BUILD" && timeout "$(left)" ctest -V -R '^gpu_reference') >"$OUT/ctest_gpu.log" 2>&1; then
    record gpu_tests ok "$(grep -oE '\[  (PASSED|SKIPPED) \] [0-9]+ tests?' "$OUT/ctest_gpu.log" | tr '\n' ' ')"
  else
    record gpu_tests FAIL "ctest -R gpu_reference (ctest_gpu.log): $(grep -m 8 -E '\[  FAILED  \]|Not Run|Could not find|Exception|SEGFAULT' "$OUT/ctest_gpu.log" | tr '\n' ' ')"
  fi
else
  record gpu_tests FAIL "gpu_reference test not registered (is FLCE_CUDA on? setup.log)"
fi

echo "## full build" >>"$OUT/build.log"
# -k 0: keep building other targets past a failure, so their tests can still run.
if timeout "$(left)" cmake --build "$BUILD" -j "$JOBS" -- -k 0 >>"$OUT/build.log" 2>&1; then
  record build_all ok "ninja -j$JOBS"
else
  record build_all FAIL "full build failed or timed out (build.log; first errors below)"
  grep -n -m 20 -E "error:|undefined reference|FAILED:" "$OUT/build.log"
fi

# ---- bench: the CLI verb if it exists, else the standalone driver ----
BENCH=()
HELP=$( [[ -x $BUILD/flce ]] && "$BUILD/flce" --help 2>/dev/null)
if [[ $HELP =~ (^|[[:space:]])bench([[:space:]]|$) ]]; then
  BENCH=("$BUILD/flce" bench)
else
  B=$(find "$BUILD" -name flce_bench -type f -perm -u+x 2>/dev/null | head -1)
  [[ -n $B ]] && BENCH=("$B" --csv "$OUT/bench.csv")
fi
if ((${#BENCH[@]})); then
  # shellcheck disable=SC2086
  if timeout "$(left)" "${BENCH[@]}" ${FLCE_BENCH_ARGS:-} >"$OUT/bench.log" 2>&1; then
    record bench ok "${BENCH[*]}"
    # The memory/time trade-off at the largest shape: a lean and a generous chunk budget.
    for mib in ${FLCE_BENCH_BUDGETS:-384 1536}; do
      echo "## --budget-mib $mib" >>"$OUT/bench.log"
      timeout "$(left)" "${BENCH[@]}" --shape 8192x4096x128256 --budget-mib "$mib" --no-phases >>"$OUT/bench.log" 2>&1
    done
  else
    record bench FAIL "${BENCH[*]} (bench.log)"
  fi
  cat "$OUT/bench.log"
else
  record bench FAIL "no bench executable was built"
fi
if [[ -f scripts/bench_liger.py ]]; then  # Liger / naive torch timings (written by others)
  if timeout "$(left)" python3 scripts/bench_liger.py >"$OUT/bench_liger.log" 2>&1; then
    record bench_liger ok "scripts/bench_liger.py"
  else
    record bench_liger FAIL "scripts/bench_liger.py (bench_liger.log)"
  fi
  tail -30 "$OUT/bench_liger.log"
fi

# ---- the differential loop on Liger itself (issue evidence: seed case, default, workaround) ----
if [[ -x $BUILD/flce ]] && (($(left) > 60)); then
  {
    "$BUILD/flce" env
    for spec in "liger-seed-bf16-accum-fp32 liger" "liger-seed-bf16-accum-fp32 liger+workaround" \
                "liger-bf16-default liger" "seed-raw-addmm-dtype-out aten-dtype-out"; do
      set -- $spec
      c=corpus/cases/$1.json
      [[ $2 == aten-dtype-out ]] && { python3 - "$c" >/tmp/cuda_case.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["device"] = "cuda"; print(json.dumps(d))
PY
      c=/tmp/cuda_case.json; }
      echo "=== flce run $1 --subject $2"
      timeout 120 "$BUILD/flce" run "$c" --subject "$2"; echo "exit $?"
    done
  } >"$OUT/flce_runs.log" 2>&1
  record flce_runs ok "flce_runs.log: $(grep -c '^outcome' "$OUT/flce_runs.log") runs"
  grep -E '^(=== |outcome|first failing|reference-cuda|eager  |compiled)' "$OUT/flce_runs.log" | cut -c1-160
fi

# ---- everything else ----
if [[ -d $BUILD ]] && (($(left) > 20)); then
  # shellcheck disable=SC2086
  (cd "$BUILD" && timeout "$(left)" ctest -j "${FLCE_CTEST_JOBS:-8}" --output-on-failure -E '^gpu_reference' ${FLCE_CTEST_ARGS:-}) >"$OUT/ctest_all.log" 2>&1
  rc=$?
  tot=$(grep -E 'tests passed|tests failed' "$OUT/ctest_all.log" | tail -1)
  if ((rc == 0)); then
    record ctest_all ok "$tot"
  else
    ((rc == 124)) && tot="timed out after the deadline; $tot"
    record ctest_all FAIL "$tot; failing: $(grep -E '^\s+[0-9]+ - ' "$OUT/ctest_all.log" | tr -s ' ' | tr '\n' ';')"
  fi
else
  record ctest_all FAIL "no time left (deadline ${DEADLINE}s) or no build"
fi
finish
