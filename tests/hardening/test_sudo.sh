#!/usr/bin/env bash
# The sudo rule with a real unprivileged user made here: run as root with
# SUDO_UID/SUDO_GID set (what sudo does), llcprobe runs the target and
# helper programs as that user, and creates every output as that user,
# only where the user may write, never replacing a file they could not.
. "$(dirname "$0")/../cli_lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "skip: needs root to create a user and act as sudo"; exit 77; }
command -v useradd >/dev/null && command -v userdel >/dev/null \
  || { echo "skip: no useradd/userdel to create the test user"; exit 77; }
user=llct$$
useradd -M -N -s /usr/sbin/nologin "$user" 2>"$tmp/useradd.err" \
  || { echo "skip: useradd failed: $(cat "$tmp/useradd.err")"; exit 77; }
trap 'userdel "$user" 2>/dev/null; rm -rf "$tmp"' EXIT
uid=$(id -u "$user")
gid=$(id -g "$user")
as_sudo() { SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user "$bin" "$@"; }

chmod 711 "$tmp"
mine=$tmp/mine        # the user's own directory
mkdir "$mine" && chown "$uid:$gid" "$mine"
rootdir=$tmp/rootdir  # root's, readable by all, writable by root only
mkdir "$rootdir" && chmod 755 "$rootdir"
ww=$tmp/ww            # world-writable and sticky, like /tmp
mkdir "$ww" && chmod 1777 "$ww"
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
chmod 644 "$tmp/cyc.profile"

# Outputs are the user's, in the user's directory.
as_sudo mrc --profile "$tmp/cyc.profile" -o "$mine/x" >"$tmp/out" 2>"$tmp/err" \
  || bad "mrc -o in the user's directory: $(cat "$tmp/err")"
check "JSON owned by the user" '[ "$(stat -c %u "$mine/x.mrc.json")" = "$uid" ]'
check "CSV owned by the user" '[ "$(stat -c %u "$mine/x.mrc.csv")" = "$uid" ]'
if command -v gnuplot >/dev/null; then
  check "PNG owned by the user" '[ "$(stat -c %u "$mine/x.mrc.png")" = "$uid" ]'
fi

# A directory only root may write: refused, nothing created.
as_sudo mrc --profile "$tmp/cyc.profile" -o "$rootdir/x" >"$tmp/out" 2>"$tmp/err"
check_rc "mrc -o in root's directory refused" 1 "$?"
check "refusal says why" 'grep -q "Permission denied" "$tmp/err"'
check "nothing created in root's directory" '[ -z "$(ls -A "$rootdir")" ]'

# A root file in a sticky world-writable directory: the user could not
# replace it, so llcprobe does not either.
printf 'root data\n' >"$ww/x.mrc.json"
as_sudo mrc --profile "$tmp/cyc.profile" -o "$ww/x" >"$tmp/out" 2>"$tmp/err"
check_rc "replacing root's file in a sticky directory refused" 1 "$?"
check "root's file untouched" '[ "$(cat "$ww/x.mrc.json")" = "root data" ] && [ "$(stat -c %u "$ww/x.mrc.json")" = 0 ]'
check "no temporaries left in the sticky directory" '[ "$(ls -A "$ww")" = x.mrc.json ]'

# gnuplot (any --gnuplot program) runs as the user.
cat >"$tmp/evil.sh" <<EOF2
#!/bin/sh
id -u >"$ww/gnuplot.uid"
cat >/dev/null
exit 1
EOF2
chmod 755 "$tmp/evil.sh"
as_sudo mrc --profile "$tmp/cyc.profile" -o "$mine/g" --gnuplot "$tmp/evil.sh" >/dev/null 2>&1
check "--gnuplot program ran as the user" '[ "$(cat "$ww/gnuplot.uid" 2>/dev/null)" = "$uid" ]'

# mrc's runtime sampler: the program runs as the user (sh is not linked
# with the runtime, so mrc then refuses; the uid it ran as is what counts).
as_sudo mrc --sampler rt -- sh -c "id -u >$ww/rt.uid" >/dev/null 2>"$tmp/err"
check "mrc --sampler rt program ran as the user" '[ "$(cat "$ww/rt.uid" 2>/dev/null)" = "$uid" ]'
check "its temporary directory is gone" '! ls -d "${TMPDIR:-/tmp}"/llcprobe-mrc-* 2>/dev/null | xargs -r stat -c %u | grep -qx "$uid"'

# trace: valgrind and the program run as the user; the trace is theirs;
# a root file in root's directory is not replaced.
if command -v valgrind >/dev/null; then
  as_sudo trace -q -o "$mine/t.trace" -- sh -c "id -u >$ww/trace.uid" >"$tmp/out" 2>"$tmp/err" \
    || bad "trace as sudo: $(cat "$tmp/err")"
  check "traced program ran as the user" '[ "$(cat "$ww/trace.uid" 2>/dev/null)" = "$uid" ]'
  check "trace owned by the user" '[ "$(stat -c %u "$mine/t.trace")" = "$uid" ]'
  printf 'root trace\n' >"$rootdir/t.trace"
  as_sudo trace -q -o "$rootdir/t.trace" -- true >"$tmp/out" 2>"$tmp/err"
  check_rc "trace -o over root's file refused" 1 "$?"
  check "root's file untouched" '[ "$(cat "$rootdir/t.trace")" = "root trace" ]'
else
  echo "skip: trace checks need valgrind"
fi
# study: its output directory, CSVs and report are the user's; a directory
# only root may write is refused and nothing is made there.
mkdir "$tmp/profs"
for w in uniform:size=1M stream:size=4M; do
  "$bin" profile --backend sim --preset intel8 --workload "$w" --instructions 300000 \
    -o "$tmp/profs/${w%%:*}" -q >/dev/null 2>&1 || bad "profile $w"
done
chmod -R a+rX "$tmp/profs"
as_sudo study --cores 2 --profiles "$tmp/profs" -o "$mine/st" -q >"$tmp/out" 2>"$tmp/err" \
  || bad "study as sudo: $(cat "$tmp/err")"
check "study's directory owned by the user" '[ "$(stat -c %u "$mine/st")" = "$uid" ]'
check "study's files owned by the user" '[ -z "$(find "$mine/st" ! -uid "$uid")" ]'
as_sudo study --cores 2 --profiles "$tmp/profs" -o "$rootdir/st" -q >"$tmp/out" 2>"$tmp/err"
check_rc "study -o in root's directory refused" 1 "$?"
check "nothing made in root's directory" '[ ! -e "$rootdir/st" ]'
exit $fail
