#!/usr/bin/env bash
# mrc --sampler qemu and trace --recorder qemu, end to end:
#  - exact: on refs.c (no C library, a known stream), the qemu sampler at
#    rate 1 counts exactly the references and distinct lines the program
#    makes, and its curve is byte for byte the lackey trace sampler's and
#    that of the qemu recorder's trace (same reference definition);
#  - statistical: on a small C program the qemu and lackey samplers' curves
#    agree within sampling noise (the C library's start-up differs a little
#    between the two emulators, which is why this is not exact);
#  - threads: a two-thread program is sampled per thread, and the trace
#    recorder refuses it; a script is refused with the reason.
. "$(dirname "$0")/../cli_lib.sh" "$@"
refs=${LLCPROBE_QEMU_REFS:?}
threads=${LLCPROBE_QEMU_THREADS:?}
if ! command -v "${LLCPROBE_QEMU:-qemu-x86_64}" >/dev/null; then
  echo "skip: qemu-x86_64 is not installed (Debian package qemu-user; scripts/setup.sh installs it)"
  exit 77
fi
if [ -z "${LLCPROBE_QEMU_PLUGIN:-}" ] && [ ! -f "$(dirname "$bin")/lib/libllcprobe-qemu.so" ]; then
  echo "skip: libllcprobe-qemu.so was not built (qemu-plugin.h missing: run scripts/setup.sh)"
  exit 77
fi
has_valgrind=1
command -v valgrind >/dev/null || { has_valgrind=0; echo "note: no valgrind: lackey comparisons skipped"; }

# --- exact ---------------------------------------------------------------
"$bin" mrc -q --sampler qemu --rate 1 -o "$tmp/q" -- "$refs" >"$tmp/q.out" 2>&1
check_rc "qemu sampler runs the static program" 0 $?
# 10 passes x 64 lines x 11 references; 64 + 2 distinct lines (refs.c).
jcheck "qemu: every reference counted once" "$tmp/q.mrc.json" \
  'd["references"] == 7040 and d["samples"] == 7040 and d["source"] == "qemu"'
jcheck "qemu: distinct lines = never reused samples at rate 1" "$tmp/q.mrc.json" 'd["dangling"] == 66'
jcheck "qemu: distinct lines counted exactly (the curve's cold end)" "$tmp/q.mrc.json" 'd["distinct_lines"] == 66'
"$bin" trace -o "$tmp/q.trace" --recorder qemu -- "$refs" >"$tmp/qt.out" 2>&1
check_rc "qemu recorder" 0 $?
check "qemu recorder: 640 modifies, as lackey reports the add to memory" \
  "grep -qx 'modifies: 640' '$tmp/qt.out'"
"$bin" mrc -q --trace "$tmp/q.trace" --rate 1 -o "$tmp/qt" >/dev/null 2>&1
check "qemu trace's curve = qemu sampler's curve" "cmp -s '$tmp/q.mrc.csv' '$tmp/qt.mrc.csv'"
if [ $has_valgrind = 1 ]; then
  "$bin" mrc -q --sampler trace --rate 1 -o "$tmp/l" -- "$refs" >/dev/null 2>&1
  check_rc "lackey sampler runs the static program" 0 $?
  check "qemu sampler's curve = lackey sampler's curve (rate 1)" "cmp -s '$tmp/q.mrc.csv' '$tmp/l.mrc.csv'"
fi

# Phases: offline windows of instructions from the qemu recorder's trace,
# and the sampler's own windows of references (as the runtime's).
"$bin" trace -q -o "$tmp/w.trace" --recorder qemu -- "$threads" 1 5 >/dev/null 2>&1
check_rc "qemu recorder on a C program" 0 $?
"$bin" phase --trace "$tmp/w.trace" --window 100000 -o "$tmp/w" >"$tmp/w.out" 2>&1
check_rc "phase --trace reads the qemu recorder's trace" 0 $?
"$bin" mrc -q --sampler qemu --phases --rate 0.01 -o "$tmp/ph" -- "$threads" 1 5 >/dev/null 2>&1
check_rc "mrc --sampler qemu --phases" 0 $?
check "per-phase curves written" "[ -s '$tmp/ph.phases.csv' ]"

