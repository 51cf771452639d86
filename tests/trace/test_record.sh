#!/usr/bin/env bash
# llcprobe trace end to end: real programs under valgrind's lackey. Counts
# must be plausible for what the program does, its exit status (or signal)
# must be reported, --show/--dump must agree with the recording, and a
# SIGTERM must leave neither output nor processes behind.
. "$(dirname "$0")/../cli_lib.sh"
command -v valgrind >/dev/null || { echo "skip: valgrind not installed"; exit 77; }
cc=$(command -v cc || command -v gcc || command -v clang-14) || { echo "skip: no C compiler"; exit 77; }
chmod 755 "$tmp"
field() { sed -n "s/^$1: \([0-9]*\).*/\1/p" "$2"; }

# A program whose access counts are known: 20000 iterations, each one load
# and one store of 4 bytes (plus libc start-up, tens of thousands more).
cat >"$tmp/prog.c" <<'C'
#include <stdlib.h>
#include <signal.h>
#include <string.h>
static volatile int a[20000];
int main(int argc, char **argv)
{
    for (int i = 0; i < 20000; i++)
        a[i] = a[(i * 7) % 20000] + 1;
    if (argc > 1 && strcmp(argv[1], "segv") == 0)
        raise(SIGSEGV);
    return argc > 1 ? atoi(argv[1]) : 0;
}
C
"$cc" -O1 -o "$tmp/prog" "$tmp/prog.c" || { echo "skip: cannot compile"; exit 77; }

"$bin" trace -q -o "$tmp/p.trace" -- "$tmp/prog" 3 >"$tmp/sum" 2>"$tmp/err"; rc=$?
cat "$tmp/sum"
[ $rc = 0 ] && ok "recorded (exit 0)" || bad "llcprobe exit $rc: $(cat "$tmp/err")"
grep -q "^exit status: 3$" "$tmp/sum" && ok "exit status 3 reported" || bad "exit status not 3"
[ -s "$tmp/err" ] && bad "stderr not empty: $(cat "$tmp/err")"
ni=$(field instructions "$tmp/sum"); nl=$(field loads "$tmp/sum"); ns=$(field stores "$tmp/sum")
nrec=$(field records "$tmp/sum"); tb=$(field "trace bytes" "$tmp/sum"); lb=$(field "lackey text bytes parsed" "$tmp/sum")
[ "${ni:-0}" -gt 100000 ] && [ "$ni" -lt 5000000 ] && ok "instructions $ni" || bad "instructions ${ni:-?}"
[ "${nl:-0}" -gt 20000 ] && ok "loads $nl" || bad "loads ${nl:-?}"
[ "${ns:-0}" -gt 20000 ] && ok "stores $ns" || bad "stores ${ns:-?}"
[ "$tb" = "$(stat -c %s "$tmp/p.trace")" ] && ok "trace bytes = file size" || bad "trace bytes $tb"
[ $((lb)) -gt $((10 * tb)) ] && ok "lackey text $lb > 10 x trace $tb" || bad "compression: $lb vs $tb"

"$bin" trace --show "$tmp/p.trace" --verify >"$tmp/show" || bad "--show failed"
for f in instructions loads stores modifies records; do
  [ "$(field $f "$tmp/show")" = "$(field $f "$tmp/sum")" ] || bad "--show $f differs"
done
grep -q "^recorder: lackey (llcprobe " "$tmp/show" && ok "recorder" || bad "recorder line"
grep -q "^command: $tmp/prog 3$" "$tmp/show" && ok "command" || bad "command line"
grep -q "^page size: $(getconf PAGESIZE)$" "$tmp/show" && ok "page size" || bad "page size"
grep -q "^exit status: 3$" "$tmp/show" && ok "--show exit status" || bad "--show exit status"
grep -q "^verified: ok ($nrec records" "$tmp/show" && ok "verified" || bad "--verify"
"$bin" trace --show "$tmp/p.trace" --dump 6 | tail -6 >"$tmp/dump"
grep -Eqc '^(I  [0-9a-f]{8,},[0-9]+| [LSM] [0-9a-f]{8,},[0-9]+)$' "$tmp/dump" &&
  [ "$(grep -Ec '^(I  [0-9a-f]{8,},[0-9]+| [LSM] [0-9a-f]{8,},[0-9]+)$' "$tmp/dump")" = 6 ] &&
  ok "--dump 6 prints 6 lackey-format records" || { bad "--dump"; cat "$tmp/dump"; }

# A signal death is reported as such.
"$bin" trace -q -o "$tmp/s.trace" -- "$tmp/prog" segv >"$tmp/sum2" 2>"$tmp/err2"; rc=$?
[ $rc = 0 ] && grep -q "^exit status: 139 (killed by signal 11, SIGSEGV)$" "$tmp/sum2" &&
  ok "SIGSEGV reported" || bad "signal death: rc $rc, $(grep exit "$tmp/sum2")"

# SIGTERM: the program's group is stopped, the partial output removed.
cp /bin/sleep "$tmp/sleep-llc-trace-$$"
"$bin" trace -q -o "$tmp/t.trace" -- "$tmp/sleep-llc-trace-$$" 30 >/dev/null 2>"$tmp/err3" &
pid=$!
sleep 2
kill -TERM $pid
wait $pid; rc=$?
[ $rc = 143 ] && ok "SIGTERM exits 143" || bad "SIGTERM exit $rc"
grep -q "stopped by signal 15; partial output removed" "$tmp/err3" || bad "SIGTERM message: $(cat "$tmp/err3")"
ls "$tmp" | grep -q '^t\.trace' && bad "partial output left: $(ls "$tmp")"
sleep 0.5
# The bracket keeps grep from finding its own command line.
left=$(grep -l "sleep-llc-[t]race-$$" /proc/[0-9]*/cmdline 2>/dev/null || true)
[ -z "$left" ] && ok "no traced process left" || bad "processes left: $left"

# Under sudo the program runs as the invoking user and gets the file.
if [ "$(id -u)" = 0 ] && id -u nobody >/dev/null 2>&1; then
  uid=$(id -u nobody); gid=$(id -g nobody)
  # Outputs are created as that user, so only where the user may write.
  chmod 711 "$tmp" && mkdir "$tmp/user" && chown "$uid:$gid" "$tmp/user"
  SUDO_UID=$uid SUDO_GID=$gid "$bin" trace -q -o "$tmp/user/u.trace" -- /usr/bin/id -u >"$tmp/sum4" 2>&1
  head -1 "$tmp/sum4" | grep -qx "$uid" && ok "program ran as uid $uid" || bad "uid: $(head -1 "$tmp/sum4")"
  [ "$(stat -c %u "$tmp/user/u.trace")" = "$uid" ] && ok "trace owned by $uid" || bad "owner of trace"
  SUDO_UID=$uid SUDO_GID=$gid "$bin" trace -q --as-root -o "$tmp/user/r.trace" -- /usr/bin/id -u >"$tmp/sum5" 2>&1
  head -1 "$tmp/sum5" | grep -qx 0 && ok "--as-root keeps root" || bad "--as-root: $(head -1 "$tmp/sum5")"
fi
exit $fail
