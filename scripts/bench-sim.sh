#!/usr/bin/env bash
# Simulator throughput (amd32 preset, LRU and DRRIP LLC, L2 on; see
# tests/sim/bench_sim.c for the access stream). Builds bench_sim in build/
# (configuring it if missing; BUILD_DIR=dir to use another build tree). The
# last two lines are the headline figures:
#   sim_lru_accesses_per_s: N 1/s
#   sim_drrip_accesses_per_s: N 1/s
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j2 --target bench_sim >/dev/null
exec "$build/tests/sim/bench_sim"
