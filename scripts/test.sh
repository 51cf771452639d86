#!/usr/bin/env bash
# The whole test suite: setup, build, ctest (normal build, then ASan+UBSan).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/setup.sh
echo "== ctest (build/)"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 600

scripts/setup.sh --sanitize
echo "== ctest (build-asan/, AddressSanitizer + UndefinedBehaviorSanitizer)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 900
