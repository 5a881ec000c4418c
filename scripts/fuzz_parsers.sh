#!/usr/bin/env bash
# Volume fuzzing of flce's own parsers under ASan+UBSan with clang's real coverage: one
# libFuzzer target per parser (fuzz/CMakeLists.txt flce_parser_fuzzer). Builds build-fuzz/
# with clang-14 (CUDA and torch off, fmt header-only so the binaries need only libc,
# libstdc++, libm and libgcc_s of a stock Debian 12 / Ubuntu 24.04), then runs each target
# for N executions and prints execs, exec/s, final cov:/ft:, corpus size and wall time.
#
#   scripts/fuzz_parsers.sh [--runs N] [--fork K | --jobs K] [--targets "a b"] [--max-len N]
#                           [--max-time S] [--out DIR] [--bin DIR | --build-only] [--bundle DIR]
#
#   --runs N      executions per target (default 1000000; with --fork/--jobs: in total)
#   --max-time S  also stop each target after S seconds (-max_total_time; 0: no limit)
#   --fork K      libFuzzer -fork=K (K worker processes; crashes are collected, fuzzing goes on)
#   --jobs K      libFuzzer -jobs=K -workers=K (K independent runs of N/K executions each)
#   --bin DIR     run prebuilt targets from DIR (no clang needed: the GPU box has only g++)
#   --build-only  build build-fuzz/ and stop;  --bundle DIR: also copy the targets into DIR
#   --out DIR     corpora, crash artifacts and logs (default build-fuzz/runs)
# Exit 1 when a target crashed, leaked, hit UB or a timeout (its artifact is under
# OUT/<target>/artifacts/; pin it under fuzz/targets/regressions/<target>/ once fixed), 2 bad flags.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=1000000 MAXTIME=0 FORK=0 JOBS=0 MAXLEN=4096 BIN="" OUT="" BUILD_ONLY=0 BUNDLE=""
TARGETS="case_parse_fuzzer expectations_fuzzer campaign_state_fuzzer gate_spec_fuzzer matrix_spec_fuzzer"
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --max-time) MAXTIME=$2; shift 2 ;;
    --fork) FORK=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --max-len) MAXLEN=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    --bundle) BUNDLE=$2; shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "fuzz_parsers.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [[ -z $BIN ]]; then
  B=$ROOT/build-fuzz
  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  if [[ ! -f $B/build.ninja ]]; then
    # Libraries: coverage without libFuzzer's main (fuzzer-no-link); the targets add
    # -fsanitize=fuzzer themselves (flce_parser_fuzzer under clang).
    CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) -DFLCE_FUZZ=ON -DFLCE_CUDA=OFF -DFLCE_PYTHON= -DFLCE_LIBTORCH_TESTS=OFF \
      -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $SAN -DFMT_HEADER_ONLY=1" \
      -DCMAKE_EXE_LINKER_FLAGS="$SAN -Wl,--as-needed" >/dev/null
  fi
  # shellcheck disable=SC2086
  cmake --build "$B" -j"${FUZZ_BUILD_JOBS:-2}" --target $TARGETS
  BIN=$B
  for t in $TARGETS; do
    f=$(find "$B" -name "$t" -type f -perm -u+x | head -1)
    if ldd "$f" | grep -qv -E 'linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl|librt'; then
      echo "fuzz_parsers.sh: $t needs more than a stock image has:" >&2; ldd "$f" >&2; exit 4
    fi
  done
  if [[ -n $BUNDLE ]]; then
    mkdir -p "$BUNDLE"
    for t in $TARGETS; do cp "$(find "$B" -name "$t" -type f -perm -u+x | head -1)" "$BUNDLE/"; done
    echo "fuzz_parsers.sh: targets copied to $BUNDLE (run: scripts/fuzz_parsers.sh --bin $BUNDLE)"
  fi
  [[ $BUILD_ONLY == 1 ]] && exit 0
fi
OUT=${OUT:-$ROOT/build-fuzz/runs}
mkdir -p "$OUT"

