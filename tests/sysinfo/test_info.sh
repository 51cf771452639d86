#!/usr/bin/env bash
# llcprobe info end to end: live text and JSON, the fixture machines, forced
# PMU encoding, hugepage reservation restored, error and usage exits.
. "$(dirname "$0")/../cli_lib.sh"
fx=${LLCPROBE_FIXTURES:?}

# --- live machine (no hugepage reservation: fast and side-effect free) ---
"$bin" info --no-reserve >"$tmp/live.txt" 2>"$tmp/live.err"; check_rc "live text" 0 $?
for section in "CPU" "Caches" "Last-level cache" "Hugepages" "Pagemap" "PMU" "Timing clock" "Backend"; do
  grep -q "^$section" "$tmp/live.txt" || bad "live text lacks section $section"
done
"$bin" info --json --no-reserve >"$tmp/live.json"; check_rc "live json" 0 $?
jcheck "live json format" "$tmp/live.json" 'd["format"]=="llcprobe-info" and d["version"]==1'
# With sysfs cacheinfo the geometry must be complete; a kernel without it
# (some VMs) leaves CPUID, which may not give the LLC's ways: then a reason.
jcheck "live llc geometry" "$tmp/live.json" \
  '(d["llc"]["ok"] and d["llc"]["size"]==d["llc"]["ways"]*d["llc"]["sets"]*d["llc"]["line_size"]*d["llc"]["partitions"]) or (d["source"]["caches"]=="cpuid" and "associativity" in d["llc"]["reason"])'
jcheck "live backend with reason" "$tmp/live.json" \
  'd["backend"]["auto"] in ("pmu","timing","none") and len(d["backend"]["reason"])>10'
jcheck "live pmu reason" "$tmp/live.json" \
  'd["pmu"]["open_tried"] and (d["pmu"]["opened"] or "failed" in d["pmu"]["reason"])'
jcheck "auto=pmu iff event opened" "$tmp/live.json" \
  '(d["backend"]["auto"]=="pmu")==d["pmu"]["opened"]'
jcheck "live sysfs matches CPUID" "$tmp/live.json" \
  'not d["cpu"]["ok"] or not d["llc"]["ok"] or not d["llc"]["cpuid_check"]["checked"] or d["llc"]["cpuid_check"]["mismatches"]==[]'

# --- hugepage reservation must leave nr_hugepages as it found it ---
if [ "$(id -u)" = 0 ] && [ -w /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages ]; then
  before=$(cat /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages | tr '\n' ' ')
  "$bin" info --json >"$tmp/reserve.json"; check_rc "live json with reservation" 0 $?
  after=$(cat /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages | tr '\n' ' ')
  [ "$before" = "$after" ] && ok "nr_hugepages restored ($after)" || bad "nr_hugepages $before -> $after"
  jcheck "reservations report restoration" "$tmp/reserve.json" \
    'all(s["restored"] for s in d["hugepages"]["sizes"] if s["reserved_temporarily"])'
  jcheck "every size attempted" "$tmp/reserve.json" \
    'all(s["map_attempt"]!="not-tried" for s in d["hugepages"]["sizes"])'
else
  echo "skip hugepage reservation check (not root)"
fi

# --- fixture machines ---
fix() { "$bin" info --sysfs-root "$fx/sysfs/$1" --cpuid-dump "$fx/cpuid/$1.txt" "${@:2}"; }
fix amd-zen4-8c --json >"$tmp/zen.json"; check_rc "zen4 fixture json" 0 $?
jcheck "zen4 victim L3" "$tmp/zen.json" \
  'd["llc"]["hierarchy"]=="exclusive-victim" and d["llc"]["size"]==32<<20 and d["llc"]["ways"]==16 and d["llc"]["upper"]["size"]==1<<20 and d["llc"]["shared_cpus"]=="0-15"'
jcheck "fixture skips live probes" "$tmp/zen.json" \
  'not d["source"]["live"] and not d["pagemap"]["tried"] and not d["pmu"]["open_tried"] and d["hugepages"]["sizes"][0]["map_attempt"]=="not-tried"'
fix intel-hsx-2x6c >"$tmp/hsx.txt"; check_rc "hsx fixture text" 0 $?
grep -q "CPUs 0-5,12-17 (6 cores); 2 instances" "$tmp/hsx.txt" && ok "hsx domains in text" || bad "hsx domains"
grep -q "hierarchy      inclusive" "$tmp/hsx.txt" && ok "hsx inclusive" || bad "hsx hierarchy"
LIBPFM_FORCE_PMU=snb fix intel-snb-4c --json >"$tmp/snb.json"; check_rc "snb forced pmu" 0 $?
jcheck "snb event encoded" "$tmp/snb.json" \
  'd["pmu"]["event"]=="snb::MEM_LOAD_UOPS_MISC_RETIRED:LLC_MISS" and d["pmu"]["config"]=="0x2d4" and d["pmu"]["forced"]'
jcheck "snb slices and hugepages" "$tmp/snb.json" \
  'd["llc"]["slices"]==4 and d["hugepages"]["sizes"][0]["free"]==12'

fix amd-turin-bhyve --json >"$tmp/turin.json"; check_rc "turin fixture (no sysfs cacheinfo)" 0 $?
jcheck "turin caches from legacy CPUID" "$tmp/turin.json" \
  'd["source"]["caches"]=="cpuid" and [(c["level"],c["size"],c["ways"]) for c in d["caches"]]==[(1,48<<10,12),(1,32<<10,8),(2,1<<20,8),(3,508<<20,0)]'
jcheck "turin llc refused with reason" "$tmp/turin.json" \
  'not d["llc"]["ok"] and "no associativity" in d["llc"]["reason"]'
jcheck "turin clock: lfence instead of rdtscp" "$tmp/turin.json" \
  'd["clock"]["usable"] and not d["clock"]["rdtscp"] and d["clock"]["lfence_serializing"]'

# --- errors ---
err=$("$bin" info --sysfs-root "$tmp/none" 2>&1 >/dev/null); rc=$?
check_rc "unreadable sysfs root" 1 $rc
[ "$(wc -l <<<"$err")" -eq 1 ] && grep -q "^llcprobe: info: .*online" <<<"$err" && ok "one-line error" || bad "error text: $err"
printf '0x0 0x0: eax=1\n' >"$tmp/bad.txt"
err=$("$bin" info --sysfs-root "$fx/sysfs/intel-snb-4c" --cpuid-dump "$tmp/bad.txt" 2>&1 >/dev/null); rc=$?
check_rc "malformed cpuid dump" 1 $rc
grep -q "bad.txt: line 1" <<<"$err" && ok "dump error names the line" || bad "dump error: $err"
"$bin" info --frobnicate >/dev/null 2>&1; check_rc "unknown option" 2 $?
"$bin" info extra >/dev/null 2>&1; check_rc "stray argument" 2 $?
"$bin" info --help | grep -q "usage: llcprobe info" && ok "--help" || bad "--help"
"$bin" info --dump-cpuid >"$tmp/dump.txt"; check_rc "--dump-cpuid" 0 $?
"$bin" info --sysfs-root "$fx/sysfs/xeon-emr-kvm" --cpuid-dump "$tmp/dump.txt" >/dev/null; check_rc "own dump decodes" 0 $?
exit $fail
