#!/usr/bin/env bash
# Run THERE (the GPU box), from scripts/gpu_run.sh's `campaigns` step, after flce is built: the
# campaign measurements of issues #20-#22. FLCE_CAMPAIGNS picks the round (each fits one call):
#   b1  Liger main alone (default lanes: the compiled lane's configurations/min, the seed's tier 1),
#       its findings as the known list; five planted defects (scripts/liger_plant.py) side by side
#       on two seeds with main's known list; `flce report` of main's softcap finding with its
#       bisect
#   b2  the eager lane on Liger 0.8.5, 8 workers, alone (seed 101); ten campaigns side by side, 2 workers each (Liger trees: main, 0.8.5, v0.8.2, before #1362,
#       PR #1324, and planted copies): compiled configurations in 5 minutes, time to the seed's
#       bug, end vs budget; then the eager lane on 0.8.5 again, another seed
# Everything lands in $OUT/campaigns.tgz; a summary goes to stdout.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
FLCE=$ROOT/${FLCE_BUILD_DIR:-build}/flce
OUT=${OUT:-out}
C=/tmp/campaigns
mkdir -p "$C"
REPO=$ROOT/.carry/liger-repo.git
trap 'tar -czf "$OUT/campaigns.tgz" --exclude=cache --exclude=workers --exclude="*-inductor" -C /tmp campaigns 2>/dev/null' EXIT
trap 'exit 143' TERM
T0=$(date +%s)
stamp() { echo "[campaigns +$(($(date +%s) - T0))s] $*"; }

summary() { python3 scripts/campaign_summary.py "$1"; }

campaign() {  # campaign NAME ARGS...
  local name=$1; shift
  local d=$C/$name t0
  rm -rf "$d"
  t0=$(date +%s)
  timeout "${CAMPAIGN_TIMEOUT:-500}" "$FLCE" campaign --out "$d" --device cuda --quiet "$@" >"$C/$name.log" 2>&1
  echo "exit $? wall $(($(date +%s) - t0)) s" >>"$C/$name.log"
  summary "$d" >>"$C/$name.log"
}

mkdir -p /tmp/liger-main
[[ -d /tmp/liger-main/src ]] || git -C "$REPO" archive main src | tar -x -C /tmp/liger-main
python3 scripts/liger_plant.py /tmp/liger-main/src /tmp/planted >"$C/planted.txt" 2>&1 || { cat "$C/planted.txt"; exit 1; }
DEFECTS=$(python3 -c 'import json; print(" ".join(json.load(open("/tmp/planted/expected.json"))))')
cp /tmp/planted/expected.json "$C/planted-expected.json"

if [[ ${FLCE_CAMPAIGNS:-b1} == b1 ]]; then
  stamp "Liger main alone, default lanes (16 cores: 8 workers, 6 eager + 2 compiled), seed 31"
  campaign main --subject liger --subject-git "$REPO@main" --minutes 1.5 --seed 31 --known corpus/expectations.json \
    --minimize-s 30 --grace-s 45 --case-timeout 120
  mkdir -p "$C/bisect-softcap" && cp tests/data/report/bisect-liger-softcap-v0.8.1.json "$C/bisect-softcap/bisect.json"
  for f in "$C"/main/findings/*softcap*/; do
    [[ -d $f ]] || continue
    "$FLCE" report "$f" --bisect "$C/bisect-softcap" -o "$C/main-softcap-report.md" >>"$C/main.log" 2>&1
    (cd /tmp && timeout 120 python3 "$f/repro.py" >"$C/main-softcap-repro.out" 2>&1; echo "repro exit $?" >>"$C/main-softcap-repro.out")
  done
  for seed in 31 77; do
    stamp "five planted defects side by side, seed $seed, each --lanes eager=2,compiled=1 --cpus 3, main's known list"
    pids=()
    for d in $DEFECTS; do
      campaign "planted-$d-s$seed" --subject liger --subject-path "/tmp/planted/$d/src" --lanes eager=2,compiled=1 \
        --cpus 3 --minutes 1.25 --seed "$seed" --known "$C/main" --known corpus/expectations.json --minimize-s 20 \
        --grace-s 30 --case-timeout 120 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
  done
else
  stamp "eager lane, Liger 0.8.5 wheel, 8 workers, alone, seed 101 (never tuned on)"
  campaign eager-085-s101 --subject liger --lanes eager=8 --minutes 1 --seed 101 --minimize-s 0 --grace-s 40 \
    --known corpus/expectations.json
  stamp "ten campaigns side by side, --lanes eager=1,compiled=1 --cpus 1, 5 minutes, seed 11"
  pids=()
  i=0
  specs=("main:--subject-git $REPO@main" "v0.8.2:--subject-git $REPO@v0.8.2" "pre1362:--subject-git $REPO@c5bda07f^"
         "wheel:" "pr1324:--subject-git $REPO@refs/pull/1324/head" "base1324:--subject-git $REPO@refs/pull/1324/head^")
  for d in $DEFECTS; do specs+=("planted-$d:--subject-path /tmp/planted/$d/src"); done
  for spec in "${specs[@]}"; do
    ((i++ < 10)) || break
    name=${spec%%:*}
    # shellcheck disable=SC2086
    CAMPAIGN_TIMEOUT=420 campaign "ten-$name" --subject liger ${spec#*:} --lanes eager=1,compiled=1 --cpus 1 --minutes 5 \
      --seed 11 --known corpus/expectations.json --minimize-s 10 --grace-s 20 --case-timeout 120 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  stamp "eager lane, Liger 0.8.5 wheel, 8 workers, alone, seed 202 (never tuned on)"
  campaign eager-085-s202 --subject liger --lanes eager=8 --minutes 1 --seed 202 --minimize-s 0 --grace-s 40 \
    --known corpus/expectations.json
fi
stamp "done"
for f in "$C"/*.log; do echo "######## $(basename "$f")"; grep -E "^(exit|==|   )" "$f" | cut -c1-330; done
head -c 3000 "$C/main-softcap-report.md" 2>/dev/null
cat "$C/main-softcap-repro.out" 2>/dev/null | tail -15
