#!/usr/bin/env bash
# The whole test suite: setup, build, ctest (normal build, then ASan+UBSan),
# then a short fuzzing run of every input parser.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# The CLI tests' JSON checks call python3 often; a shim on PATH (pyenv) costs
# ~0.6 s a call, so they use the interpreter it resolves to (tests/cli_lib.sh).
LLCPROBE_PYTHON=$(python3 -c 'import sys; print(sys.executable)')
export LLCPROBE_PYTHON

scripts/setup.sh
# Test-only packages: the study report is checked in a real headless browser
# (tests/studycli/test_report_browser.sh). Not part of setup: ~350 MB.
if ! command -v chromium >/dev/null 2>&1; then
  echo "test: installing chromium (the study report's browser test)" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get install -y -q chromium >/dev/null ||
    { "${sudo_cmd[@]}" apt-get update -q >/dev/null && "${sudo_cmd[@]}" apt-get install -y -q chromium >/dev/null; }
fi
echo "== ctest (build/)"
ctest --test-dir build --output-on-failure -j"$jobs" --timeout 600

scripts/setup.sh --sanitize
echo "== ctest (build-asan/, AddressSanitizer + UndefinedBehaviorSanitizer)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 900

# Every parser fuzzed on every run, a short fixed budget (scripts/fuzz.sh:
# corpus inputs once, then 10 s per harness; builds build-fuzz/ with clang).
echo "== fuzz (build-fuzz/, libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer)"
scripts/fuzz.sh 10
