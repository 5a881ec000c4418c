#!/usr/bin/env bash
# Merges the shards written by scripts/nightly_shard.sh:
#   scripts/nightly_merge.sh OUT_ROOT [COUNT]   -> OUT_ROOT/merged/{campaign,fuzz-corpus}
# campaigns with `flce campaign-merge`, libFuzzer corpora with the fuzzer's -merge=1 (keeps
# the inputs that add features). COUNT: require shard-0 .. shard-(COUNT-1) all present.
# Each output is built aside and swapped in: a failed merge leaves the previous one intact.
# Settings: FLCE_BUILD, NIGHTLY_SUBJECT, NIGHTLY_FUZZER, NIGHTLY_STORE and NIGHTLY_NIGHT as for
# nightly_shard.sh; with NIGHTLY_STORE the merged campaign is recorded in the store as that night
# (`flce store record`: the findings every shard saw, under one night label).
# Exit: 0 when merged (findings are in the report), else non-zero.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)  # defaults only; paths given are relative to the caller
die() { printf 'nightly_merge: %s\n' "$*" >&2; exit 2; }
log() { printf '[nightly_merge] %s\n' "$*" >&2; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: nightly_merge.sh OUT_ROOT [COUNT]"
ROOT=$1
BUILD=${FLCE_BUILD:-$REPO/build}
FUZZER=${NIGHTLY_FUZZER:-$BUILD/fuzz/subject_fuzzer}
[[ -d $ROOT ]] || die "$ROOT: not a directory"
if [[ $# -eq 2 ]]; then
  for ((i = 0; i < $2; i++)); do [[ -d $ROOT/shard-$i ]] || die "$ROOT/shard-$i: missing (shard $i of $2 did not run)"; done
fi
shopt -s nullglob
shards=("$ROOT"/shard-*)
((${#shards[@]})) || die "$ROOT: no shard-* directories"
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
log "done: $ROOT/merged"
