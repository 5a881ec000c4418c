#!/usr/bin/env bash
# The PR gate as a CI step: flce gate of a pull request's head against its merge base, with the
# reports where a CI job picks them up. docs/workflows/flce-pr-gate.yml calls it; CI runs it on
# CPU against a planted plug-in repository (tests/pr_gate.cmake).
#   scripts/pr_gate.sh --repo DIR --head REF --subject NAME [--target BRANCH] [--out DIR]
#                      [--python PY] [-- FLCE_GATE_FLAG...]
#   --repo     the subject's git repository (the PR checkout; only read: flce exports trees)
#   --head     the PR head (a ref or commit of --repo)
#   --subject  the subject package in that tree (e.g. liger)
#   --target   the branch the PR goes into (default: main); the base is git merge-base TARGET HEAD
#   --out      where gate.md, gate.json, gate.xml (JUnit) and cases/ go (default: gate-out)
#   --python   the subject's interpreter (its torch, triton...; default: flce's .venv)
#   after --:  more flce gate flags, e.g. --device cuda --sample 50 --seed 1
# gate.md goes to $GITHUB_STEP_SUMMARY when set (the job summary page).
# Exit as flce gate: 0 no regression, 1 regressions; 2 bad input, 3 nothing judged, 4 flce
# failed: those fail the check too, since a gate that could not judge is no pass.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
die() { printf 'pr_gate: %s\n' "$*" >&2; exit 2; }
usage="usage: pr_gate.sh --repo DIR --head REF --subject NAME [--target BRANCH] [--out DIR] [--python PY] [-- FLAGS]"

repo="" head="" subject="" target=main out=gate-out python=""
while (($#)); do
  case $1 in
    --repo | --head | --subject | --target | --out | --python)
      (($# >= 2)) || die "$1 needs a value; $usage"
      declare "${1#--}=$2"
      shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument '$1'; $usage" ;;
  esac
done
[[ -n $repo ]] || die "--repo is required (the subject's git repository); $usage"
[[ -n $head ]] || die "--head is required (the PR head: a ref or commit of --repo); $usage"
[[ -n $subject ]] || die "--subject is required (the package name, e.g. liger); $usage"
[[ -d $repo ]] && git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || die "--repo '$repo' is not a git repository"
[[ $subject =~ ^[A-Za-z_][A-Za-z0-9_.:-]*$ ]] || die "--subject '$subject' must be a package name (no commas or spaces)"
[[ -z $python || -x $python ]] || die "--python '$python' is not an executable"
FLCE=${FLCE_BUILD:-$REPO/build}/flce
[[ -x $FLCE ]] || die "$FLCE: not built (bash setup.sh --no-run)"

spec="subject=$subject,git=$(realpath "$repo")@$head${python:+,python=$python}"
rm -rf "$out"  # stale cases/ of an earlier run would pass as this run's
mkdir -p "$out"
rc=0
"$FLCE" gate --candidate "$spec" --merge-base "$target" --out "$out" --quiet "$@" >"$out/gate.log" 2>&1 || rc=$?
cat "$out/gate.log"
if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
  if [[ -f $out/gate.md ]]; then cat "$out/gate.md" >>"$GITHUB_STEP_SUMMARY"
  else printf '## flce gate: no report (exit %s)\n\n```\n%s\n```\n' "$rc" "$(tail -n 20 "$out/gate.log")" >>"$GITHUB_STEP_SUMMARY"; fi
fi
case $rc in
  0) echo "pr_gate: no regression ($out/gate.md)" ;;
  1) echo "pr_gate: regressions: see $out/gate.md; regressed cases in $out/cases/" >&2 ;;
  *) echo "pr_gate: flce gate could not judge (exit $rc); see $out/gate.log" >&2 ;;
esac
exit "$rc"
