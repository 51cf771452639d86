#!/usr/bin/env bash
# Root writing in a world-writable directory: a planted symlink at a
# temporary's name is never followed, files are created with explicit modes
# (no umask changes), and the hugepage reservation lock is neither planted
# in /tmp nor waited on forever.
. "$(dirname "$0")/../cli_lib.sh"

cat >"$tmp/cyc.profile" <<'P'
llcprobe-rt-profile 1
rate 0.01
seed 3
refs 60000
samples 600
threads 1
command cyclic 2000 lines
rdhist 1 inf=20 1984:580
P
ww=$tmp/ww
mkdir "$ww" && chmod 1777 "$ww"
printf 'precious\n' >"$tmp/victim"

# The PNG temporary used to be PREFIX.mrc.png.tmp, opened through a symlink.
if command -v gnuplot >/dev/null; then
  ln -s "$tmp/victim" "$ww/x.mrc.png.tmp"
  "$bin" mrc --profile "$tmp/cyc.profile" -o "$ww/x" >"$tmp/out" 2>"$tmp/err" \
    || bad "mrc -o in a world-writable dir: $(cat "$tmp/err")"
  check "PNG temporary symlink not followed" '[ "$(cat "$tmp/victim")" = precious ]'
  check "PNG written" 'head -c 4 "$ww/x.mrc.png" | grep -q PNG'
  check "planted symlink left as it was" '[ -L "$ww/x.mrc.png.tmp" ]'
  check "no temporaries left" '[ -z "$(ls "$ww" | grep -v "^x\.mrc\.\(json\|csv\|png\|png\.tmp\)$")" ]'
else
  echo "skip: PNG checks need gnuplot"
fi

# Modes come from open(..., 0666) and the umask; llcprobe never calls umask().
(umask 027 && "$bin" mrc --profile "$tmp/cyc.profile" -o "$tmp/m" >/dev/null 2>&1)
check "JSON mode follows the umask (0640)" '[ "$(stat -c %a "$tmp/m.mrc.json")" = 640 ]'
if command -v strace >/dev/null && strace -f -o /dev/null true 2>/dev/null; then
  strace -f -e trace=umask -o "$tmp/strace" "$bin" mrc --profile "$tmp/cyc.profile" \
    -o "$tmp/s" >/dev/null 2>&1
  check "no umask() call while writing outputs" '! grep -q "umask(" "$tmp/strace"'
else
  echo "skip: umask check needs a working strace"
fi

# The hugepage lock: only `info` as root with no free hugepage takes it.
free_pages=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
if [ "$(id -u)" -ne 0 ]; then
  echo "skip: hugepage lock checks need root"
elif [ "${free_pages:-1}" -ne 0 ]; then
  echo "skip: hugepage lock checks need an empty pool (HugePages_Free is $free_pages)"
else
  # The old place, planted: root must not create anything through it.
  planted=
  if [ ! -e /tmp/llcprobe-hugepages.lock ] && ln -s "$tmp/created-by-root" /tmp/llcprobe-hugepages.lock; then
    planted=1
  fi
  "$bin" info --json >"$tmp/info.json" 2>"$tmp/info.err" || bad "info: $(cat "$tmp/info.err")"
  [ -n "$planted" ] && rm -f /tmp/llcprobe-hugepages.lock
  if [ -n "$planted" ]; then
    check "no file created through a lock symlink in /tmp" '[ ! -e "$tmp/created-by-root" ]'
  fi
  check "lock lives in /run, root's own" '[ "$(stat -c %U:%a /run/llcprobe-hugepages.lock)" = root:600 ]'
  # Held by another process: info gives up after the timeout and names it.
  # A holder that takes the lock itself (/proc/locks names the locker).
  "$python" -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)' \
    /run/llcprobe-hugepages.lock &
  holder=$!
  sleep 0.5
  start=$(date +%s)
  timeout 60 "$bin" info >"$tmp/info2" 2>&1
  rc=$?
  took=$(( $(date +%s) - start ))
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
  check_rc "info with the lock held finishes" 0 "$rc"
  check "info waited a bounded time (${took} s)" '[ "$took" -lt 30 ]'
  check "the holder is named" 'grep -q "held by process $holder (python" "$tmp/info2"'
fi
exit $fail
