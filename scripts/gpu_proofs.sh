#!/usr/bin/env bash
# Run THERE (the GPU box), from scripts/gpu_run.sh's `proofs` step, after flce is built: the
# evidence issues #20 and #22 ask for that needs no campaign, side by side on one GPU.
# FLCE_PROOFS picks parts (default: all):
#   pinned    the softcap pin replayed on the 0.8.5 wheel and on main (subject_version picks)
#   trees     the softcap case on v0.8.1, v0.8.2, main: where a passing good end is
#   bisect    flce bisect of the softcap case (v0.8.1..main and v0.8.2..main), with --out
#   shape2    the second-shape Inductor assertion: flce's two-call cases and the Liger-only script
#   ima       the compiled-Liger illegal memory access case alone, three times per tree
#   oob       the planted CUDA fault through a campaign (the SIGSEGV fix)
#   marginal  bf16 + ce_weight configurations on the 0.8.5 wheel, 300 seeds each (#20 triage)
#   pre1362   a compiled softcap case on the tree before Liger #1362 and on #1362 itself
# Everything lands in $OUT/proofs.tgz plus a summary on stdout.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
FLCE=$ROOT/${FLCE_BUILD_DIR:-build}/flce
OUT=${OUT:-out}
P=/tmp/proofs
rm -rf "$P" && mkdir -p "$P"
REPO=$ROOT/.carry/liger-repo.git
trap 'tar -czf "$OUT/proofs.tgz" -C /tmp proofs 2>/dev/null' EXIT
trap 'exit 143' TERM
PARTS=" ${FLCE_PROOFS:-pinned trees bisect shape2 ima oob marginal pre1362} "
want() { [[ $PARTS == *" $1 "* ]]; }
T0=$(date +%s)
stamp() { echo "[proofs +$(($(date +%s) - T0))s] $*"; }
SOFTCAP=corpus/cases/liger-softcap-fp32-none-tiny.json
pids=()

if want pinned; then
  (for tree in wheel main; do
     flags=(); [[ $tree == main ]] && flags=(--subject-git "$REPO@main")
     echo "=== replay $SOFTCAP on $tree"
     timeout 200 "$FLCE" replay --only liger-softcap-fp32-none-tiny "${flags[@]}" 2>&1 | tail -8
     echo "exit ${PIPESTATUS[0]}"
   done) >"$P/pinned.log" 2>&1 &
  pids+=($!)
fi
if want trees; then
  (for ref in v0.8.1 v0.8.2 main; do
     echo "=== $ref ($(git -C "$REPO" rev-parse --short=12 "$ref"))"
     timeout 200 "$FLCE" run "$SOFTCAP" --subject liger --subject-git "$REPO@$ref" 2>&1 | grep -E '^(outcome|verdict|eager|  )' | head -12
   done) >"$P/trees.log" 2>&1 &
  pids+=($!)
fi
if want bisect; then
  for good in v0.8.1 v0.8.2; do
    (t0=$(date +%s)
     timeout 400 "$FLCE" bisect --git "$REPO" --good "$good" --bad main "$SOFTCAP" --subject liger --no-compiled \
       --out "$P/bisect-softcap-$good" >"$P/bisect-softcap-$good.md" 2>"$P/bisect-softcap-$good.err"
     echo "exit $? after $(($(date +%s) - t0)) s" >>"$P/bisect-softcap-$good.md") &
    pids+=($!)
  done
fi
if want shape2; then
  (for tree in wheel main; do
     flags=(); [[ $tree == main ]] && flags=(--subject-git "$REPO@main")
     for c in tests/data/triage/shape2-bf16.json tests/data/triage/shape2-f32.json; do
       echo "=== flce run $c on $tree"
       timeout 240 "$FLCE" run "$c" --subject liger "${flags[@]}" 2>&1 | grep -E '^(outcome|backend ladder|first failing|compiled)' | cut -c1-300
     done
   done
   main_src=$(ls -d "${XDG_CACHE_HOME:-$HOME/.cache}"/flce/trees/"$(git -C "$REPO" rev-parse main)"/src 2>/dev/null)
   for tree in wheel main; do
     for args in "" "fp32" "backend=aot_eager"; do
       echo "=== liger-second-shape-inductor-assert.py $args on $tree"
       pp=$PYTHONPATH; [[ $tree == main && -n $main_src ]] && pp=$main_src:$PYTHONPATH
       (cd /tmp && PYTHONPATH=$pp timeout 240 python3 "$ROOT/corpus/reports/liger-second-shape-inductor-assert.py" $args 2>&1 | tail -30)
       echo "exit ${PIPESTATUS[0]}"
     done
   done) >"$P/shape2.log" 2>&1 &
  pids+=($!)
fi
if want ima; then
  (for tree in wheel main; do
     flags=(); [[ $tree == main ]] && flags=(--subject-git "$REPO@main")
     for k in 1 2 3; do
       echo "=== ima.json on $tree, run $k"
       timeout 240 "$FLCE" run tests/data/triage/ima.json --subject liger "${flags[@]}" 2>&1 | grep -E '^(outcome|backend ladder|verdict)' | cut -c1-300
     done
     echo "=== ima.json on $tree, CUDA_LAUNCH_BLOCKING=1"
     CUDA_LAUNCH_BLOCKING=1 timeout 240 "$FLCE" run tests/data/triage/ima.json --subject liger "${flags[@]}" 2>&1 | grep -E '^(outcome|backend ladder)'
   done) >"$P/ima.log" 2>&1 &
  pids+=($!)
fi
if want oob; then
  (d=/tmp/c-oob; rm -rf $d
   timeout 300 "$FLCE" campaign --out $d --device cuda --quiet --subject cuda-oob --corpus tests/data/cuda_fault \
     --max-cases 1 --minutes 3 --lanes compiled=1 --minimize-s 60 2>&1 | tail -20
   echo "campaign exit ${PIPESTATUS[0]}"
   ls $d/findings/*/; cat $d/findings/*/cuda_fault.json; grep -E '^(campaign|findings)' $d/report.md
   mkdir -p "$P/oob"; cp $d/report.md $d/report.json "$P/oob/" 2>/dev/null) >"$P/oob.log" 2>&1 &
  pids+=($!)
fi
if want marginal; then
  for f in tests/data/triage/m-*.json; do
    (timeout 330 "$FLCE" calibrate --template "$f" -n "${CAL_N:-300}" --subject liger \
       >"$P/cal-$(basename "$f" .json).log" 2>&1; echo "exit $?" >>"$P/cal-$(basename "$f" .json).log") &
    pids+=($!)
  done
fi
if want pre1362; then
  (for ref in c5bda07f^ c5bda07f; do
     for c in tests/data/triage/sc-f32-large.json tests/data/triage/sc-bf16-none.json; do
       echo "=== $c on $ref ($(git -C "$REPO" rev-parse --short=12 "$ref"))"
       timeout 240 "$FLCE" run "$c" --subject liger --subject-git "$REPO@$ref" 2>&1 | grep -E '^(outcome|backend ladder|compiled|eager )' | cut -c1-300
     done
   done) >"$P/pre1362.log" 2>&1 &
  pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p"; done
stamp "done"
for f in "$P"/*.log "$P"/*.md; do [[ -f $f ]] && { echo "######## $(basename "$f")"; grep -v '^calibrate: .* on {' "$f" | tail -60; }; done
