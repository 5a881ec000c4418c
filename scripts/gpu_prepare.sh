#!/usr/bin/env bash
# Run HERE (the build host), before a GPU run: fills /.carry/ (git-ignored) with what the
# GPU box lacks, so scripts/gpu_run.sh can build and test offline there.
#   .carry/root/usr/...   RapidCheck, nlohmann-json, CLI11, fmt (+ libfmt.so.9), SQLite (the findings
#                         store; the box has no headers) from Debian .debs
#   .carry/libfuzzer/     libFuzzer runtime archives (clang 14)
#   .carry/wheels/        liger-kernel==0.8.5, cut-cross-entropy, unsloth_zoo and the pinned ruff wheels (installed there with --no-deps)
#   .carry/liger/NAME/src Liger-Kernel source trees for `flce gate` (PRs #1324, #1328 and
#                         their merge bases), exported from a mirror (LIGER_MIRROR, a bare
#                         git repository with refs/pull/*); skipped with a note when absent
#   .carry/liger-repo.git Liger-Kernel's repository (flce bisect, --subject-git)
#   .carry/slurm/*.deb    Slurm 22.05 + munge (gpu_run.sh step `slurm`: a real gres/gpu)
# Idempotent: each part is skipped when its stamp exists. Keep the whole under ~30 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CARRY=$ROOT/.carry
log() { printf '[gpu_prepare] %s\n' "$*" >&2; }
die() { printf '[gpu_prepare] FAILED: %s\n' "$*" >&2; exit 1; }
mkdir -p "$CARRY"

