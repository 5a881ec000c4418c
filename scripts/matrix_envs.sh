#!/usr/bin/env bash
# Creates one venv per torch release under .venvs/ (ignored) for `flce matrix --envs .venvs`.
#   bash scripts/matrix_envs.sh                 # the default versions below
#   bash scripts/matrix_envs.sh 2.9.1 2.14.1    # others
# Idempotent: a venv whose torch already has the wanted version is left alone. The pinned
# torch (requirements.txt) is not installed twice: .venvs/torch-<pinned> links to .venv.
# Each release comes from PyPI with its CUDA wheels (~3 GB, ~1 min here); the matrix runs
# on CPU only, but the default index is what users install, so that is what is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${FLCE_MATRIX_BASE_PYTHON:-/usr/bin/python3}
VERSIONS=("$@")
# 2.8: tier 1 (core decomposition); 2.11: last release before the tier-1 fix measured on the
# GPU box; 2.12: brackets the change; 2.13: pinned; 2.15: newest on PyPI when this was written.
((${#VERSIONS[@]})) || VERSIONS=(2.8.0 2.11.0 2.12.1 2.13.0 2.15.0)
PINNED=$(sed -n 's/^torch==//p' requirements.txt)
log() { printf '[matrix_envs] %s\n' "$*" >&2; }
mkdir -p .venvs

for v in "${VERSIONS[@]}"; do
  dir=.venvs/torch-$v
  if [[ "$v" == "$PINNED" && -x .venv/bin/python ]]; then
    [[ -e $dir ]] || ln -s ../.venv "$dir"
    log "torch $v: $dir -> .venv (pinned)"
    continue
  fi
  have=$("$dir/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
  if [[ "$have" == "$v" ]]; then
    log "torch $v: $dir already set up"
    continue
  fi
  [[ -x $dir/bin/python ]] || "$PY" -m venv "$dir"
  log "torch $v: pip install torch==$v numpy into $dir"
  t0=$(date +%s)
  "$dir/bin/pip" install -q --disable-pip-version-check "torch==$v" numpy
  "$dir/bin/python" -c 'import torch; print("[matrix_envs] installed torch", torch.__version__)' >&2
  log "torch $v: $(( $(date +%s) - t0 )) s"
done
ls -d "$ROOT"/.venvs/torch-* >&2
