#!/usr/bin/env bash
# One shard of the multi-host nightly job: a campaign with seed BASE+INDEX and its own
# --out, then a libFuzzer run with -seed=BASE+INDEX and its own corpus directory, then the
# subject properties on a random seed (RapidCheck's reproduce string lands in the log).
#   scripts/nightly_shard.sh INDEX COUNT OUT_ROOT      -> OUT_ROOT/shard-INDEX/{campaign,fuzz-corpus,...}
# Rerunning the same command resumes the campaign and grows the same corpus (a requeued
# Slurm task loses nothing). scripts/nightly_merge.sh merges the shards afterwards.
# Settings (environment):
#   FLCE_BUILD            build directory (default: build)
#   NIGHTLY_SUBJECT       subject of the campaign and of subject_fuzzer (default: model)
#   NIGHTLY_SUBJECT_GIT   REPO@REF: the subject's tree at a commit (--subject-git), e.g. a Liger checkout
#   NIGHTLY_SEED          base seed, >= 1 (default: 1); libFuzzer reads -seed=0 as "random"
#   NIGHTLY_MINUTES       campaign budget (default: 60); NIGHTLY_MAX_CASES, NIGHTLY_WORKERS optional
#   NIGHTLY_DEVICE        --device of the campaign (cpu or cuda; default: the campaign's, cpu)
#   NIGHTLY_MINIMIZE_S    per-finding shrink budget after exploration (campaign default if unset)
#   NIGHTLY_CORPUS        case files: shard 0's campaign runs them, every fuzzer starts from them
#                         (default: corpus/cases)
#   NIGHTLY_KNOWN         what the report files under Known (--known; default: corpus/expectations.json;
#                         "none": no known list); e.g. last night's merged campaign directory
#   NIGHTLY_STORE         a findings store across nights (flce campaign --store; docs/nights.md): its
#                         open findings are known and re-run first, the shard records into it (SQLite:
#                         shards writing at once wait for each other); NIGHTLY_NIGHT the night's label
#                         (default: OUT_ROOT's folder name, which the merge uses too)
#   NIGHTLY_FUZZER        libFuzzer binary (default: $FLCE_BUILD/fuzz/subject_fuzzer); "none": skip
#   NIGHTLY_FUZZ_SECONDS  libFuzzer time budget (default: 600); NIGHTLY_FUZZ_RUNS optional
#   NIGHTLY_PROPERTIES    subject-property binary (default: $FLCE_BUILD/properties/flce_subject_properties;
#                         "none": skip); NIGHTLY_PROP_CASES cases per property (>= 10, default: 50),
#                         NIGHTLY_PROP_SEED its RapidCheck seed (default: random, printed in the log)
# OUT_ROOT/shard-INDEX/done is written last: a shard without it did not finish (cancelled,
# timed out, failed), which scripts/nightly_merge.sh reports.
# Exit: 0 when all ran (findings are in the reports and logs, not in the exit code), else non-zero.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)  # defaults only; paths given are relative to the caller
die() { printf 'nightly_shard: %s\n' "$*" >&2; exit 2; }
log() { printf '[nightly_shard %s/%s] %s\n' "$INDEX" "$COUNT" "$*" >&2; }

