#!/usr/bin/env bash
# Fuzzes every input parser: builds the libFuzzer harnesses of tests/fuzz
# (clang, -fsanitize=fuzzer,address,undefined) into build-fuzz/, runs each
# over its corpus once (ctest: seeds and the inputs of crashes already
# fixed), then fuzzes each for SECONDS (default 10) starting from its corpus.
# Prints per harness the executions, coverage (libFuzzer's cov: edges and
# ft: features) and crashes; a crash's input is kept in build-fuzz/crashes/.
# Exit 1 if anything crashed. The last lines are the headline figures.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]   (HARNESS: e.g. mapfile)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; exit 0 ;; esac
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
shift || true
case $secs in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [HARNESS...]" >&2; exit 2 ;; esac

# clang and libFuzzer's runtime (Debian ships it apart from clang).
fuzzer_links() {
  command -v clang >/dev/null &&
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; return (int)(n & 0); }\n' |
      clang -x c - -fsanitize=fuzzer -o "$1" 2>/dev/null
}
probe=$(mktemp)
trap 'rm -f "$probe"' EXIT
if ! fuzzer_links "$probe"; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  command -v clang >/dev/null || { "${sudo_cmd[@]}" apt-get install -y -q clang >/dev/null ||
    { "${sudo_cmd[@]}" apt-get update -q >/dev/null && "${sudo_cmd[@]}" apt-get install -y -q clang >/dev/null; }; }
  rt="libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
  echo "fuzz: installing $rt" >&2
  "${sudo_cmd[@]}" apt-get install -y -q "$rt" >/dev/null ||
    { "${sudo_cmd[@]}" apt-get update -q >/dev/null && "${sudo_cmd[@]}" apt-get install -y -q "$rt" >/dev/null; }
  fuzzer_links "$probe" || { echo "fuzz: clang cannot link -fsanitize=fuzzer" >&2; exit 1; }
fi

build="build-fuzz"
cmake -S . -B "$build" -DLLCPROBE_FUZZ=ON -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzzers >/dev/null
echo "== fuzz: every corpus input once (ctest, $build/)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"

if (($# == 0)); then
  for bin in "$build"/fuzz_*; do set -- "$@" "${bin##*/fuzz_}"; done
fi
echo "== fuzz: $secs s per harness"
work=$(mktemp -d)
trap 'rm -f "$probe"; rm -rf "$work"' EXIT
for name in "$@"; do
  [ -x "$build/fuzz_$name" ] || { echo "fuzz: no harness $name" >&2; exit 2; }
done

# One harness for SECONDS; its figures go to $work/NAME/result, its report
# (crash inputs, log tail) to $work/NAME/report, printed in order below.
fuzz_one() {
  local name=$1 bin=$build/fuzz_$1 rc=0
  mkdir -p "$work/$name/corpus" "$work/$name/crashes"
  # New inputs go to the scratch corpus (first directory); the tree's stays as it is.
  # -close_fd_mask=3: the parsers' error lines are not libFuzzer's output.
  "$bin" -max_total_time="$secs" -timeout=25 -close_fd_mask=3 -print_final_stats=1 \
    -artifact_prefix="$work/$name/crashes/" "$work/$name/corpus" "tests/fuzz/corpus/$name" \
    >"$work/$name/log" 2>&1 || rc=$?
  local execs cov crashes slow
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name/log" | tail -n1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$work/$name/log" | tail -n1 || true)
  # crash-, leak-, timeout-, oom- inputs fail; slow-unit- ones (over 10 s, load
  # dependent) are kept and counted but do not.
  crashes=$(find "$work/$name/crashes" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "$work/$name/crashes" -type f -name 'slow-unit-*' | wc -l)
  if ((rc != 0 && crashes == 0)); then
    crashes=1 # died without leaving an input (out of memory in the harness itself, ...)
  fi
  {
    if ((slow > 0)); then
      mkdir -p "$build/crashes/$name"
      cp "$work/$name/crashes/"slow-unit-* "$build/crashes/$name/"
      echo "fuzz: $name: $slow input(s) took over 10 s, kept in $build/crashes/$name/"
    fi
    if ((crashes > 0)); then
      mkdir -p "$build/crashes/$name"
      cp "$work/$name/crashes/"* "$build/crashes/$name/" 2>/dev/null || true
      grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$work/$name/log" | head -n 5 || true
      echo "fuzz: $name: exit $rc; inputs kept in $build/crashes/$name/, log:"
      tail -n 30 "$work/$name/log"
    fi
  } >"$work/$name/report"
  echo "${execs:-0} ${crashes} ${slow} ${cov:-cov: ? ft: ?}" >"$work/$name/result"
}

# As many harnesses at once as there are cores: each is one process, and
# the budget is wall time, so running them side by side costs no coverage
# per harness beyond what the shared machine's load already does.
running=0
for name in "$@"; do
  if ((running >= $(nproc))); then
    wait -n || true # a harness that failed says so by leaving no result
    running=$((running - 1))
  fi
  fuzz_one "$name" &
  running=$((running + 1))
done
wait || true

total_execs=0 total_crashes=0 total_slow=0
for name in "$@"; do
  [ -s "$work/$name/result" ] || { echo "fuzz: $name: the harness's run left no result" >&2; exit 1; }
  read -r execs crashes slow cov <"$work/$name/result"
  cat "$work/$name/report" >&2
  printf '%-14s execs %10s  %-22s crashes %s  slow %s\n' "$name" "$execs" "$cov" "$crashes" "$slow"
  total_execs=$((total_execs + execs))
  total_crashes=$((total_crashes + crashes))
  total_slow=$((total_slow + slow))
done
echo "fuzz_harnesses: $# 1"
echo "fuzz_seconds_per_harness: $secs s"
echo "fuzz_execs_total: $total_execs 1"
echo "fuzz_slow_inputs: $total_slow 1"
echo "fuzz_crashes: $total_crashes 1"
((total_crashes == 0))
