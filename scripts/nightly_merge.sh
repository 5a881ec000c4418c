#!/usr/bin/env bash
# Merges the shards written by scripts/nightly_shard.sh:
#   scripts/nightly_merge.sh OUT_ROOT [COUNT]   -> OUT_ROOT/merged/{campaign,fuzz-corpus}
# campaigns with `flce campaign-merge`, libFuzzer corpora with the fuzzer's -merge=1 (keeps
# the inputs that add features). COUNT: shard-0 .. shard-(COUNT-1) are expected. One with no
# campaign is "missing", one without its done marker "unfinished" (cancelled, timed out,
# failed; its committed cases are merged): the rest is merged all the same, each such shard
# is named on stderr, in merged/missing.txt and at the end of merged/campaign/report.md
# (with its Slurm state when NIGHTLY_ARRAY_JOB names the array), and the exit is 3.
# Each output is built aside and swapped in: a failed merge leaves the previous one intact.
# Settings: FLCE_BUILD, NIGHTLY_SUBJECT, NIGHTLY_FUZZER, NIGHTLY_STORE and NIGHTLY_NIGHT as for
# nightly_shard.sh; with NIGHTLY_STORE the merged campaign is recorded in the store as that night
# (`flce store record`: the findings every shard saw, under one night label).
# Exit: 0 when merged (findings are in the report), 3 merged with shards missing, else non-zero.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)  # defaults only; paths given are relative to the caller
die() { printf 'nightly_merge: %s\n' "$*" >&2; exit 2; }
log() { printf '[nightly_merge] %s\n' "$*" >&2; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: nightly_merge.sh OUT_ROOT [COUNT]"
ROOT=$1
BUILD=${FLCE_BUILD:-$REPO/build}
FUZZER=${NIGHTLY_FUZZER:-$BUILD/fuzz/subject_fuzzer}
[[ -d $ROOT ]] || die "$ROOT: not a directory"
[[ $# -lt 2 || $2 =~ ^[1-9][0-9]*$ ]] || die "COUNT '$2' must be a positive integer"
# A task's state while the scheduler still remembers it (scontrol: no accounting needed).
slurm_state() {
  [[ -n ${NIGHTLY_ARRAY_JOB:-} ]] && command -v scontrol >/dev/null || return 0
  scontrol -o show job "${NIGHTLY_ARRAY_JOB}_$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sed 's/^/, Slurm /' || true
}
missing=()
if [[ $# -eq 2 ]]; then
  for ((i = 0; i < $2; i++)); do
    if [[ ! -f $ROOT/shard-$i/campaign/state.json ]]; then
      missing+=("shard-$i: missing (shard $i of $2 did not run$(slurm_state "$i"))")
    elif [[ ! -f $ROOT/shard-$i/done ]]; then
      missing+=("shard-$i: unfinished (shard $i of $2 started but did not end$(slurm_state "$i"); its committed cases are merged)")
    fi
  done
fi
shopt -s nullglob
shards=()
for s in "$ROOT"/shard-*; do [[ -f $s/campaign/state.json ]] && shards+=("$s"); done
((${#shards[@]})) || die "$ROOT: no shard-*/campaign/state.json${missing:+ (${missing[*]})}"
mkdir -p "$ROOT/merged"

# 1. Campaigns.
campaigns=()
for s in "${shards[@]}"; do campaigns+=("$s/campaign"); done
rc=0
"$BUILD/flce" campaign-merge --out "$ROOT/merged/campaign" "${campaigns[@]}" || rc=$?
((rc <= 1)) || die "flce campaign-merge failed (exit $rc); nothing was replaced"
if [[ -n ${NIGHTLY_STORE:-} ]]; then
  "$BUILD/flce" store record "$NIGHTLY_STORE" "$ROOT/merged/campaign" --night "${NIGHTLY_NIGHT:-$(basename "$ROOT")}" ||
    die "flce store record $NIGHTLY_STORE failed; the merge itself is in $ROOT/merged/campaign"
fi

# 2. libFuzzer corpora.
corpora=()
for s in "${shards[@]}"; do [[ -d $s/fuzz-corpus ]] && corpora+=("$s/fuzz-corpus"); done
n=0
((${#corpora[@]})) && n=$(find "${corpora[@]}" -type f | wc -l)
if [[ $FUZZER != none ]] && ((n == 0)); then
  log "no libFuzzer inputs in any shard: corpus not merged"  # short runs may find nothing new
elif [[ $FUZZER != none ]]; then
  [[ -x $FUZZER ]] || die "$FUZZER: not built, or NIGHTLY_FUZZER=none"
  export FLCE_FUZZ_SUBJECT=${FLCE_FUZZ_SUBJECT:-${NIGHTLY_SUBJECT:-model}}
  tmp=$ROOT/merged/.fuzz-corpus.tmp.$$
  rm -rf "$tmp" && mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  log "$FUZZER -merge=1 ($n inputs in ${#corpora[@]} corpora)"
  "$FUZZER" -merge=1 -max_len=2048 "$tmp" "${corpora[@]}" >"$ROOT/merged/fuzz-merge.log" 2>&1 ||
    die "$FUZZER -merge=1 failed; log: $ROOT/merged/fuzz-merge.log"
  rm -rf "$ROOT/merged/fuzz-corpus.old"
  [[ -d $ROOT/merged/fuzz-corpus ]] && mv "$ROOT/merged/fuzz-corpus" "$ROOT/merged/fuzz-corpus.old"
  mv "$tmp" "$ROOT/merged/fuzz-corpus"
  rm -rf "$ROOT/merged/fuzz-corpus.old"
  log "merged corpus: $(find "$ROOT/merged/fuzz-corpus" -type f | wc -l) of $n inputs"
fi
rm -f "$ROOT/merged/missing.txt"
if ((${#missing[@]})); then
  printf '%s\n' "${missing[@]}" >"$ROOT/merged/missing.txt"
  { printf '\n## Missing shards (%d of %d)\n\n' "${#missing[@]}" "$2"; printf -- '* %s\n' "${missing[@]}"; } \
    >>"$ROOT/merged/campaign/report.md"
  for m in "${missing[@]}"; do log "$ROOT/$m"; done
  log "merged ${#shards[@]} shards into $ROOT/merged; ${#missing[@]} of $2 missing or unfinished"
  exit 3
fi
log "done: $ROOT/merged"
