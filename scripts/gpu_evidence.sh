#!/usr/bin/env bash
# Run THERE (the GPU box), from scripts/gpu_run.sh's `evidence` step, after flce is built:
# the measurements issues #14-#16 ask for, in one device call. FLCE_EVIDENCE picks parts
# (default "findings planted calibrate oob"; the others: eager fuzz ladder):
#   findings   campaigns against Liger main and the 0.8.5 wheel (both lanes), side by side;
#              `flce report` for every finding, each repro.py run on its own (#14)
#   planted    eager-lane campaigns against the model-bug-* subjects on CUDA: time to find (#16)
#   calibrate  softcap configurations, Liger eager next to both CUDA references (#16 triage)
#   oob        the planted CUDA fault: its kernel named by the re-run (#14)
#   eager      eager-lane throughput, Liger 0.8.5, 8 workers, alone on the box, two seeds (#16)
#   fuzz       10M executions of each parser fuzzer (prebuilt bundle in .carry/fuzz) (#15)
#   gputests   the CUDA reference tests (flce_gpu_tests), beside the rest
#   ladder     compiled campaigns against old Liger trees (v0.5.10, v0.6.5), for timeout@ladder stacks (#15)
#   pinned     the pinned cases of new findings through `flce run`, on the wheel and on main
# Everything lands in $OUT/evidence.tgz plus a summary on stdout (8 files come back at most).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BUILD=${FLCE_BUILD_DIR:-build}
FLCE=$ROOT/$BUILD/flce
OUT=${OUT:-out}
E=/tmp/evidence
rm -rf "$E" && mkdir -p "$E"
REPO=$ROOT/.carry/liger-repo.git
# Whatever has been measured comes back, also when the call's deadline cuts this short.
trap 'tar -czf "$OUT/evidence.tgz" -C /tmp evidence 2>/dev/null' EXIT
trap 'exit 143' TERM
PARTS=" ${FLCE_EVIDENCE:-findings planted calibrate oob} "
want() { [[ $PARTS == *" $1 "* ]]; }
T0=$(date +%s)
stamp() { echo "[evidence +$(($(date +%s) - T0))s] $*"; }

summary_of() {  # summary_of DIR: one line per campaign from report.json
  python3 - "$1" <<'PY'
import json, sys
d = sys.argv[1]
try:
    r = json.load(open(d + "/report.json"))
except Exception as e:
    print(f"{d}: no report.json ({e})"); sys.exit(0)
lanes = r.get("lanes", {})
ln = "; ".join(f"{k}: {v.get('cases')} cases, {v.get('cases_per_min', 0):.0f}/min, workers {v.get('workers')}"
               for k, v in lanes.items())
oob = sum(n for o, n in r.get("outcomes", {}).items() if "out-of-bounds" in o)
print(f"{d}: {r.get('cases_done', r.get('cases'))} cases, {r.get('cases_per_min', 0):.0f} cases/min, "
      f"first finding {r.get('time_to_first_finding_s')} s, out-of-bounds cases {oob} | {ln}")
for f in r.get("findings", []):
    print(f"   {f.get('signature')}  count {f.get('count')}  first {f.get('first_seen_s', 0):.1f}s  shrink: {f.get('shrink')}")
for k, v in lanes.items():
    n = max(1, v.get("cases", 1))
    print(f"   {k} ms/case: " + ", ".join(f"{a} {b / n:.2f}" for a, b in v.get("ms", {}).items()))
PY
}

campaign() {  # campaign NAME ARGS...: a campaign under $E/NAME (kept small: no worker logs)
  local name=$1; shift
  local d=/tmp/c-$name
  rm -rf "$d"
  timeout "${CAMPAIGN_TIMEOUT:-400}" "$FLCE" campaign --out "$d" --device cuda --quiet "$@" >"$E/$name.log" 2>&1
  echo "exit $?" >>"$E/$name.log"
  summary_of "$d" >>"$E/$name.log"
  mkdir -p "$E/$name"
  cp "$d"/report.md "$d"/report.json "$E/$name/" 2>/dev/null
  for f in "$d"/findings/*/; do
    [[ -d $f ]] || continue
    local id
    id=$(basename "$f")
    mkdir -p "$E/$name/findings/$id"
    cp "$f"/*.json "$f"/*.py "$f"/*.txt "$E/$name/findings/$id/" 2>/dev/null
    "$FLCE" report "$f" -o "$E/$name/findings/$id/issue.md" >>"$E/$name.log" 2>&1
    # The reproducer on its own, as an upstream maintainer runs it.
    (cd /tmp && timeout 240 python3 "$f/repro.py" >"$E/$name/findings/$id/repro.out" 2>&1
     echo "repro exit $?" >>"$E/$name/findings/$id/repro.out")
    echo "== $id: $(grep -m1 -E 'REPRODUCED|NOT REPRODUCED|SKIP' "$E/$name/findings/$id/repro.out")" >>"$E/$name.log"
  done
  tail -n 30 "$E/$name.log"
}

if want eager; then  # alone on the box: nothing else runs during it
  stamp "eager lane throughput"
  campaign eager-s101 --subject liger --lanes eager=8 --minutes "${EAGER_MIN:-2}" --seed 101 --minimize-s 0
  campaign eager-s202 --subject liger --lanes eager=8 --minutes "${EAGER_MIN2:-1}" --seed 202 --minimize-s 0
fi

fuzz_pid=
if want fuzz; then  # beside the rest (CPU only): FUZZ_FORK processes
  stamp "parser fuzzers, ${FUZZ_RUNS:-10000000} executions each"
  if [[ -d $ROOT/.carry/fuzz ]]; then
    (cd /tmp && OUT=$E/fuzz-runs bash "$ROOT/scripts/fuzz_parsers.sh" --bin "$ROOT/.carry/fuzz" \
       --runs "${FUZZ_RUNS:-10000000}" --fork "${FUZZ_FORK:-10}" >"$E/fuzz.log" 2>&1
     echo "exit $?" >>"$E/fuzz.log"; rm -rf "$E"/fuzz-runs/*/corpus) &
    fuzz_pid=$!
  else
    echo "no .carry/fuzz bundle (scripts/fuzz_parsers.sh --build-only --bundle .carry/fuzz)" >"$E/fuzz.log"
  fi