# Seeds: what flce really reads, plus the small written sets under fuzz/targets/seeds/.
seeds_of() {
  local s=$OUT/$1/seeds
  rm -rf "$s" && mkdir -p "$s"
  case $1 in
    case_parse_fuzzer)
      cp "$ROOT"/corpus/cases/*.json "$ROOT"/corpus/example.json "$s/"
      find "$ROOT/tests/data" -name '*.json' ! -name '*expectations*' -exec cp --backup=numbered {} "$s/" \; ;;
    expectations_fuzzer)
      cp "$ROOT"/fuzz/targets/seeds/expectations/* "$s/"
      cp "$ROOT/corpus/expectations.json" "$s/corpus.json"
      cp "$ROOT/tests/data/stale_expectations.json" "$s/stale.json" ;;
    campaign_state_fuzzer) cp "$ROOT"/fuzz/targets/seeds/campaign_state/* "$s/" ;;
    gate_spec_fuzzer) cp "$ROOT"/fuzz/targets/seeds/gate_spec/* "$s/" ;;
    matrix_spec_fuzzer)
      cp "$ROOT"/fuzz/targets/seeds/matrix_spec/* "$s/"
      { echo 2.13.0+cu130; cat "$ROOT/corpus/expectations.json"; } > "$s/corpus" ;;
  esac
  echo "$s"
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
printf '%-24s %10s %8s %9s %7s %7s %8s %7s %7s %s\n' target execs exec/s exec/cpu-s cov ft corpus wall_s cpu_s result
fail=0
for t in $TARGETS; do
  exe=$(find "$(realpath "$BIN")" -name "$t" -type f -perm -u+x | head -1)
  [[ -n $exe ]] || { echo "fuzz_parsers.sh: no $t under $BIN" >&2; exit 2; }
  d=$OUT/$t
  rm -rf "$d/artifacts"  # this run's failures only
  mkdir -p "$d/corpus" "$d/artifacts"
  seeds=$(seeds_of "$t")
  par=()
  if [[ $FORK -gt 0 ]]; then par=(-fork="$FORK" -ignore_crashes=1 -runs="$RUNS")
  elif [[ $JOBS -gt 0 ]]; then par=(-jobs="$JOBS" -workers="$JOBS" -runs=$((RUNS / JOBS)))
  else par=(-runs="$RUNS"); fi
  [[ $MAXTIME -gt 0 ]] && par+=(-max_total_time="$MAXTIME")
  # Pinned regressions first: a fixed bug must stay fixed under the sanitizers too.
  if [[ -d $ROOT/fuzz/targets/regressions/$t ]] && ! (cd "$d" && "$exe" -runs=0 "$ROOT/fuzz/targets/regressions/$t" >"$d/regressions.log" 2>&1); then
    echo "fuzz_parsers.sh: $t: a pinned regression input fails again (see $d/regressions.log)" >&2
    fail=1
  fi
  t0=$(date +%s.%N)
  rc=0
  # CPU seconds of the target (user+sys, GNU time): on a shared host, execs per CPU second is
  # what sizes a run elsewhere. -fork/-jobs children count too.
  timer=(); [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f "%U %S" -o "$d/cpu")
  (cd "$d" && "${timer[@]}" "$exe" "${par[@]}" -max_len="$MAXLEN" -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 \
     -print_final_stats=1 -artifact_prefix="$d/artifacts/" "$d/corpus" "$seeds") >"$d/fuzz.log" 2>&1 || rc=$?
  cpu=$(awk 'END { print $1 + $2 }' "$d/cpu" 2>/dev/null || echo 0)
  wall=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')  # (no bc on the GPU box)
  [[ $JOBS -gt 0 ]] && cat "$d"/fuzz-*.log >>"$d/fuzz.log" 2>/dev/null
  last=$(grep -E '^#[0-9]+.*cov: ' "$d/fuzz.log" | tail -1 || true)
  execs=$( (grep -oE 'stat::number_of_executed_units: *[0-9]+' "$d/fuzz.log" || true) | awk '{s+=$2} END {print s+0}')
  [[ $execs == 0 ]] && execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(find "$d/corpus" -type f | wc -l)
  eps=$(awk -v n="${execs:-0}" -v w="$wall" 'BEGIN { printf "%d", n / (w + 0.001) }')
  epc=$(awk -v n="${execs:-0}" -v c="$cpu" 'BEGIN { printf "%d", n / (c + 0.001) }')
  arts=$(find "$d/artifacts" -type f | wc -l)
  res=ok
  if [[ $rc -ne 0 || $arts -gt 0 ]]; then res="FAIL rc=$rc artifacts=$arts ($d/fuzz.log)"; fail=1; fi
  printf '%-24s %10s %8s %9s %7s %7s %8s %7.1f %7.1f %s\n' "$t" "${execs:-?}" "$eps" "$epc" "${cov:-?}" "${ft:-?}" "$corp" "$wall" "$cpu" "$res"
done
exit $fail
