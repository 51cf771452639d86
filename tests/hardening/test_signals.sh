#!/usr/bin/env bash
# SIGINT, SIGTERM and SIGHUP for every command that runs a program or a long
# simulation: exit 128 + the signal with one line on stderr, the program's
# whole process group gone, no temporaries (TMPDIR and the output
# directory), no tracefs mount left, and what was written said.
. "$(dirname "$0")/../cli_lib.sh"

export TMPDIR=$tmp/tmpdir
mkdir "$TMPDIR" "$tmp/out"
mounts_before=$(grep -c tracefs /proc/mounts)

# A program that leaves a child behind and burns CPU; it records its own
# pid and its child's so the test can see that both are gone.
cat >"$tmp/prog.sh" <<'EOF2'
#!/bin/sh
sleep 300 &
echo $! >>"$1"
echo $$ >>"$1"
while :; do :; done
EOF2
chmod 755 "$tmp/prog.sh"

# run_case NAME SIGNAL EXPECTED-STDERR-PATTERN -- LLCPROBE-ARGS (with @PIDS@
# standing for the pid file).
run_case() {
  local name=$1 sig=$2 pattern=$3
  shift 4
  local pids=$tmp/pids.$RANDOM
  : >"$pids"
  local args=() a
  for a in "$@"; do args+=("${a//@PIDS@/$pids}"); done
  "$bin" "${args[@]}" >"$tmp/stdout" 2>"$tmp/stderr" &
  local probe=$!
  # Started when the program has written both pids (valgrind takes a while).
  local i
  for i in $(seq 1 300); do
    [ "$(wc -l <"$pids")" -ge 2 ] && break
    kill -0 "$probe" 2>/dev/null || break
    sleep 0.1
  done
  sleep 0.5
  kill -s "$sig" "$probe"
  local t0=$SECONDS
  # A probe that ignores the signal is killed after 20 s (and fails below).
  ( sleep 20; kill -KILL "$probe" 2>/dev/null ) &
  local watchdog=$!
  wait "$probe"
  local rc=$? want
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
  check_rc "$name $sig: exit code" "$want" "$rc"
  check "$name $sig: stopped within 10 s" '[ $((SECONDS - t0)) -le 10 ]'
  check "$name $sig: one line on stderr" '[ "$(grep -v "^llcprobe: warning" "$tmp/stderr" | wc -l)" -eq 1 ]'
  check "$name $sig: says what was written ($(tail -1 "$tmp/stderr"))" 'grep -Eq "$pattern" "$tmp/stderr"'
  # Dead is dead: a zombie waiting for init to reap it counts as gone.
  local left= p
  for p in $(cat "$pids"); do
    if kill -0 "$p" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
      left="$left $p($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null))"
    fi
  done
  check "$name $sig: program and its child gone" '[ -z "$left" ]'
  for p in $left; do kill -KILL "${p%%(*}" 2>/dev/null; done
  check "$name $sig: no temporaries in TMPDIR" '[ -z "$(ls -A "$TMPDIR")" ]'
  check "$name $sig: no temporaries beside the outputs" '[ -z "$(ls -A "$tmp/out" | grep -i tmp)" ]'
  check "$name $sig: no tracefs mount left" '[ "$(grep -c tracefs /proc/mounts)" -eq "$mounts_before" ]'
}

for sig in INT TERM HUP; do
  run_case "mrc rt" $sig "nothing was written" -- mrc --sampler rt -o "$tmp/out/r" -- "$tmp/prog.sh" @PIDS@
  if command -v valgrind >/dev/null; then
    run_case "mrc lackey" $sig "nothing was written" -- mrc --sampler trace -o "$tmp/out/l" -- "$tmp/prog.sh" @PIDS@
    run_case "trace" $sig "partial output removed" -- trace -q -o "$tmp/out/t.trace" -- "$tmp/prog.sh" @PIDS@
  fi
  run_case "phase" $sig "marked incomplete|nothing was written" -- phase -q -o "$tmp/out/p" -- "$tmp/prog.sh" @PIDS@
  if [ -s "$tmp/out/p.phase.json" ]; then
    jcheck "phase $sig: partial result marked incomplete" "$tmp/out/p.phase.json" \
      'd["complete"] is False and d["stopped_by_signal"] > 0'
    rm -f "$tmp/out"/p.phase.*
  fi
done

# phase mounts tracefs only when it is not mounted (and it may, as root);
# it must not stay mounted, whether phase ends normally or by a signal.
if [ "$(id -u)" -eq 0 ] && [ "$mounts_before" -eq 0 ] && [ -d /sys/kernel/tracing ]; then
  "$bin" phase -q -o "$tmp/out/m" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' \
    >"$tmp/stdout" 2>&1
  check "phase: tracefs it mounted is unmounted again" '[ "$(grep -c tracefs /proc/mounts)" -eq 0 ]'
  if grep -q "mounted it at" "$tmp/stdout"; then ok "phase: it did mount tracefs"; fi
  rm -f "$tmp/out"/m.phase.*
else
  echo "skip: tracefs unmount check needs root and tracefs not mounted (mounts: $mounts_before)"
fi

# The simulator: a run far too long to finish ends at the signal.
for sig in INT TERM HUP; do
  "$bin" sim --preset intel8 --workload stream:size=64M --duration 1e12 -q -o "$tmp/out/s.json" \
    >"$tmp/stdout" 2>"$tmp/stderr" &
  probe=$!
  sleep 2
  kill -s "$sig" "$probe"
  t0=$SECONDS
  ( sleep 20; kill -KILL "$probe" 2>/dev/null ) &
  watchdog=$!
  wait "$probe"
  rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
  check_rc "sim $sig: exit code" "$want" "$rc"
  check "sim $sig: stopped within 5 s" '[ $((SECONDS - t0)) -le 5 ]'
  check "sim $sig: one line, nothing written" '[ "$(wc -l <"$tmp/stderr")" -eq 1 ] && grep -q "nothing was written" "$tmp/stderr"'
  check "sim $sig: no output or temporary" '[ -z "$(ls -A "$tmp/out")" ]'
done
exit $fail
