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
#   FLCE_STEPS (default "gpu_tests bench runs ctest": the GPU suite and the benchmark in one
#     call). Others: fixes (flce_workaround vs Liger PR
#     #1328, scripts/compare_fixes.py), campaign (vs Liger on every GPU), gate (Liger PRs
#     #1324 and #1328 against their merge bases), history (scripts/liger_history.sh: pinned
#     Liger cases on old trees, two bisects), session (scripts/gpu_session.sh: measurements as
#     parts named in FLCE_PARTS); need .carry/liger* from gpu_prepare.sh.
#     Steps without gpu_tests/bench/ctest build the flce binary only.
#   Campaign: FLCE_CAMPAIGN_MIN (2), FLCE_CAMPAIGN_WORKERS (4 per GPU), FLCE_CAMPAIGN_FAMILY (32),
#     FLCE_CAMPAIGN_SEED (11), FLCE_CAMPAIGN_CORPUS (none: from an empty corpus), FLCE_MINIMIZE_S (45),
#     FLCE_CAMPAIGN_FAMILY2 / FLCE_CAMPAIGN2_MIN (a second campaign, other family size, 1.5 min)
#   cce: a campaign against cut-cross-entropy (`--subject cce`), FLCE_CCE_MIN (3) minutes, same knobs;
#     FLCE_CCE_SUBJECT=cce-default runs the library's default gradient filter (a declared approximation)
#   unsloth: a campaign against Unsloth's fused loss (`--subject unsloth`), FLCE_UNSLOTH_MIN (3) minutes
#   conformance: FLCE_CONF_SUBJECTS (liger,cce,model), FLCE_CONF_MIN (2) minutes each
#   slurm: tests/slurm.cmake's real single-node Slurm on this box, its GPU shard on a real gres/gpu
#     (FLCE_SLURM_TEST_GPU, default /dev/nvidia0); needs .carry/slurm (gpu_prepare.sh) and root
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
STEPS=" ${FLCE_STEPS:-gpu_tests bench runs ctest} "
want() { [[ $STEPS == *" $1 "* ]]; }
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
due() {  # due STEP NEED: enough of the deadline left for a wanted step; else its cut is recorded, never silent
  (($(left) > $2)) && return 0
  record "$1" cut "not run: it needs more than $2 s, $(left) s were left of FLCE_DEADLINE_S=$DEADLINE"
  return 1
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

# cut-cross-entropy (pure Python; needs torch and triton, both there): the `cce` subject.
CCE_WHL=$(find "$CARRY" -maxdepth 2 -name 'cut_cross_entropy-25.1.1-*.whl' 2>/dev/null | sort | head -1)
if [[ -n $CCE_WHL ]] && python3 -m pip install -q --no-index --no-deps --target "$SITE" --upgrade "$CCE_WHL" >>"$OUT/setup.log" 2>&1; then
  record cce ok "$(basename "$CCE_WHL") -> $SITE"
else
  record cce FAIL "cut-cross-entropy wheel ${CCE_WHL:-not found in .carry} did not install (setup.log)"
fi

# unsloth_zoo (pure Python, installed without its dependencies): the `unsloth` subject.
UZ_WHL=$(find "$CARRY" -maxdepth 2 -name 'unsloth_zoo-*.whl' 2>/dev/null | sort | head -1)
if [[ -n $UZ_WHL ]] && python3 -m pip install -q --no-index --no-deps --target "$SITE" --upgrade "$UZ_WHL" >>"$OUT/setup.log" 2>&1; then
  record unsloth_zoo ok "$(basename "$UZ_WHL") -> $SITE"
else
  record unsloth_zoo FAIL "unsloth_zoo wheel ${UZ_WHL:-not found in .carry} did not install (setup.log)"
fi

RUFF_WHL=$(find "$CARRY" -maxdepth 2 -name 'ruff-*.whl' 2>/dev/null | sort | head -1)
if [[ -n $RUFF_WHL ]] && python3 -m pip install -q --no-index --no-deps --target "$SITE" --upgrade "$RUFF_WHL" >>"$OUT/setup.log" 2>&1; then
  record ruff ok "$(basename "$RUFF_WHL") -> $SITE (python_lint)"
else
  record ruff FAIL "ruff wheel ${RUFF_WHL:-not found in .carry} did not install (setup.log)"
fi

TORCH_PREFIX=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>>"$OUT/setup.log")
# The box's default /opt/gcc g++ links libstdc++ statically; the one libtorch-linked test
# (flce_torch_tests) must share libtorch's shared libstdc++, so prefer the system g++.
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
# Steps that only drive the CLI (runs, fixes, campaign, gate) need the flce binary alone.
NEED_ALL=0
for s in gpu_tests bench ctest; do want $s && NEED_ALL=1; done
if ((!NEED_ALL)); then
  if timeout "$(left)" cmake --build "$BUILD" -j "$JOBS" --target flce >"$OUT/build.log" 2>&1; then
    record build_flce ok "flce only (steps:$STEPS)"
  else
    record build_flce FAIL "flce failed to build (build.log; first errors below)"
    grep -n -m 20 -E "error:|undefined reference|FAILED:" "$OUT/build.log"
  fi
