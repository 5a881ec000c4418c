#!/usr/bin/env bash
# Run THERE (the GPU box), from scripts/gpu_run.sh's `session` step, after flce is built: the
# measurements still open in issues #20-#22, as parts picked by FLCE_PARTS (run in the order
# given, each alone on the box, each skipped when the call's deadline would cut it):
#   warm       one `import torch` and Liger (a tree flce exported, else the wheel) through the
#              campaigns' bytecode cache: the page and bytecode caches a later part's campaign would
#              find on a box that ran one before (pre-s199 after a warm without it: preload 22 s)
#   startup    scripts/startup_profile.py on the seed's case, twice (the first on a fresh box is cold):
#              where a worker's seconds go before its first case (time to tier 1)
#   short      the compiled-Liger illegal memory access and the compiled-loss cases: their short
#              scripts (flce repro --emit-python) written and run alone, 3 times each, on main
#   main-sS    Liger main alone, default lanes, S = seed (1.5 min; FLCE_MAIN_MIN); analyses get 30 s of
#              the 90 s grace and the shrink keeps 30 s for the check, so new findings are shrunk and
#              their scripts checked alone (--check-repros)
#   mainfinder-sS  main-sS with --lend-from finder: analyses borrow the finding's lane (the A/B of afa0270)
#   pre-sS     the tree before Liger #1362 alone, default lanes (1 min): the softcap compile failure
#   eagerT-sS  the eager lane, 8 workers, T = main or wheel (0.8.5), 1.5 min (FLCE_EAGER_MIN)
#   ten        ten campaigns side by side, 2 workers each, 5 minutes, default --minimize-s and --grace-s
#              (issue #38: each must end within its budget plus 30 s)
#   nights     Liger main as a plain tree (git archive, no .git; its commit named through an identity
#              index of the carried repository), then with --subject-git, one 2-minute night each into
#              one findings store, seed 53 (FLCE_NIGHT_SEED, FLCE_NIGHT_MIN): the pins must read known
#              or still open, not new (issue #40)
#   plantD-sS  planted defect D (scripts/liger_plant.py) alone, default lanes, 1 min, main's known
#              list (FLCE_MAIN_KNOWN, else every main-sS and ten-main campaign of this box's session;
#              run one first) and corpus/expectations.json; the planted copies of `ten` get it too
#   tenk-sS    10,000 eager cases of the 0.8.5 wheel (--max-cases 10000, 8 workers)
#   triage     the all-ignored compiled findings on main (scripts/cases/liger-compiled-all-ignored-*):
#              flce run (the whole ladder), flce minimize (90 s), the minimum's repro.py checked alone
#              (flce repro --check) and flce report; then the known ignored-targets case's script
#              checked alone (docs/benchmarks-history.md: it did not reproduce alone by hand)
#   oob        the compiled-only numeric findings of main-s199 (scripts/cases/liger-compiled-oob-*) and,
#              for comparison, the known compiled illegal memory access: flce run (the whole ladder),
#              the script written and checked alone, and the script under compute-sanitizer memcheck
#              (an out-of-bounds read that does not fault shows there as an invalid read; torch's
#              caching allocator off, so a read past a tensor inside its pool shows too);
#              FLCE_OOB_MEMCHECK_ONLY=1: only the scripts and memcheck; FLCE_OOB_CASES: other cases
#   pins       flce replay of the fullgraph pins on main (corpus/cases/liger-fullgraph-*)
#   guards     the dynamic-shape case that hung six of ten compiled lanes (scripts/cases/), one
#              `flce run` on main as the host runs now, then one with the trace handler kept
#              (FLCE_KEEP_TRACE_HANDLER=1: quiet() as before, torch 2.11 formatting every guard)
# A part is skipped when the call has less time left than its estimate (need=, below);
# FLCE_NEED=S overrides every part's estimate, for a short last call.
# Everything lands in $OUT/session.tgz; the summary goes to stdout.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
FLCE=$ROOT/${FLCE_BUILD_DIR:-build}/flce
OUT=${OUT:-out}
S=/tmp/session
mkdir -p "$S"
REPO=$ROOT/.carry/liger-repo.git
trap 'tar -czf "$OUT/session.tgz" --exclude=cache --exclude=workers --exclude="*-inductor" --exclude="startup-triton-*" -C /tmp session 2>/dev/null' EXIT
trap 'exit 143' TERM
T0=$(date +%s)
DEADLINE=${FLCE_SESSION_DEADLINE_S:-540}
stamp() { echo "[session +$(($(date +%s) - T0))s] $*"; }
left() { echo $((DEADLINE - ($(date +%s) - T0))); }

