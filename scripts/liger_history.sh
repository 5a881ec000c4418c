#!/usr/bin/env bash
# Run THERE (the GPU box), from scripts/gpu_run.sh's `history` step, after flce is built:
# Liger-Kernel across its history.
#   1. every pinned Liger case (corpus/cases/liger-*.json) through `flce run` on Liger trees
#      of v0.5.x, v0.6.x, the latest tag, main (exported by --subject-git from the bundle)
#      and the installed release wheel: a verdict or unsupported-by-subject, never a harness
#      error. One process per tree, side by side.
#   2. `flce bisect` of two real findings, side by side:
#      - the seed (#1327): bf16 + accum_dtype=fp32 compiled, v0.8.0 (good) .. v0.8.1 (bad);
#      - the AMP eager dtype error (fp32 params under bf16 autocast, no bias): when it went
#        away, from c9fc646f (the commit that brought addmm(out_dtype=...)) to v0.8.1.
# Needs .carry/liger-repo.git (scripts/gpu_prepare.sh). Writes $OUT/history.md, history.log,
# bisect-seed.md, bisect-amp.md.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BUILD=${FLCE_BUILD_DIR:-build}
FLCE=$BUILD/flce
OUT=${OUT:-out}
REPO=$PWD/.carry/liger-repo.git
T0=$(date +%s)
git -C "$REPO" rev-parse -q --verify main >/dev/null || { echo "no Liger repository at $REPO (gpu_prepare.sh)"; exit 2; }
TREES=${FLCE_HISTORY_TREES:-"v0.5.10 v0.6.5 v0.8.2 main"}
CASES=$(ls corpus/cases/liger-*.json)

table_for() {  # table_for LABEL [--subject-git SPEC]
  local label=$1; shift
  for c in $CASES; do
    local t0=$(date +%s) out rc
    out=$(timeout 240 "$FLCE" run "$c" --subject liger "$@" 2>&1); rc=$?
    printf '%s\t%s\t%s\t%s\t%ss\n' "$label" "$(basename "$c" .json)" \
      "$(grep -m1 '^outcome:' <<<"$out" | cut -d' ' -f2-)" "$rc" "$(($(date +%s) - t0))"
    printf '## %s %s (exit %s)\n%s\n' "$label" "$c" "$rc" "$(tail -25 <<<"$out")" >>"/tmp/history-$label.log"
  done >"/tmp/history-$label.tsv"
}

table_for release-wheel &
for ref in $TREES; do table_for "$ref" --subject-git "$REPO@$ref" & done

bisect() {  # bisect NAME CASE GOOD BAD [flags]
  local name=$1 case=$2 good=$3 bad=$4; shift 4
  local t0=$(date +%s)
  timeout 420 "$FLCE" bisect --git "$REPO" --good "$good" --bad "$bad" "$case" --subject liger \
    --out "/tmp/bisect-$name" "$@" >"$OUT/bisect-$name.md" 2>"/tmp/bisect-$name.err"
  echo "exit $? after $(($(date +%s) - t0)) s" >>"$OUT/bisect-$name.md"
  tail -15 "/tmp/bisect-$name.err" >>"$OUT/bisect-$name.md"
}
bisect seed corpus/cases/liger-seed-bf16-accum-fp32.json v0.8.0 v0.8.1 --no-ladder &
bisect amp corpus/cases/liger-autocast-bf16-no-bias.json c9fc646f v0.8.1 --no-compiled --expect pass &
wait

{
  echo "# Pinned Liger cases across Liger's history ($(python3 -c 'import torch;print("torch",torch.__version__)'), $(nvidia-smi -L 2>/dev/null | head -1 | cut -d'(' -f1))"
  echo
  echo "| tree | case | outcome | exit | time |"
  echo "|---|---|---|---|---|"
  cat /tmp/history-release-wheel.tsv $(for r in $TREES; do echo "/tmp/history-$r.tsv"; done) | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
  echo
  echo "tree commits: $(for r in $TREES; do printf '%s=%s ' "$r" "$(git -C "$REPO" rev-parse --short=12 "$r")"; done)"
  echo "wall: $(($(date +%s) - T0)) s"
} >"$OUT/history.md"
cat /tmp/history-*.log >"$OUT/history.log" 2>/dev/null
cat "$OUT/history.md"
for n in seed amp; do echo "=== bisect $n"; cat "$OUT/bisect-$n.md"; done