elif timeout "$(left)" cmake --build "$BUILD" -j "$JOBS" --target flce_gpu_tests flce_gpu_properties flce_bench >"$OUT/build.log" 2>&1; then
  record build_cuda ok "flce_gpu_tests flce_gpu_properties flce_bench"
else
  record build_cuda FAIL "CUDA reference targets failed to build (build.log; first errors below)"
  grep -n -m 20 -E "error:|undefined reference|FAILED:" "$OUT/build.log"
fi

# ---- GPU reference tests ----
TESTS=$( [[ -d $BUILD ]] && cd "$BUILD" && ctest -N 2>/dev/null)  # no `| grep -q`: SIGPIPE under pipefail
if ! want gpu_tests; then
  :
elif [[ $TESTS == *"gpu_reference"* ]]; then
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
if ((!NEED_ALL)); then
  :
elif timeout "$(left)" cmake --build "$BUILD" -j "$JOBS" -- -k 0 >>"$OUT/build.log" 2>&1; then
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
if ! want bench; then
  :
elif ((${#BENCH[@]})); then
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
if want bench && [[ -f scripts/bench_liger.py ]]; then  # Liger / naive torch timings, same run
  if timeout "$(left)" python3 scripts/bench_liger.py >"$OUT/bench_liger.log" 2>&1; then
    record bench_liger ok "scripts/bench_liger.py"
  else
    record bench_liger FAIL "scripts/bench_liger.py (bench_liger.log)"
  fi
  tail -30 "$OUT/bench_liger.log"
fi

# ---- the differential loop on Liger itself (issue evidence: seed case, default, workaround) ----
LIGER=$CARRY/liger
if want runs && [[ -x $BUILD/flce ]] && due runs 60; then
  {
    "$BUILD/flce" env
    for spec in "liger-seed-bf16-accum-fp32 liger" "liger-seed-bf16-accum-fp32 liger+workaround" \
                "liger-seed-bf16-accum-fp32 liger $LIGER/pr1328/src" "liger-bf16-default liger" \
                "liger-fp16-default liger" "liger-fp32-default liger" "seed-raw-addmm-dtype-out aten-dtype-out"; do
      set -- $spec
      c=corpus/cases/$1.json
      sp=()
      [[ -n ${3:-} ]] && { [[ -d $3 ]] || continue; sp=(--subject-path "$3"); }
      [[ $2 == aten-dtype-out ]] && { python3 - "$c" >/tmp/cuda_case.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["device"] = "cuda"; print(json.dumps(d))
PY
      c=/tmp/cuda_case.json; }
      echo "=== flce run $1 --subject $2 ${sp[*]}"
      timeout 120 "$BUILD/flce" run "$c" --subject "$2" "${sp[@]}"; echo "exit $?"
    done
  } >"$OUT/flce_runs.log" 2>&1
  record flce_runs ok "flce_runs.log: $(grep -c '^outcome' "$OUT/flce_runs.log") runs"
  grep -E '^(=== |outcome|first failing|reference-cuda|eager  |compiled)' "$OUT/flce_runs.log" | cut -c1-160
fi

# ---- the two fixes side by side: flce_workaround on Liger 0.8.5 vs PR #1328's guard ----
if want fixes && due fixes 60; then
  {
    python3 scripts/compare_fixes.py --label "liger 0.8.5 eager/compiled (no fix)"
    python3 scripts/compare_fixes.py --label "liger 0.8.5 + flce_workaround" --workaround
    [[ -d $LIGER/pr1328/src ]] && PYTHONPATH=$LIGER/pr1328/src:$PYTHONPATH \
      python3 scripts/compare_fixes.py --label "liger PR #1328 (guard)"
    python3 scripts/compare_fixes.py --table
  } >"$OUT/fixes.log" 2>&1
  rc=$?
  record fixes "$([[ $rc == 0 ]] && echo ok || echo FAIL)" "fixes.log (scripts/compare_fixes.py)"
  tail -12 "$OUT/fixes.log"
fi

# ---- gate Liger's two PRs against their merge bases (one GPU each when there are two) ----
if want gate && [[ -x $BUILD/flce ]] && [[ -d $LIGER ]] && due gate 90; then
  NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  gate() {  # gate NAME BASE CANDIDATE GPU
    CUDA_VISIBLE_DEVICES=$4 timeout "$(left)" "$BUILD/flce" gate --device cuda --sample "${FLCE_GATE_SAMPLE:-4}" \
      --base "subject=liger,path=$LIGER/$2/src" --candidate "subject=liger,path=$LIGER/$3/src" \
      --timeout 240 --out "/tmp/gate-$1" >"$OUT/gate-$1.md" 2>"/tmp/gate-$1.err"
    echo "exit $?" >>"$OUT/gate-$1.md"
    tail -20 "/tmp/gate-$1.err" >>"$OUT/gate-$1.md"
  }
  gate pr1324 base1324 pr1324 0 &
  gate pr1328 base1328 pr1328 $((NG > 1 ? 1 : 0)) &
  wait
  tar -czf "$OUT/gate.tgz" --exclude='*-inductor' -C /tmp gate-pr1324 gate-pr1328 2>/dev/null
  record gate ok "pr1324: $(grep '^exit' "$OUT/gate-pr1324.md"), pr1328: $(grep '^exit' "$OUT/gate-pr1328.md")"
  head -40 "$OUT/gate-pr1324.md" | cut -c1-220; head -30 "$OUT/gate-pr1328.md" | cut -c1-220
fi

# ---- a campaign against Liger on every GPU (one worker per GPU and more) ----
# From an empty corpus unless FLCE_CAMPAIGN_CORPUS names one, so the time to the first
# finding is the sampler's, not the corpus's. FLCE_CAMPAIGN_FAMILY2 adds a second, shorter
# campaign with another family size (no shrinking), for the cases/min vs graphs/min trade.
campaign_run() {  # campaign_run DIR LOG FAMILY MINUTES MINIMIZE_S [SUBJECT]
  local corpus=() subject=${6:-liger}
  [[ -n ${FLCE_CAMPAIGN_CORPUS:-} ]] && corpus=(--corpus "$FLCE_CAMPAIGN_CORPUS")
  rm -rf "$1"
  timeout "$(left)" "$BUILD/flce" campaign --out "$1" --subject "$subject" --device cuda "${corpus[@]}" \
    --minutes "$4" --workers "${FLCE_CAMPAIGN_WORKERS:-$((NG * 4))}" --seed "${FLCE_CAMPAIGN_SEED:-11}" \
    --family "$3" --minimize-s "$5" --case-timeout 180 --quiet >"$2" 2>&1
  local rc=$?
  cat "$1/report.md" >>"$2" 2>/dev/null
  # Where the time went: cases that compiled (over 1 s) vs the rest (cache hits).
  python3 - "$1/cases.jsonl" >>"$2" 2>&1 <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def ms(r): return sum(r.get("ms", {}).values())
slow = [ms(r) for r in rows if ms(r) > 1000]
fast = [ms(r) for r in rows if ms(r) <= 1000]
print(f"## profile: {len(rows)} cases; {len(slow)} over 1 s (compiles), median {statistics.median(slow) if slow else 0:.0f} ms;"
      f" {len(fast)} under, median {statistics.median(fast) if fast else 0:.0f} ms;"
      f" ladders reused {sum(1 for r in rows if r.get('ladder_memoized'))}; first 12 cases:")
for r in rows[:12]:
    print(f"##   {r['campaign_s']:7.1f} s {r['key']:<16} {r['outcome']:<48} {r.get('ms')}")
PY
  record "$subject-f$3" "$([[ $rc == 0 || $rc == 1 ]] && echo ok || echo FAIL)" "exit $rc; $(grep -E '^(campaign|throughput|graph conf|time to first)' "$2" | tr '\n' ' ')"
}
# Each finding's repro.py of campaign DIR on its own, as an upstream maintainer would; side by
# side; their verdict lines appended to LOG.
repros_alone() {  # repros_alone DIR LOG
  local f
  for f in "$1"/findings/*/repro.py; do
    [[ -f $f ]] || continue
    ( out=$(cd /tmp && timeout 120 env PYTHONPATH="$SITE" python3 "$f" 2>&1); rc=$?
      printf '## %s\n%s\nrepro exit %s\n' "$f" "$(echo "$out" | grep -E '^(outcome|REPRODUCED|NOT REPRODUCED|SKIP|compiled|eager)' | cut -c1-300)" "$rc" ) >"$f.log" &
  done
  wait
  cat "$1"/findings/*/repro.py.log >>"$2" 2>/dev/null
}
if want campaign && [[ -x $BUILD/flce ]] && due campaign 90; then
  NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  C=/tmp/flce-campaign-liger
  # Per-GPU evidence: which worker processes sit on which GPU, sampled while it runs.
  ( for t in 45 90; do sleep 45; echo "## GPU apps at ~${t}s"
      nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader 2>&1
      nvidia-smi --query-gpu=index,uuid,utilization.gpu,memory.used --format=csv,noheader 2>&1; done ) >/tmp/gpu_apps.log &
  SAMPLER=$!
  # Shorter than asked when the call's deadline is near: shrinking and repro scripts follow.
  MIN=$(python3 -c "print(max(0.5, min(${FLCE_CAMPAIGN_MIN:-2}, ($(left) - ${FLCE_MINIMIZE_S:-45} - 150) / 60)))")
  campaign_run "$C" "$OUT/campaign.log" "${FLCE_CAMPAIGN_FAMILY:-32}" "$MIN" "${FLCE_MINIMIZE_S:-45}"
  kill "$SAMPLER" 2>/dev/null
  cat /tmp/gpu_apps.log >>"$OUT/campaign.log"
  repros_alone "$C" "$OUT/campaign.log"
  # GNU tar's --exclude only applies to the operands after it. Worker logs stay out (large).
  tar -czf "$OUT/campaign.tgz" --exclude='*-inductor' --exclude='workers' -C /tmp flce-campaign-liger 2>/dev/null
  grep -E '^(campaign|throughput|graph conf|time to first|  +[0-9]+x|## |repro exit|outcome|REPRO|NOT REPRO)' "$OUT/campaign.log" | cut -c1-220
  if [[ -n ${FLCE_CAMPAIGN_FAMILY2:-} ]] && (($(left) > 100)); then
    campaign_run /tmp/flce-campaign-f2 "$OUT/campaign2.log" "$FLCE_CAMPAIGN_FAMILY2" "${FLCE_CAMPAIGN2_MIN:-1.5}" 0
    grep -E '^(campaign|throughput|graph conf|time to first|  +[0-9]+x|## profile)' "$OUT/campaign2.log" | cut -c1-220
  fi
fi

# ---- a campaign against another subject (its own contract), its repro scripts alone ----
subject_campaign() {  # subject_campaign NAME SUBJECT MINUTES MARGIN_S: /tmp/flce-campaign-NAME, $OUT/NAME.{log,tgz}
  local C=/tmp/flce-campaign-$1 min
  min=$(python3 -c "print(max(0.5, min($3, ($(left) - ${FLCE_MINIMIZE_S:-45} - $4) / 60)))")
  campaign_run "$C" "$OUT/$1.log" "${FLCE_CAMPAIGN_FAMILY:-32}" "$min" "${FLCE_MINIMIZE_S:-45}" "$2"
  repros_alone "$C" "$OUT/$1.log"
  # The findings and the reports only: the whole directory (workers' logs, caches) is over 16 MiB.
  (cd /tmp && tar -czf "$OUT/$1.tgz" --exclude='*-inductor' "flce-campaign-$1/findings" "flce-campaign-$1/report.md" \
     "flce-campaign-$1/report.json" "flce-campaign-$1/cases.jsonl" 2>/dev/null)
}
summary_of() { grep -E '^(campaign|throughput|subject|  +[0-9]+x|## |repro exit|outcome|REPRO|NOT REPRO)' "$1" | cut -c1-220; }

# cut-cross-entropy (the `cce` subject), then the upstream reports of its findings, each alone
if want cce && [[ -x $BUILD/flce ]] && due cce 90; then
  NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  subject_campaign cce "${FLCE_CCE_SUBJECT:-cce}" "${FLCE_CCE_MIN:-3}" 120
  for f in corpus/reports/cce-*.py; do
    echo "## $f"; (cd /tmp && timeout 300 env PYTHONPATH="$SITE" python3 "$ROOT/$f" 2>&1); echo "exit $?"
  done >"$OUT/cce_reports.log" 2>&1
  record cce_reports ok "$(grep -c '^REPRODUCED' "$OUT/cce_reports.log") of $(grep -c '^## ' "$OUT/cce_reports.log") reproduced (cce_reports.log)"
  cat "$OUT/cce_reports.log"
  summary_of "$OUT/cce.log"
fi

# Unsloth's fused loss (the `unsloth` subject: its Triton path on CUDA)
if want unsloth && [[ -x $BUILD/flce ]] && due unsloth 90; then
  NG=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  subject_campaign unsloth unsloth "${FLCE_UNSLOTH_MIN:-3}" 90
  summary_of "$OUT/unsloth.log"
fi

# ---- flce conformance on the GPU: the same cases through several subjects, one table ----
if want conformance && [[ -x $BUILD/flce ]] && due conformance 120; then
  C=/tmp/flce-conformance
  NSUB=$(tr ',' '\n' <<<"${FLCE_CONF_SUBJECTS:-liger,cce,model}" | grep -c .)
  MIN=$(python3 -c "print(max(0.5, min(${FLCE_CONF_MIN:-2}, ($(left) - 30 - 30 * $NSUB) / 60 / $NSUB)))")
  timeout "$(left)" "$BUILD/flce" conformance --subjects "${FLCE_CONF_SUBJECTS:-liger,cce,model}" --device cuda \
    --minutes "$MIN" --workers "${FLCE_CAMPAIGN_WORKERS:-4}" --seed "${FLCE_CAMPAIGN_SEED:-11}" --out "$C" \
    >"$OUT/conformance.log" 2>&1
  rc=$?
  cp "$C/report.md" "$OUT/conformance.md" 2>/dev/null
  cp "$C/conformance.json" "$OUT/conformance.json" 2>/dev/null
  for d in "$C"/*/; do cp "$d/report.md" "$OUT/conformance-$(basename "$d").md" 2>/dev/null; done  # each subject's campaign
  record conformance "$([[ $rc == 0 ]] && echo ok || echo FAIL)" "exit $rc; $MIN min per subject (conformance.md)"
fi

# ---- Liger across its history: pinned cases on old trees, two bisects (scripts/liger_history.sh) ----
if want history && [[ -x $BUILD/flce ]] && due history 120; then
  FLCE_BUILD_DIR=$BUILD timeout "$(left)" bash scripts/liger_history.sh >"$OUT/history_run.log" 2>&1
  rc=$?
  record history "$([[ $rc == 0 ]] && echo ok || echo FAIL)" "exit $rc; history.md, bisect-seed.md, bisect-amp.md"
fi

# ---- measurements, part by part (scripts/gpu_session.sh; FLCE_PARTS) ----
if want session && [[ -x $BUILD/flce ]] && due session 60; then
  FLCE_BUILD_DIR=$BUILD PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} FLCE_SESSION_DEADLINE_S=$(($(left) - 15)) \
    timeout "$(left)" bash scripts/gpu_session.sh >"$OUT/session_run.log" 2>&1
  rc=$?
  record session "$([[ $rc == 0 ]] && echo ok || echo FAIL)" "exit $rc; session.tgz"
  tail -c 11500 "$OUT/session_run.log"
fi

# ---- the nightly on a real Slurm with a real gres/gpu (issue #41): tests/slurm.cmake on this box ----
# Slurm and munge from .carry/slurm (Debian 12 .debs): only files the box lacks are installed, so
# none of its own libraries is replaced. The test's GPU shard asks for gres/gpu on /dev/nvidia0.
if want slurm && [[ -x $BUILD/flce ]] && due slurm 150; then
  {
    stage=/tmp/slurm-stage
    rm -rf "$stage"; mkdir -p "$stage"
    for d in "$CARRY"/slurm/*.deb; do dpkg-deb -x "$d" "$stage" || echo "dpkg-deb -x $d failed"; done
    for d in "$stage"/*; do cp -rn "$d/." "/$(basename "$d")/"; done
    ldconfig 2>&1 | head -3
    id; head -2 /etc/os-release
    for b in /usr/sbin/slurmd /usr/sbin/slurmctld /usr/sbin/munged /usr/bin/sbatch; do
      echo "$b: $(ldd "$b" 2>&1 | grep -c 'not found') libraries not found"
    done
    slurmd -V
  } >"$OUT/slurm.log" 2>&1
  (cd "$BUILD" && FLCE_SLURM_TEST_GPU=${FLCE_SLURM_TEST_GPU:-/dev/nvidia0} timeout "$(left)" \
     ctest -R '^slurm_nightly$' --output-on-failure -V) >>"$OUT/slurm.log" 2>&1
  rc=$?
  tot=$(grep -E 'tests passed|tests failed' "$OUT/slurm.log" | tail -1)
  grep -q 'SKIPPED (slurm)' "$OUT/slurm.log" && rc=1 tot="skipped: $(grep -m1 -o 'SKIPPED (slurm): .*' "$OUT/slurm.log")"
  record slurm "$([[ $rc == 0 ]] && echo ok || echo FAIL)" "exit $rc; $tot (slurm.log)"
  grep -E 'not found|slurm [0-9]|GPU shard|: [0-9]+ s|Passed|Failed|SKIPPED' "$OUT/slurm.log" | cut -c1-300 | head -20
fi

# ---- everything else ----
if want ctest && [[ -d $BUILD ]] && due ctest 20; then
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
elif want ctest; then
  record ctest_all FAIL "no time left (deadline ${DEADLINE}s) or no build"
fi
finish