campaign() {  # campaign NAME ARGS...: one campaign, its log and summary under $S
  local name=$1; shift
  local d=$S/$name t0
  rm -rf "$d"
  t0=$(date +%s)
  timeout "${CAMPAIGN_TIMEOUT:-500}" "$FLCE" campaign --out "$d" --device cuda --quiet "$@" >"$S/$name.log" 2>&1
  echo "exit $? wall $(($(date +%s) - t0)) s" >>"$S/$name.log"
  python3 scripts/campaign_summary.py "$d" >>"$S/$name.log"
  tail -n +1 "$S/$name.log" | grep -E '^(exit|==|   )' | cut -c1-400
}

main_src() { ls -d "${XDG_CACHE_HOME:-$HOME/.cache}"/flce/trees/"$(git -C "$REPO" rev-parse main)"/src 2>/dev/null; }
planted() {
  [[ -d /tmp/planted ]] && return
  mkdir -p /tmp/liger-main
  [[ -d /tmp/liger-main/src ]] || git -C "$REPO" archive main src | tar -x -C /tmp/liger-main
  python3 scripts/liger_plant.py /tmp/liger-main/src /tmp/planted >"$S/planted.txt" 2>&1 || cat "$S/planted.txt"
}
# main's known list for planted copies (no commit of main, so the main pins of expectations.json do
# not apply to them): FLCE_MAIN_KNOWN, else every finished campaign on main of this box's session
# (main-sS, ten-main), as a nightly reads the night's main run.
known_main() {
  local k
  for k in ${FLCE_MAIN_KNOWN:-$(ls -d "$S"/main-s* "$S"/ten-main 2>/dev/null | grep -v '\.log$')}; do
    [[ -f $k/report.json ]] && echo "--known $k"
  done
}