# 1. Header/CMake packages from Debian .debs, extracted without installing.
DEBS=(librapidcheck-dev nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 libsqlite3-dev libsqlite3-0)
if [[ ! -f $CARRY/root/.stamp ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  log "apt-get download ${DEBS[*]}"
  (cd "$tmp" && apt-get download "${DEBS[@]}" >/dev/null 2>"$tmp/apt.err") ||
    { cat "$tmp/apt.err" >&2; die "apt-get download (run apt-get update first?)"; }
  rm -rf "$CARRY/root"
  mkdir -p "$CARRY/root"
  for d in "$tmp"/*.deb; do dpkg -x "$d" "$CARRY/root" || die "dpkg -x $d"; done
  rm -rf "$CARRY/root/usr/share/doc"  # nlohmann's examples alone are megabytes
  rm -f "$CARRY/root/usr/lib/x86_64-linux-gnu/libsqlite3.a"  # flce links the shared one
  for f in usr/include/rapidcheck.h usr/include/nlohmann/json.hpp usr/include/CLI/CLI.hpp usr/include/fmt/format.h \
           usr/lib/x86_64-linux-gnu/librapidcheck.a usr/lib/x86_64-linux-gnu/libfmt.so.9 \
           usr/include/sqlite3.h usr/lib/x86_64-linux-gnu/libsqlite3.so.0; do
    [[ -e $CARRY/root/$f ]] || die "missing $f after extraction"
  done
  touch "$CARRY/root/.stamp"
else
  log "Debian packages: already extracted"
fi

# 2. libFuzzer runtime (the fuzz targets link libclang_rt.fuzzer_no_main).
if [[ ! -f $CARRY/libfuzzer/.stamp ]]; then
  mkdir -p "$CARRY/libfuzzer"
  shopt -s nullglob
  rts=(/usr/lib/llvm-14/lib/clang/14*/lib/linux/libclang_rt.fuzzer*-x86_64.a)
  shopt -u nullglob
  ((${#rts[@]})) || die "no /usr/lib/llvm-14/lib/clang/14*/lib/linux/libclang_rt.fuzzer*-x86_64.a (libclang-rt-14-dev)"
  cp "${rts[@]}" "$CARRY/libfuzzer/"
  touch "$CARRY/libfuzzer/.stamp"
else
  log "libFuzzer runtime: already copied"
fi

PIP=(python3 -m pip)
[[ -x $ROOT/.venv/bin/pip ]] && PIP=("$ROOT/.venv/bin/pip")
# 3. The liger-kernel wheel (pure Python), no dependencies.
if ! compgen -G "$CARRY/wheels/liger_kernel-0.8.5-*.whl" >/dev/null; then
  mkdir -p "$CARRY/wheels"
  log "pip download liger-kernel==0.8.5"
  "${PIP[@]}" download -q --disable-pip-version-check --no-deps liger-kernel==0.8.5 -d "$CARRY/wheels" ||
    die "pip download liger-kernel==0.8.5"
else
  log "liger wheel: already downloaded"
fi
# Pure-Python subject wheels pinned in requirements-nodeps.txt, downloaded without their dependencies:
# cut-cross-entropy (22 KB, the `cce` subject) and unsloth_zoo (2.9 MB, the `unsloth` subject).
pinned_wheel() {  # pinned_wheel DIST  (DIST as requirements-nodeps.txt spells it)
  local pin file
  pin=$(grep -E "^$1==" requirements-nodeps.txt) || die "$1 is not pinned in requirements-nodeps.txt"
  file=${1//-/_}
  if compgen -G "$CARRY/wheels/$file-${pin#*==}-*.whl" >/dev/null; then
    log "$1 wheel: already downloaded"
    return
  fi
  mkdir -p "$CARRY/wheels"
  log "pip download $pin"
  "${PIP[@]}" download -q --disable-pip-version-check --no-deps "$pin" -d "$CARRY/wheels" || die "pip download $pin"
}
pinned_wheel cut-cross-entropy
pinned_wheel unsloth_zoo

# The Python linter the test suite runs (python_lint), at the version requirements.txt pins.
RUFF=$(grep -E '^ruff==' requirements.txt | head -1)
if [[ -n $RUFF ]] && ! compgen -G "$CARRY/wheels/ruff-${RUFF#ruff==}-*.whl" >/dev/null; then
  log "pip download $RUFF (manylinux x86_64)"
  "${PIP[@]}" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --python-version 3.12 "$RUFF" -d "$CARRY/wheels" ||
    die "pip download $RUFF"
fi

# 4. Liger-Kernel trees for the gate demonstrations (never committed: .carry is ignored).
LIGER_MIRROR=${LIGER_MIRROR:-/work/.mirror/linkedin+Liger-Kernel/repo}
if [[ ! -f $CARRY/liger/.stamp ]]; then
  if git -C "$LIGER_MIRROR" rev-parse -q --verify refs/pull/1324/head >/dev/null 2>&1; then
    rm -rf "$CARRY/liger"
    for pr in 1324 1328; do
      head=refs/pull/$pr/head
      base=$(git -C "$LIGER_MIRROR" merge-base refs/heads/main "$head") || die "merge-base of PR #$pr"
      for pair in "pr$pr:$head" "base$pr:$base"; do
        name=${pair%%:*}
        mkdir -p "$CARRY/liger/$name"
        git -C "$LIGER_MIRROR" archive "${pair#*:}" src 2>/dev/null | tar -x -C "$CARRY/liger/$name" || die "export $name"
        echo "$name $(git -C "$LIGER_MIRROR" rev-parse "${pair#*:}")" >>"$CARRY/liger/REFS"
      done
    done
    touch "$CARRY/liger/.stamp"
    log "Liger trees: $(tr '\n' ';' <"$CARRY/liger/REFS")"
  else
    log "no Liger mirror at $LIGER_MIRROR (fetch github:linkedin/Liger-Kernel): gate demonstrations will be skipped"
  fi
else
  log "Liger trees: already exported"
fi
# 5. Liger-Kernel's history for `flce bisect` and --subject-git there (scripts/liger_history.sh):
#    a copy of the bare mirror (never committed: .carry is ignored). A copy, not a bundle or
#    a clone: the mirror lacks its files of 4 MiB and more (test data), so packing it fails;
#    flce exports only the src/ tree a subject runs from, which is whole.
if [[ ${FLCE_CARRY_LIGER_REPO:-1} == 1 && ! -d $CARRY/liger-repo.git ]] &&
   git -C "$LIGER_MIRROR" rev-parse -q --verify refs/heads/main >/dev/null 2>&1; then
  cp -a "$LIGER_MIRROR" "$CARRY/liger-repo.git" || die "copy $LIGER_MIRROR"
  log "Liger repository: $(git -C "$CARRY/liger-repo.git" rev-list --count main) commits on main, $(git -C "$CARRY/liger-repo.git" tag | wc -l) tags"
fi
# 6. Slurm 22.05 and munge as Debian .debs, for the `slurm` step of gpu_run.sh (issue #41: the
#    local cluster with a real gres/gpu). With the libraries they need that a base image may lack;
#    the box installs only files it does not already have.
SLURM_DEBS=(slurmd slurmctld slurm-client slurm-wlm-basic-plugins munge libmunge2 libhwloc15 libjson-c5
            liblua5.1-0 libnuma1 libyaml-0-2 libreadline8 liblz4-1 libdbus-1-3 libcap-ng0 libaudit1
            libgcrypt20 libgpg-error0 libpam0g)
if [[ ! -f $CARRY/slurm/.stamp ]]; then
  rm -rf "$CARRY/slurm"
  mkdir -p "$CARRY/slurm"
  log "apt-get download ${SLURM_DEBS[*]}"
  (cd "$CARRY/slurm" && apt-get download "${SLURM_DEBS[@]}" >/dev/null 2>"$CARRY/slurm/apt.err") ||
    { cat "$CARRY/slurm/apt.err" >&2; die "apt-get download of the Slurm packages"; }
  rm -f "$CARRY/slurm/apt.err"
  touch "$CARRY/slurm/.stamp"
else
  log "Slurm packages: already downloaded"
fi
size_kib=$(du -sk "$CARRY" | cut -f1)
log "ready: $CARRY ($((size_kib / 1024)) MiB)"
((size_kib < 48 * 1024)) || log "WARNING: .carry is over 48 MiB (a device call carries 64 MiB in all)"
