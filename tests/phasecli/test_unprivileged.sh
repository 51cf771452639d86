#!/usr/bin/env bash
# llcprobe phase as an unprivileged user (perf_event_paranoid as the system
# has it): the tick source needs tracepoint access, so it must be refused
# with the reason and cpu-clock used; where only user mode may be counted,
# the windows say so. Needs root to drop to `nobody` (setpriv).
. "$(dirname "$0")/../cli_lib.sh"
helpers=$(dirname "$bin")/tests/phasecli

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "skip: needs root and setpriv to run as nobody"; exit 77
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if ! as_nobody "$bin" --version >/dev/null 2>&1; then
  echo "skip: user nobody cannot execute $bin (directory permissions)"; exit 77
fi
out=$(mktemp -d /tmp/llc-unpriv-XXXXXX)
chmod 777 "$out"
trap 'rm -rf "$out"' EXIT

as_nobody "$bin" phase --no-plot -o "$out/u" --samples 50 -- "$helpers/phasecli_twophase" 300 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$rc" != 0 ] && grep -q "not permitted" "$tmp/err" && [ "$paranoid" -ge 3 ]; then
  echo "skip: perf_event_paranoid=$paranoid forbids unprivileged perf altogether"; exit 77
fi
check "unprivileged: exit 0" '[ $rc = 0 ]'
"$python" - "$out/u.phase.json" "$paranoid" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
paranoid = int(sys.argv[2])
s = d["sampling"]
if paranoid >= 0:
    # tracepoints need paranoid -1 or CAP_PERFMON
    assert s["source"] == "cpu-clock", s
    tick = [r for r in s["refused"] if r["source"] == "tick"][0]
    assert "root" in tick["reason"] or "not permitted" in tick["reason"], tick
    print("tick refused: " + tick["reason"])
if paranoid >= 2:
    assert "user-mode CPU time only" in s.get("window_unit_note", ""), s
assert len(d["windows"]) >= 2 and d["target"]["exit_code"] == 0, d["windows"]
print("ok   unprivileged run: %s, %d windows" % (s["source"], len(d["windows"])))
PY
exit $fail