[[ $# -eq 3 ]] || die "usage: nightly_shard.sh INDEX COUNT OUT_ROOT"
INDEX=$1 COUNT=$2 ROOT=$3
[[ $INDEX =~ ^[0-9]+$ && $COUNT =~ ^[0-9]+$ ]] || die "INDEX '$INDEX' and COUNT '$COUNT' must be integers"
((INDEX < COUNT)) || die "INDEX $INDEX must be below COUNT $COUNT"
BUILD=${FLCE_BUILD:-$REPO/build}
FLCE=$BUILD/flce
SUBJECT=${NIGHTLY_SUBJECT:-model}
BASE=${NIGHTLY_SEED:-1}
[[ $BASE =~ ^[0-9]+$ ]] && ((BASE >= 1)) || die "NIGHTLY_SEED '$BASE' must be an integer >= 1"
SEED=$((BASE + INDEX))
CORPUS=${NIGHTLY_CORPUS:-$REPO/corpus/cases}
FUZZER=${NIGHTLY_FUZZER:-$BUILD/fuzz/subject_fuzzer}
[[ -x $FLCE ]] || die "$FLCE: not built (ninja -C $BUILD flce)"
[[ $FUZZER == none || -x $FUZZER ]] || die "$FUZZER: not built (ninja -C $BUILD $(basename "$FUZZER")), or NIGHTLY_FUZZER=none"
[[ -d $CORPUS ]] || die "NIGHTLY_CORPUS $CORPUS: not a directory"
PROP_CASES=${NIGHTLY_PROP_CASES:-50}
# Fewer than 10 starts every case at RapidCheck size 0 (BT = 1), where the BT > 1 properties give up.
[[ $PROP_CASES =~ ^[0-9]+$ ]] && ((PROP_CASES >= 10)) || die "NIGHTLY_PROP_CASES '$PROP_CASES' must be an integer >= 10"
SHARD=$ROOT/shard-$INDEX
mkdir -p "$SHARD/fuzz-corpus" "$SHARD/fuzz-artifacts"
rm -f "$SHARD/done"  # a rerun (a requeued task) is unfinished until it ends
# Slurm counts requeues; a restarted task resumes below, and the log says so.
((${SLURM_RESTART_COUNT:-0} > 0)) && log "restart ${SLURM_RESTART_COUNT} of Slurm job ${SLURM_JOB_ID:-?}: resuming"

# 1. Campaign. Only shard 0 runs the corpus files: on every shard they would be the same
#    cases, counted COUNT times in the merge.
args=(campaign --minutes "${NIGHTLY_MINUTES:-60}" --out "$SHARD/campaign" --subject "$SUBJECT" --seed "$SEED" --quiet)
((INDEX == 0)) && args+=(--corpus "$CORPUS")
[[ -n ${NIGHTLY_SUBJECT_GIT:-} ]] && args+=(--subject-git "$NIGHTLY_SUBJECT_GIT")
[[ -n ${NIGHTLY_MAX_CASES:-} ]] && args+=(--max-cases "$NIGHTLY_MAX_CASES")
[[ -n ${NIGHTLY_WORKERS:-} ]] && args+=(--workers "$NIGHTLY_WORKERS")
if [[ -n ${NIGHTLY_DEVICE:-} ]]; then
  [[ $NIGHTLY_DEVICE =~ ^(cpu|cuda)$ ]] || die "NIGHTLY_DEVICE '$NIGHTLY_DEVICE' must be cpu or cuda"
  args+=(--device "$NIGHTLY_DEVICE")
fi
[[ -n ${NIGHTLY_MINIMIZE_S:-} ]] && args+=(--minimize-s "$NIGHTLY_MINIMIZE_S")
KNOWN=${NIGHTLY_KNOWN:-$REPO/corpus/expectations.json}
[[ $KNOWN == none ]] || args+=(--known "$KNOWN")
[[ -n ${NIGHTLY_STORE:-} ]] && args+=(--store "$NIGHTLY_STORE" --night "${NIGHTLY_NIGHT:-$(basename "$ROOT")}")
log "flce ${args[*]}"
rc=0
"$FLCE" "${args[@]}" || rc=$?
((rc <= 1)) || die "flce campaign failed (exit $rc); see above"

# 2. libFuzzer. New inputs go to the first directory (this shard's); the corpus is read only.
if [[ $FUZZER != none ]]; then
  export FLCE_FUZZ_SUBJECT=${FLCE_FUZZ_SUBJECT:-$SUBJECT}
  fargs=(-seed="$SEED" -max_total_time="${NIGHTLY_FUZZ_SECONDS:-600}" -max_len=2048 -print_final_stats=1
         -artifact_prefix="$SHARD/fuzz-artifacts/")
  [[ -n ${NIGHTLY_FUZZ_RUNS:-} ]] && fargs+=(-runs="$NIGHTLY_FUZZ_RUNS")
  log "$FUZZER ${fargs[*]} $SHARD/fuzz-corpus $CORPUS"
  rc=0
  "$FUZZER" "${fargs[@]}" "$SHARD/fuzz-corpus" "$CORPUS" >"$SHARD/fuzz.log" 2>&1 || rc=$?
  ((rc == 0)) || die "$FUZZER exit $rc (a crash leaves its input in $SHARD/fuzz-artifacts/); log: $SHARD/fuzz.log"
  log "fuzz corpus: $(find "$SHARD/fuzz-corpus" -type f | wc -l) inputs"
fi
# 3. Subject properties on a random seed (CI runs them on one fixed seed). A failure prints
#    RapidCheck's reproduce string and the report table (with the ladder) into the log; triage
#    it and pin the case in corpus/expectations.json.
PROPS=${NIGHTLY_PROPERTIES:-$BUILD/properties/flce_subject_properties}
if [[ $PROPS != none && -x $PROPS ]]; then
  pseed=${NIGHTLY_PROP_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
  log "subject properties: RC_PARAMS=seed=$pseed max_success=$PROP_CASES"
  rc=0
  FLCE_PROP_SUBJECT=$SUBJECT RC_PARAMS="seed=$pseed max_success=$PROP_CASES" \
    "$PROPS" >"$SHARD/properties.log" 2>&1 || rc=$?
  ((rc == 0)) && log "subject properties: passed" ||
    log "subject properties: FAILED (exit $rc); reproduce strings in $SHARD/properties.log"
fi
date -u +%FT%TZ >"$SHARD/done"
log "done: $SHARD"
