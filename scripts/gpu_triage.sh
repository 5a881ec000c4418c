#!/usr/bin/env bash
# Run THERE (the GPU box), from scripts/gpu_run.sh's `triage` step, after flce is built:
# evidence for open findings, written to $OUT/triage-*.log.
#   1. bound triage (#16): `flce calibrate --template` over n seeds of each softcap
#      configuration, Liger 0.8.5 eager next to the same-contract CUDA reference;
#   2. the CUDA illegal memory access (#14) with CUDA_LAUNCH_BLOCKING=1 (and compute-sanitizer
#      memcheck where the box has it), on the wheel and on Liger main;
#   3. one compiled function fed a second shape (extra_BT), on the wheel and on Liger main.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${FLCE_BUILD_DIR:-build}
FLCE=$PWD/$BUILD/flce
OUT=${OUT:-out}
D=tests/data/triage
REPO=$PWD/.carry/liger-repo.git
N=${FLCE_TRIAGE_N:-300}
for f in $D/sc-*.json $D/nosc-*.json; do
  ( timeout 300 "$FLCE" calibrate --template "$f" -n "$N" --subject liger >"$OUT/triage-cal-$(basename "$f" .json).log" 2>&1
    echo "exit $?" >>"$OUT/triage-cal-$(basename "$f" .json).log" ) &
done
wait
{
  for tree in wheel main; do
    flags=(); [[ $tree == main ]] && flags=(--subject-git "$REPO@main")
    for c in ima shape2-bf16 shape2-f32; do
      echo "=== $c on $tree (CUDA_LAUNCH_BLOCKING=1)"
      CUDA_LAUNCH_BLOCKING=1 timeout 240 "$FLCE" run "$D/$c.json" --subject liger "${flags[@]}" 2>&1 | tail -40
      echo "exit ${PIPESTATUS[0]}"
    done
  done
} >"$OUT/triage-runs.log" 2>&1 &
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
if [[ -n $CS ]]; then
  timeout 300 "$CS" --tool memcheck --target-processes all --print-limit 20 \
    "$FLCE" run "$D/ima.json" --subject liger --no-ladder >"$OUT/triage-memcheck.log" 2>&1
  echo "exit $?" >>"$OUT/triage-memcheck.log"
else
  echo "compute-sanitizer: not on this box" >"$OUT/triage-memcheck.log"
fi
wait
grep -h -E "^(eager|reference-cuda|compiled)|exit" "$OUT"/triage-cal-*.log | head -80
grep -E "^(===|outcome|first failing)|exit" "$OUT/triage-runs.log"
grep -m 12 -E "Invalid|in .*kernel|=========  at|ERROR SUMMARY|exit" "$OUT/triage-memcheck.log"
