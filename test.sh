#!/usr/bin/env bash
# Runs every test: builds first if needed (set-up is idempotent), then ctest on 2 cores; beside
# them, in the background, the sanitizer build: flce's C++ again with ASan + UBSan in build-asan/
# (no CUDA, no libFuzzer targets, no torch) and its torch-free tests (labels cpu, properties).
# FLCE_ASAN=0 skips it.
# Ends with where the time went (set-up steps, each ctest label, the sanitizer build and tests).
set -euo pipefail
cd "$(dirname "$0")"
T0=$(date +%s)
declare -a SPLIT=()
split() { SPLIT+=("$(printf '%-30s %6s' "$1" "$2")"); }
# The sanitizer build needs only the Debian packages (no torch): it starts as soon as they are
# there, niced, and fills the CPUs while pip downloads the torch wheel; its torch-free tests
# (labels cpu, properties) follow it in the same background job.
bash setup.sh --packages
ASAN=${FLCE_ASAN:-1}
asan_log=$PWD/build-asan/job.log
if [[ $ASAN != 0 ]]; then
  mkdir -p build-asan
  rm -f build-asan/job.status
  (
    t=$(date +%s)
    if [[ ! -f build-asan/build.ninja ]]; then
      # -O0 -g1: nothing optimised away before the sanitizers see it, line tables for their
      # reports. Unity batches of 8, as the main build: that every source also compiles alone
      # is ctest `compile_alone`'s proof (-fsyntax-only per source, a third of the cost of
      # building file by file here, which this job did until 2026-12-05; issue #38).
      cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" \
            -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 -DFLCE_SANITIZE=ON -DFLCE_CUDA=OFF -DFLCE_FUZZ=OFF \
            >/dev/null
    fi
    nice -n 19 cmake --build build-asan -j "${FLCE_JOBS:-$(nproc)}" | grep -v '^\[' || true
    rc=${PIPESTATUS[0]}
    build_s=$(( $(date +%s) - t ))
    t=$(date +%s)
    test_rc=1
    if [[ $rc -eq 0 ]]; then
      test_rc=0
      (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
         nice -n 19 ctest -j "${FLCE_TEST_JOBS:-2}" --output-on-failure --timeout 600 -L 'cpu|properties') || test_rc=$?
    fi
    echo "$rc $build_s $test_rc $(( $(date +%s) - t ))" >build-asan/job.status
  ) >"$asan_log" 2>&1 &
  asan_pid=$!
fi

bash setup.sh --no-run
[[ -f build/setup-times.txt ]] && while IFS= read -r l; do SPLIT+=("$l"); done <build/setup-times.txt

# Longest tests first on a fresh clone too: ctest orders by the costs it measured last time, and
# a fresh build has none, so a recorded set is copied in (scheduling only; every test runs).
mkdir -p build/Testing/Temporary
[[ -f build/Testing/Temporary/CTestCostData.txt ]] || cp tests/ctest_costs.txt build/Testing/Temporary/CTestCostData.txt
# One Inductor cache for the whole run, emptied first: the tests compile the same few corpus
# graphs over and over, and each campaign would otherwise start its own cold cache. Failing
# compiles are never cached, so every trace-time error is still raised where a test expects it.
export TORCHINDUCTOR_CACHE_DIR=$PWD/build/test-inductor-cache
rm -rf "$TORCHINDUCTOR_CACHE_DIR"
# Two tests at a time on 2 cores: one thread each. The cases are tiny, so torch's intra-op
# threads only contend, and Inductor's compile pool (a process per core, each importing torch)
# costs more to start than the few kernels a test compiles. Campaign workers already get both
# from their share of the CPUs (WorkerLaunch); this sets them for flce run/repro/gate too.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-1}
rc=0
t=$(date +%s)
(cd build && ctest -j "${FLCE_TEST_JOBS:-2}" --output-on-failure --timeout 1500 "$@") 2>&1 | tee build/ctest.log || true
grep -q "100% tests passed" build/ctest.log || rc=1
split "ctest (wall)" "$(( $(date +%s) - t )) s"
# ctest's own per-label sums (processes x seconds, two at a time).
while read -r label secs _; do
  [[ $label =~ ^[a-z]+$ ]] && split "  label $label (sum)" "$secs s"
done < <(sed -n '/^Label Time Summary:/,/^$/p' build/ctest.log | tail -n +2 | sed 's/=//')

if [[ $ASAN != 0 ]]; then
  wait "$asan_pid" || true
  cat "$asan_log" >&2
  read -r build_rc build_s asan_rc asan_s <build-asan/job.status || { build_rc=1; build_s=?; asan_rc=1; asan_s=?; }
  [[ $build_rc -eq 0 ]] || { echo "[test] sanitizer build failed" >&2; exit 1; }
  split "sanitizer build (background)" "$build_s s"
  split "sanitizer tests (background)" "$asan_s s"
  ((rc)) || rc=$asan_rc
fi
split "total" "$(( $(date +%s) - T0 )) s"
{
  echo "[test] where the time went:"
  printf '  %s\n' "${SPLIT[@]}"
  echo "[test] exit $rc"
} >&2
exit $rc
