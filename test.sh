#!/usr/bin/env bash
# Runs every test: builds first if needed (set-up is idempotent), then ctest on 2 cores.
set -euo pipefail
cd "$(dirname "$0")"
bash setup.sh --no-run
cd build
ctest -j "${FLCE_TEST_JOBS:-2}" --output-on-failure --timeout 1500 "$@"