for part in ${FLCE_PARTS:-short main-s31}; do
  need=150
  case $part in main-* | mainfinder-*) need=180 ;; nights) need=330 ;; ten) need=360 ;; warm) need=30 ;; pre-*) need=100 ;; guards) need=120 ;; tenk-*) need=330 ;; short) need=90 ;; startup) need=60 ;; triage) need=240 ;; oob) need=200 ;; pins) need=60 ;; esac
  need=${FLCE_NEED:-$need}
  if (($(left) < need)); then stamp "skip $part: $(left) s left of the call, it needs about $need"; continue; fi
  seed=${part##*-s}
  stamp "$part"
  case $part in
    startup)
      "$FLCE" case canonical corpus/cases/liger-seed-bf16-accum-fp32.json >"$S/seed-case.json" 2>"$S/startup.log"
      for k in 1 2; do
        echo "-- profile $k" >>"$S/startup.log"
        # as two campaigns' workers: the bytecode cache (process/bytecode_cache.cpp), each its own
        # Triton directory over one box layer (flce_subjects/triton_box_cache.py; the first fills it)
        PYTHONPYCACHEPREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/flce/pycache PYTHONDONTWRITEBYTECODE= \
          TRITON_CACHE_DIR=$S/startup-triton-$k FLCE_TRITON_BOX_CACHE=$S/startup-triton-box \
          TRITON_CACHE_MANAGER=flce_subjects.triton_box_cache:BoxCacheManager \
          PYTHONPATH=subjects:${PYTHONPATH:-} timeout 120 python3 scripts/startup_profile.py "$S/seed-case.json" >>"$S/startup.log" 2>&1
      done
      grep -E '^(--|import|cuda|environment|load|subject|eager|compiled)' "$S/startup.log" | cut -c1-160
      # What the subject's import spends (supports() took 5.5 s here with bytecode cached, 0.14 s
      # on a CPU machine after torch._dynamo): the 40 largest cumulative import times.
      PYTHONPYCACHEPREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/flce/pycache PYTHONDONTWRITEBYTECODE= \
        PYTHONPATH=subjects:${PYTHONPATH:-} timeout 120 python3 -X importtime -c \
        "import json, torch; from flce_subjects import registry; s = registry.load('liger', None); s.supports(json.load(open('$S/seed-case.json')))" \
        2>"$S/importtime.txt"
      sort -t'|' -k2 -n -r "$S/importtime.txt" | head -40 >"$S/importtime-top.txt"
      head -15 "$S/importtime-top.txt"
      ;;
    warm)
      tree=$(ls -d "${XDG_CACHE_HOME:-$HOME/.cache}"/flce/trees/*/src 2>/dev/null | head -1)
      t0=$(date +%s.%N)
      # with the campaigns' bytecode cache (process/bytecode_cache.cpp), which a new machine lacks
      PYTHONPYCACHEPREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/flce/pycache PYTHONDONTWRITEBYTECODE= \
        PYTHONPATH=${tree:+$tree:}${PYTHONPATH:-} timeout 90 python3 -c "import torch, liger_kernel.transformers.functional" \
        >"$S/warm.log" 2>&1
      echo "== warm: exit $? in $(python3 -c "import time; print(round(time.time() - $t0, 1))") s (${tree:-the wheel})"
      ;;
    guards)
      for keep in ${FLCE_GUARDS_KEEP:-0 1}; do
        t0=$(date +%s.%N)
        FLCE_KEEP_TRACE_HANDLER=$keep timeout "$((keep ? 90 : 130))" "$FLCE" run scripts/cases/liger-dynamic-bt16-guards.json \
          --subject liger --subject-git "$REPO@main" >"$S/guards-keep$keep.log" 2>&1
        rc=$?
        echo "== guards keep=$keep: exit $rc wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" \
          "$(grep -iE 'outcome|verdict|ladder' "$S/guards-keep$keep.log" | head -4 | tr '\n' ' ' | cut -c1-400)"
      done
      ;;
    triage)
      G=(--subject liger --subject-git "$REPO@main")
      mkdir -p "$S/triage"
      for c in liger-compiled-all-ignored-ce-weight liger-compiled-all-ignored-softcap; do
        d=$S/triage/$c
        mkdir -p "$d"
        cp "scripts/cases/$c.json" "$d/case.json"
        timeout 150 "$FLCE" run "$d/case.json" "${G[@]}" --json >"$d/report.json" 2>"$d/run.log"
        echo "== $c: run exit $? $(python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(r.get('outcome'), \
          r.get('first_failing_stage'), [(s['backend'], s['pass']) for s in r.get('ladder', [])])" "$d/report.json" 2>&1 | cut -c1-300)"
        timeout 150 "$FLCE" minimize "$d/case.json" "${G[@]}" --budget-s 90 --out "$d/minimized.json" >"$d/minimize.log" 2>&1
        echo "   minimize exit $? $(grep -E '^(outcome kept|minimized in|size)' "$d/minimize.log" | tr '\n' ' ')"
        [[ -f $d/minimized.json ]] || cp "$d/case.json" "$d/minimized.json"
        timeout 200 "$FLCE" repro "$d/minimized.json" "${G[@]}" --emit-python -o "$d/repro.py" --check >"$d/check.log" 2>&1
        echo "   check exit $? $(grep -E '^(flce repro:|script alone:|CHECKED|SCRIPT DIFFERS)' "$d/check.log" | tr '\n' ' ' | cut -c1-400)"
        timeout 60 "$FLCE" report "$d" "${G[@]}" -o "$d/issue.md" >"$d/report.log" 2>&1
      done
      d=$S/triage/ignored-targets
      mkdir -p "$d"
      timeout 200 "$FLCE" repro corpus/cases/liger-compiled-loss-ignored-targets.json "${G[@]}" --emit-python \
        -o "$d/repro.py" --check >"$d/check.log" 2>&1
      echo "== ignored-targets: check exit $? $(grep -E '^(flce repro:|script alone:|CHECKED|SCRIPT DIFFERS)' "$d/check.log" | tr '\n' ' ' | cut -c1-400)"
      ;;
    oob)
      G=(--subject liger --subject-git "$REPO@main")
      CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
      for c in ${FLCE_OOB_CASES:-scripts/cases/liger-compiled-oob-fp32-smoothing scripts/cases/liger-compiled-oob-z-loss \
               corpus/cases/liger-compiled-ima-ce-weight}; do
        n=${c##*/}; d=$S/oob/$n
        mkdir -p "$d"
        cp "$c.json" "$d/case.json"
        if [[ -z ${FLCE_OOB_MEMCHECK_ONLY:-} ]]; then
          timeout 150 "$FLCE" run "$d/case.json" "${G[@]}" --json >"$d/report.json" 2>"$d/run.log"
          echo "== $n: run exit $? $(python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(r.get('outcome'), \
            r.get('first_failing_stage'), [(s['backend'], s['pass']) for s in r.get('ladder', [])])" "$d/report.json" 2>&1 | cut -c1-300)"
          timeout 200 "$FLCE" repro "$d/case.json" "${G[@]}" --emit-python -o "$d/repro.py" --check >"$d/check.log" 2>&1
          echo "   check exit $? $(grep -E '^(flce repro:|script alone:|CHECKED|SCRIPT DIFFERS)' "$d/check.log" | tr '\n' ' ' | cut -c1-400)"
        else
          timeout 200 "$FLCE" repro "$d/case.json" "${G[@]}" --emit-python -o "$d/repro.py" >"$d/emit.log" 2>&1
          echo "== $n: emit exit $?"
        fi
        if [[ -n $CS && -f $d/repro.py ]]; then
          # no caching allocator: memcheck sees only cudaMalloc's bounds, not a block inside torch's pool
          (cd /tmp && PYTHONPATH=$(main_src) PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 240 "$CS" --tool memcheck --print-limit 20 python3 "$d/repro.py" \
             >"$d/memcheck.log" 2>&1; echo "exit $?" >>"$d/memcheck.log")
          echo "   memcheck: $(grep -cE 'Invalid __global__ (read|write)' "$d/memcheck.log") invalid accesses printed;" \
            "$(grep -oE 'Invalid __global__ (read|write) of size [0-9]+ bytes' "$d/memcheck.log" | sort | uniq -c | tr '\n' ' ')" \
            "$(grep -oE '^=+ +at [A-Za-z_0-9]+' "$d/memcheck.log" | sort | uniq -c | head -3 | tr '\n' ' ')" \
            "$(grep -E 'ERROR SUMMARY|^(REPRODUCED|NOT REPRODUCED)|^exit' "$d/memcheck.log" | tr '\n' ' ')"
        else
          echo "   memcheck: compute-sanitizer not on this box"
        fi
      done
      ;;
    pins)
      timeout 300 "$FLCE" replay --only liger-fullgraph- --subject-git "$REPO@main" >"$S/pins.log" 2>&1
      echo "== pins: replay exit $?"; grep -E 'liger-fullgraph' "$S/pins.log" | cut -c1-300
      ;;
    short)
      "$FLCE" run corpus/cases/liger-fp32-default.json --subject liger --subject-git "$REPO@main" >/dev/null 2>&1  # exports main
      src=$(main_src)
      for c in liger-compiled-ima-ce-weight liger-compiled-loss-ignored-targets; do
        "$FLCE" repro "corpus/cases/$c.json" --subject liger --subject-git "$REPO@main" --emit-python -o "$S/$c.py" \
          >"$S/$c.emit.log" 2>&1
        echo "== $c: $(wc -l <"$S/$c.py") lines ($(head -c 300 "$S/$c.emit.log" | tr '\n' ' '))"
        for k in 1 2 3; do
          (cd /tmp && PYTHONPATH=$src timeout 200 python3 "$S/$c.py" >"$S/$c.run$k.log" 2>&1; echo "exit $?" >>"$S/$c.run$k.log")
          echo "   run $k: $(grep -E '^(REPRODUCED|NOT REPRODUCED|SKIP|exit)' "$S/$c.run$k.log" | tr '\n' ' ')"
        done
        timeout 240 "$FLCE" replay --only "$c" --subject-git "$REPO@main" >"$S/$c.replay.log" 2>&1
        echo "   flce replay: exit $? $(grep -E 'as-expected|unexpected|changed|outcome' "$S/$c.replay.log" | head -3 | tr '\n' ' ' | cut -c1-300)"
      done
      ;;
    main-s*)
      campaign "$part" --subject liger --subject-git "$REPO@main" --minutes "${FLCE_MAIN_MIN:-1.5}" --seed "$seed" \
        --known corpus/expectations.json --minimize-s 20 --grace-s 90 --analyze-s 30 --case-timeout 120 --check-repros
      ;;
    mainfinder-s*)  # main-sS with analyses borrowing the finder's lane, not the eager one (the A/B of afa0270)
      campaign "$part" --subject liger --subject-git "$REPO@main" --minutes "${FLCE_MAIN_MIN:-1.5}" --seed "$seed" \
        --known corpus/expectations.json --minimize-s 20 --grace-s 90 --analyze-s 30 --case-timeout 120 --check-repros \
        --lend-from finder
      ;;
    pre-s*)
      campaign "$part" --subject liger --subject-git "$REPO@c5bda07f^" --minutes 1 --seed "$seed" \
        --known corpus/expectations.json --minimize-s 0 --grace-s 20 --case-timeout 120
      ;;
    eagermain-s*)
      campaign "$part" --subject liger --subject-git "$REPO@main" --lanes eager=8 --minutes "${FLCE_EAGER_MIN:-1.5}" \
        --seed "$seed" --known corpus/expectations.json --minimize-s 0 --grace-s 20
      ;;
    eagerwheel-s*)
      campaign "$part" --subject liger --lanes eager=8 --minutes "${FLCE_EAGER_MIN:-1.5}" --seed "$seed" \
        --known corpus/expectations.json --minimize-s 0 --grace-s 20
      ;;
    tenk-s*)
      CAMPAIGN_TIMEOUT=$(($(left) - 10)) campaign "$part" --subject liger --lanes eager=8 --max-cases 10000 --minutes 6 \
        --seed "$seed" --known corpus/expectations.json --minimize-s 0 --grace-s 20
      ;;
    plant*-s*)
      planted
      d=${part#plant}; d=${d%-s*}
      # shellcheck disable=SC2046
      campaign "$part" --subject liger --subject-path "/tmp/planted/$d/src" --minutes 1 --seed "$seed" \
        $(known_main) --known corpus/expectations.json --minimize-s 0 --grace-s 20 --case-timeout 120
      python3 -c "import json; print('   expected:', json.load(open('/tmp/planted/expected.json'))['$d'])" 2>/dev/null
      ;;
    nights)  # issue #40: Liger main as a plain tree (no .git), then with --subject-git, one night each, one store
      mkdir -p /tmp/liger-plain "$S/identity"
      [[ -d /tmp/liger-plain/src ]] || git -C "$REPO" archive main src | tar -x -C /tmp/liger-plain
      export FLCE_IDENTITY_INDEX=$S/identity
      "$FLCE" identity --index "$REPO" --refs main --path src -o "$S/identity/liger.json" /tmp/liger-plain/src \
        >"$S/nights-identity.log" 2>&1
      echo "== identity: exit $? $(tr '\n' ' ' <"$S/nights-identity.log" | cut -c1-300)"
      rm -f "$S/nights.db"
      for n in plain git; do
        if [[ $n == plain ]]; then src=(--subject-path /tmp/liger-plain/src); else src=(--subject-git "$REPO@main"); fi
        campaign "nights-$n" --subject liger "${src[@]}" --minutes "${FLCE_NIGHT_MIN:-2}" --seed "${FLCE_NIGHT_SEED:-53}" \
          --known corpus/expectations.json --store "$S/nights.db" --night "n-$n" --case-timeout 120
        head -70 "$S/nights-$n/report.md" | cut -c1-300
        sed -n '/^## Listed under their root cause/,/^## [^L]/p' "$S/nights-$n/report.md" | cut -c1-400 | head -20
      done
      "$FLCE" store list "$S/nights.db" >"$S/nights-store.txt" 2>&1
      cut -c1-300 "$S/nights-store.txt" | head -40
      ;;
    ten)
      planted
      pids=()
      specs=("main:--subject-git $REPO@main" "v0.8.2:--subject-git $REPO@v0.8.2" "pre1362:--subject-git $REPO@c5bda07f^"
             "wheel:" "pr1324:--subject-git $REPO@refs/pull/1324/head" "base1324:--subject-git $REPO@refs/pull/1324/head^")
      for d in zloss-grad weighted-mean smoothing-eps bias-accum; do
        specs+=("planted-$d:--subject-path /tmp/planted/$d/src $(known_main)")
      done
      for spec in "${specs[@]}"; do
        name=${spec%%:*}
        # shellcheck disable=SC2086
        (CAMPAIGN_TIMEOUT=420 campaign "ten-$name" --subject liger ${spec#*:} --lanes eager=1,compiled=1 --cpus 1 \
           --minutes 5 --seed "${FLCE_TEN_SEED:-11}" --known corpus/expectations.json \
           --case-timeout 120 >/dev/null) &
        pids+=($!)
      done
      for p in "${pids[@]}"; do wait "$p"; done
      for spec in "${specs[@]}"; do grep -E '^(exit|==|   )' "$S/ten-${spec%%:*}.log" | cut -c1-400; done
      ;;
    *) stamp "unknown part $part" ;;
  esac
done
stamp "done"
