#!/usr/bin/env bash
# Runs every test: builds first if needed (set-up is idempotent), then ctest on 2 cores; then
# the sanitizer build: flce's C++ again with ASan + UBSan in build-asan/ (no CUDA, no libFuzzer
# targets, no torch) and its torch-free tests (labels cpu, properties). FLCE_ASAN=0 skips it.
set -euo pipefail
cd "$(dirname "$0")"
bash setup.sh --no-run
rc=0
(cd build && ctest -j "${FLCE_TEST_JOBS:-2}" --output-on-failure --timeout 1500 "$@") || rc=$?

if [[ "${FLCE_ASAN:-1}" != 0 ]]; then
  t0=$(date +%s)
  if [[ ! -f build-asan/build.ninja ]]; then
    cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLCE_SANITIZE=ON -DFLCE_CUDA=OFF \
          -DFLCE_FUZZ=OFF >/dev/null
  fi
  cmake --build build-asan -j "${FLCE_JOBS:-$(nproc)}" | grep -v '^\[' || true
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "[test] sanitizer build failed" >&2; exit 1; }
  t1=$(date +%s)
  asan_rc=0
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     ctest -j "${FLCE_TEST_JOBS:-2}" --output-on-failure --timeout 600 -L 'cpu|properties') || asan_rc=$?
  echo "[test] sanitizers (ASan+UBSan): build $((t1 - t0)) s, tests $(( $(date +%s) - t1 )) s, exit $asan_rc" >&2
  ((rc)) || rc=$asan_rc
fi
exit $rc