fi

pids=()
if want gputests; then  # the CUDA reference's own tests (kernels changed: contract knobs, new regimes)
  (cmake --build "$BUILD" -j "$(nproc)" --target flce_gpu_tests >"$E/gputests.log" 2>&1 &&
     "$BUILD/kernels/flce_gpu_tests" >>"$E/gputests.log" 2>&1; echo "exit $?" >>"$E/gputests.log"
   grep -E "^\[  (PASSED|FAILED) |tests ran|exit" "$E/gputests.log" > "$E/gputests.tail") &
  pids+=($!)
fi
if want findings; then
  stamp "campaigns against Liger main and 0.8.5"
  campaign main --subject liger --subject-git "$REPO@main" --lanes eager=3,compiled=4 --family 8 \
    --minutes "${FIND_MIN:-2.5}" --minimize-s "${FIND_SHRINK_S:-90}" --case-timeout 120 --seed 31 >"$E/main.tail" 2>&1 &
  pids+=($!)
  campaign wheel --subject liger --lanes eager=3,compiled=4 --family 8 \
    --minutes "${FIND_MIN:-2.5}" --minimize-s "${FIND_SHRINK_S:-90}" --case-timeout 120 --seed 31 >"$E/wheel.tail" 2>&1 &
  pids+=($!)
fi
if want ladder; then  # old trees whose campaigns timed out in the ladder: a hung case leaves stacks.txt
  for ref in v0.5.10 v0.6.5; do
    CAMPAIGN_TIMEOUT=300 campaign "old-$ref" --subject liger --subject-git "$REPO@$ref" --lanes compiled=3 --family 8 \
      --minutes "${LADDER_MIN:-2.5}" --minimize-s 0 --case-timeout 60 --seed 11 >"$E/old-$ref.tail" 2>&1 &
    pids+=($!)
  done
fi
if want pinned; then  # the pinned softcap regression, replayed on the wheel and on main (subject_version picks the expectation)
  (for tree in wheel main; do
     flags=(); [[ $tree == main ]] && flags=(--subject-git "$REPO@main")
     echo "=== corpus/cases/liger-softcap-fp32-none-tiny.json on $tree"
     timeout 240 "$FLCE" replay --only liger-softcap-fp32-none-tiny --json "${flags[@]}" 2>&1 | tail -12
     echo "exit ${PIPESTATUS[0]}"
   done) >"$E/pinned.tail" 2>&1 &
  pids+=($!)
fi
if want planted; then
  (for bug in model-bug-token-grad-rows model-bug-autocast-no-bias model-bug-input-no-grad; do
     campaign "planted-$bug" --subject "$bug" --lanes eager=2 --minutes 1 --seed 7 --minimize-s 0
   done) >"$E/planted.tail" 2>&1 &
  pids+=($!)
fi
if want calibrate; then
  for f in tests/data/triage/sc-f32-large.json tests/data/triage/sc-f32-large-none.json \
           tests/data/triage/sc-bf16-none.json tests/data/triage/nosc-bf16-none.json; do
    (timeout 300 "$FLCE" calibrate --template "$f" -n "${CAL_N:-200}" --subject liger \
       >"$E/cal-$(basename "$f" .json).log" 2>&1; echo "exit $?" >>"$E/cal-$(basename "$f" .json).log") &
    pids+=($!)
  done
fi
if want oob; then
  (campaign oob --subject cuda-oob --corpus tests/data/cuda_fault --max-cases 1 --minutes 3 --lanes compiled=1 \
     --minimize-s 60; cat /tmp/c-oob/findings/*/cuda_fault.json) >"$E/oob.tail" 2>&1 &
  pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p"; done
[[ -n $fuzz_pid ]] && wait "$fuzz_pid"
stamp "done"
[[ -f $E/fuzz.log ]] && { echo "######## fuzz.log"; cat "$E/fuzz.log"; }
for d in /tmp/c-old-*/findings/*/; do [[ -f $d/stacks.txt ]] && { echo "######## stacks $d"; head -60 "$d/stacks.txt"; }; done
for t in "$E"/*.tail; do [[ -f $t ]] && { echo "######## $(basename "$t")"; cat "$t"; }; done
for c in "$E"/cal-*.log; do [[ -f $c ]] && { echo "######## $(basename "$c")"; grep -v '^calibrate:' "$c"; }; done