# --- statistical -----------------------------------------------------------
if [ $has_valgrind = 1 ]; then
  for s in qemu trace; do
    "$bin" mrc -q --sampler $s --rate 0.01 -o "$tmp/w$s" -- "$threads" 1 100 >/dev/null 2>&1
    check_rc "$s sampler on a C program" 0 $?
  done
  # Bound: 3 standard errors of the difference of two binomial proportions
  # at p = 1/2 with the smaller sample count.
  "$python" - "$tmp/wqemu.mrc" "$tmp/wtrace.mrc" <<'PY' && ok "curves agree within sampling noise" || bad "curves differ beyond sampling noise"
import csv, json, math, sys
a, b = sys.argv[1], sys.argv[2]
n = min(json.load(open(a + ".json"))["samples"], json.load(open(b + ".json"))["samples"])
bound = 3 * math.sqrt(2 * 0.25 / n)
def load(p):
    return {r["bytes"]: (float(r["statcache_miss_ratio"]), float(r["statstack_miss_ratio"]))
            for r in csv.DictReader(open(p + ".csv"))}
x, y = load(a), load(b)
d = [abs(x[k][m] - y[k][m]) for k in x if k in y for m in (0, 1)]
print("qemu vs lackey: %d samples, max |diff| %.4f, mean %.4f, bound %.4f" % (n, max(d), sum(d) / len(d), bound))
sys.exit(0 if max(d) <= bound else 1)
PY
fi

# --- threads and refusals ----------------------------------------------------
"$bin" mrc -q --sampler qemu --rate 0.01 -o "$tmp/t2" -- "$threads" 2 20 >/dev/null 2>&1
check_rc "qemu sampler on two threads" 0 $?
# Each thread: 20 passes x 4096 lines x (load + store) of its own buffer.
jcheck "both threads' references counted" "$tmp/t2.mrc.json" 'd["references"] >= 2 * 163840'
# Two threads walking one buffer: each samples its own stream, and a line
# both watch stays watched for the thread that has not reused it yet. 1000
# passes: about 82,000 samples per thread, each reused a pass later but
# the last pass's (Binomial(2 x 4096, 0.01), mean 82; 109 measured). A
# plugin that unwatched a line for both threads at the first one's reuse
# (tried: a shared watched bit cleared then) left 1082 dangling.
"$bin" mrc -q --sampler qemu --rate 0.01 -o "$tmp/t3" -- "$threads" shared 1000 >/dev/null 2>&1
check_rc "qemu sampler on two threads sharing lines" 0 $?
jcheck "no reuse lost between threads" "$tmp/t3.mrc.json" \
  'd["samples"] > 150000 and d["dangling"] < 250'
"$bin" trace -o "$tmp/t2.trace" --recorder qemu -- "$threads" 2 1 >"$tmp/t2.out" 2>&1
check "qemu recorder refuses a second thread" \
  "grep -q 'second thread' '$tmp/t2.out' && [ ! -e '$tmp/t2.trace' ]"
# A forked child (QEMU forks itself) records nothing: the profile is the
# parent's, 20 passes of 4096 lines, not the child's 200.
"$bin" mrc -q --sampler qemu --rate 0.01 -o "$tmp/f" -- "$threads" fork 20 >/dev/null 2>&1
check_rc "qemu sampler on a program that forks" 0 $?
jcheck "the parent's references only" "$tmp/f.mrc.json" \
  'd["references"] >= 81920 and d["references"] < 400000'
# The recorder too: a child that wrote into the trace or closed it at its
# exit would leave none, or a damaged one.
"$bin" trace -o "$tmp/f.trace" --recorder qemu -- "$threads" fork 2 >"$tmp/ft.out" 2>&1
check_rc "qemu recorder on a program that forks" 0 $?
"$bin" trace --show "$tmp/f.trace" --verify >"$tmp/fv.out" 2>&1
check "its trace verifies" "grep -q '^verified: ok' '$tmp/fv.out'"
printf '#!/bin/sh\ntrue\n' >"$tmp/script.sh"
chmod +x "$tmp/script.sh"
"$bin" mrc --sampler qemu -- "$tmp/script.sh" >"$tmp/s.out" 2>&1
rc=$?
check_rc "a script is refused" 1 $rc
check "the refusal says why" "grep -q 'is a script' '$tmp/s.out'"
"$bin" trace -o "$tmp/x" --recorder qemu --as-root -- "$refs" >/dev/null 2>&1
check_rc "--as-root is lackey's" 2 $?
exit $fail
