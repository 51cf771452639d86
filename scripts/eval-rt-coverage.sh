#!/usr/bin/env bash
# eval-rt-coverage.sh: how much of a real program's data references the
# instrumented runtime (libllcprobe-rt) sees, and where the rest goes.
#
#     scripts/eval-rt-coverage.sh [--quick] [--no-split] [BUILD_DIR]   (default build/)
#
# Programs: the runtime half of scripts/eval-mrc-real.sh, on its inputs:
# xz -1, bzip2 -9, zstd -9, sqlite3 (100000 rows) and gawk (word count),
# rebuilt with scripts/build-instrumented.sh (BUILD_DIR/instrumented; built
# when missing), each against the system's own (gcc-built) binary of the
# same package under `valgrind --tool=cachegrind --cache-sim=yes`.
#   coverage  = runtime references / cachegrind's D refs (Dr + Dw), with
#               the libc wrappers (cov_pct) and without (LLCPROBE_RT_LIBC=0,
#               cov0_pct). The runtime counts one reference per cache line
#               a wrapped libc call touches, cachegrind one per instruction
#               (docs/RUNTIME-coverage.md, "Counting").
#   split     = where cachegrind-style data references are made, from
#               `valgrind --tool=lackey --trace-mem=yes` on a reduced input
#               (1/32 of the text, 5000 rows): stack (the main thread's
#               stack, whatever code touches it: spills, saved registers,
#               return addresses, locals) and, off the stack, by the code
#               object making them: the program (its executable and its
#               package's own libraries, which the rebuild instruments),
#               libc, the dynamic linker, other libraries (not rebuilt).
#   unseen    = 100 - cov_pct, attributed: stack_pct (the runtime sees
#               almost none of it), libc_pct minus what the wrappers fed,
#               other_pct (uninstrumented libraries), and the rest: the
#               program's own off-stack references it did not see (copies
#               the compiler expands inline, atomics, >16-byte accesses,
#               and the difference between the gcc build cachegrind runs
#               and the clang build the runtime runs; negative when clang's
#               build makes more references than gcc's).
#   --quick    one small program built here (clang -O2 as the reference,
#              llcprobe-cc as the rebuild), for the tests
#   --no-split skip the lackey runs (coverage only)
# Environment: PROGRAMS (names to run, default all).
# Last lines: rt_coverage_pct_NAME per program, then rt_unseen_*_pct
# (means), rt_coverage_min_pct and rt_coverage_mean_pct.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "eval-rt-coverage: $*" >&2; exit 1; }
quick=0 split=1
while (($#)); do
  case "$1" in
    --quick) quick=1; shift ;;
    --no-split) split=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "eval-rt-coverage: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
build=$(cd "${1:-$root/build}" && pwd)
bin=$build/llcprobe
inst=$build/instrumented
[ -x "$bin" ] || die "$bin missing: build llcprobe first"
command -v valgrind >/dev/null || die "valgrind not found"
command -v gawk >/dev/null || die "gawk not found"
work=$(mktemp -d /tmp/llcprobe-rtcov-XXXXXX)
trap 'rm -rf "$work"' EXIT
in=$work/in
mkdir -p "$in"

# Inputs as scripts/eval-mrc-real.sh makes them.
. "$root/scripts/eval-inputs.sh"

# name|package|command (@IN@: the input directory; @BIN@: the program's
# directory, /usr/bin or the rebuild's). The reduced run (split) reads
# @IN@/small/ instead.
specs=()
declare -A own_libs=()
if ((quick)); then
  # Its own loops over a buffer (seen), libc's copies and scans of each
  # line (wrapped), a buffer grown by realloc, stdio's reads (not seen),
  # a call-heavy recursion (the stack).
  cat >"$work/q.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb");
    size_t cap = 4096, len = 0, r;
    char *buf = malloc(cap);
    while ((r = fread(buf + len, 1, cap - len, f)) > 0)
        if ((len += r) == cap)
            buf = realloc(buf, cap *= 2);
    fclose(f);
    unsigned long sum = 0;
    /* Loads in its loop, not read-modify-writes: the runtime counts a
     * load and a store where cachegrind counts one modify. */
    unsigned *count = calloc(1 << 16, sizeof *count);
    char line[256];
    for (int k = 0; k < 4; k++)
        for (char *p = buf, *end = buf + len, *nl; p < end; p = nl + 1) {
            nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                break;
            const size_t n = (size_t)(nl - p) < sizeof line - 1 ? (size_t)(nl - p) : sizeof line - 1;
            memcpy(line, p, n);
            line[n] = '\0';
            sum += strlen(line);
            for (size_t i = 0; i + 1 < n; i++)
                sum += count[(unsigned char)line[i] << 8 | (unsigned char)line[i + 1]];
            count[(unsigned char)line[0] << 8 | (unsigned char)line[1]] += (unsigned)n;
        }
    for (unsigned i = 0; i < 1 << 16; i++)
        sum += count[i] * i;
    printf("%lu %lu\n", sum, fib(20));
    return 0;
}
C
  mkdir -p "$work/quick/bin"
  clang -O2 -o "$work/quick/bin/q" "$work/q.c" || die "clang failed on the quick program"
  mkdir -p "$work/quick-rt/bin"
  LLCPROBE_RT_LIB=${LLCPROBE_RT_LIB:-$build/lib/libllcprobe-rt.a} "$root/scripts/llcprobe-cc" -O2 \
    -o "$work/quick-rt/bin/q" "$work/q.c" || die "llcprobe-cc failed on the quick program"
  eval_text 262144 "$in/text"
  mkdir -p "$in/small"
  eval_text 65536 "$in/small/text"
  specs=("quick|quick|@BIN@/q @IN@/text")
else
  eval_text 4194304 "$in/text"
  eval_sql 100000 "$in/db.sql"
  mkdir -p "$in/small"
  eval_text 131072 "$in/small/text"
  eval_sql 5000 "$in/small/db.sql"
  specs=(
    "xz|xz-utils|@BIN@/xz -1 -T1 -c @IN@/text"
    "bzip2|bzip2|@BIN@/bzip2 -9 -c @IN@/text"
    "zstd|libzstd|@BIN@/zstd -9 -T1 -c @IN@/text"
    "sqlite3|sqlite3|@BIN@/sqlite3 :memory: '.read @IN@/db.sql'"
    "gawk|gawk|@BIN@/gawk '{ for (i = 1; i <= NF; i++) c[\$i]++ } END { print length(c) }' @IN@/text"
  )
  missing=()
  for sp in "${specs[@]}"; do
    IFS='|' read -r name pkg _ <<<"$sp"
    [ -n "${PROGRAMS:-}" ] && [[ " $PROGRAMS " != *" $name "* ]] && continue
    [ -f "$inst/$pkg/.stamp" ] || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    echo "eval-rt-coverage: building the instrumented ${missing[*]} (scripts/build-instrumented.sh)" >&2
    "$root/scripts/build-instrumented.sh" --build "$build" "${missing[@]}" >&2 ||
      die "could not build the instrumented ${missing[*]}"
  fi
fi

# words CMD DIR IN -> argv (shell quoting honoured).
words() {
  local c=${1//@BIN@/$2}
  c=${c//@IN@/$3}
  eval "argv=($c)"
}

# Cachegrind's D refs of CMD (the system's binary), cached by the binary,
# the command and the input.
cache=$build/eval-rt-coverage-cg
mkdir -p "$cache"
drefs_of() { # name dir cmd -> drefs
  local argv
  words "$3" "$2" "$in"
  local key
  key=$(find "$in" -maxdepth 1 -type f | sort | xargs cat "${argv[0]}" | cksum | cut -d' ' -f1)-$(printf '%s' "$3" | cksum | cut -d' ' -f1)
  local out=$cache/$1.$key.cg
  if ! { [ -s "$out" ] && grep -q 'D   refs:' "$out"; }; then
    echo "  cachegrind $1" >&2
    (cd "$work" && valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null \
      "${argv[@]}" </dev/null >/dev/null 2>"$out.tmp") || die "$1: cachegrind failed (see $out.tmp)"
    mv "$out.tmp" "$out"
  fi
  awk '/D   refs:/ { gsub(",", "", $4); print $4 }' "$out"
}

# The runtime's references of CMD (the rebuild) with the libc wrappers on
# (1) or off (0). A reference count does not depend on the seed or rate.
rt_refs() { # name pkg dir cmd libc -> refs
  local argv
  words "$4" "$3" "$in"
  local prof=$work/$1.$5.profile
  (cd "$work" && LD_LIBRARY_PATH=$inst/$2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} LLCPROBE_RT_OUTPUT=$prof \
     LLCPROBE_RT_RATE=1e-4 LLCPROBE_RT_WINDOW=0 LLCPROBE_RT_LIBC=$5 "${argv[@]}" </dev/null >/dev/null) ||
    die "$1: the instrumented run failed"
  awk '$1 == "refs" { print $2 }' "$prof"
}

# Lackey's data references of CMD (the system's binary) on the reduced
# input, in % of all: "stack prog libc ld other". The code object of each
# reference is the mapping (valgrind's process maps, read while it runs)
# holding the page of the instruction before it; valgrind puts the main
# thread's client stack just below 0x1fff001000.
split_of() { # name dir cmd own-libs -> "stack prog libc ld other"
  local argv
  words "$3" "$2" "$in/small"
  local key
  key=$(cat "${argv[0]}" "$in"/small/* | cksum | cut -d' ' -f1)-$(printf '%s' "$3" | cksum | cut -d' ' -f1)
  local out=$cache/$1.$key.split
  if [ ! -s "$out" ]; then
    echo "  lackey $1 (reduced input)" >&2
    local fifo=$work/lackey.fifo
    rm -f "$fifo"
    mkfifo "$fifo"
    # Per code page (pc >> 12, hex) and stack/off-stack: references.
    gawk '/^I/ { i = index($2, ","); p = substr($2, 1, i - 4); next }
      /^ [LSM]/ { i = index($2, ","); a = substr($2, 1, i - 1)
        c[p " " ((length(a) == 10 && substr(a, 1, 3) == "1ff") ? "s" : "h")]++ }
      END { for (x in c) print x, c[x] }' <"$fifo" >"$work/cls" &
    local aw=$!
    (cd "$work" && exec valgrind --tool=lackey --trace-mem=yes --log-fd=3 "${argv[@]}" 3>"$fifo" \
      </dev/null >/dev/null 2>"$work/lackey.err") &
    local vg=$!
    while kill -0 "$vg" 2>/dev/null; do
      # (Empty once the process is exiting: the last full copy stays.)
      cp "/proc/$vg/maps" "$work/maps.tmp" 2>/dev/null && [ -s "$work/maps.tmp" ] &&
        mv "$work/maps.tmp" "$work/maps"
      sleep 0.2
    done
    wait "$vg" || die "$1: lackey failed ($(tail -1 "$work/lackey.err"))"
    wait "$aw" || die "$1: classifying lackey's output failed"
    [ -s "$work/maps" ] || die "$1: no memory map of the lackey run"
    gawk -v exe="$(basename "${argv[0]}")" -v own="$4" '
      NR == FNR { if (NF >= 6 && $6 ~ /^\//) { split($1, r, "-"); n++
                    lo[n] = strtonum("0x" r[1]); hi[n] = strtonum("0x" r[2]); ob[n] = $6; sub(".*/", "", ob[n]) }
                  next }
      { pg = strtonum("0x" $1) * 4096; o = ""
        for (i = 1; i <= n; i++) if (pg >= lo[i] && pg < hi[i]) { o = ob[i]; break }
        if ($2 == "s") k = "stack"
        else if (o == exe || (o != "" && index(" " own " ", " " o " "))) k = "prog"
        else if (o ~ /^libc\.so/) k = "libc"
        else if (o ~ /^ld-linux/) k = "ld"
        else k = "other"
        t[k] += $3; all += $3 }
      END { if (!all) exit 1
            printf "%.2f %.2f %.2f %.2f %.2f\n", 100 * t["stack"] / all, 100 * t["prog"] / all,
              100 * t["libc"] / all, 100 * t["ld"] / all, 100 * t["other"] / all }' \
      "$work/maps" "$work/cls" >"$out.tmp" || die "$1: lackey saw no data references"
    mv "$out.tmp" "$out"
  fi
  cat "$out"
}

# The share (%) of the runtime's references (rebuild, wrappers on, trace
# mode) on the reduced input that fall on the main thread's stack: within
# 64 MiB of the highest address referenced (Linux keeps at least 128 MiB
# between the stack's top and the mappings below it).
rt_stack_of() { # name pkg dir cmd -> pct
  local argv
  words "$4" "$3" "$in/small"
  (cd "$work" && LD_LIBRARY_PATH=$inst/$2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
     LLCPROBE_RT_OUTPUT=$work/rt.trace LLCPROBE_RT_MODE=trace "${argv[@]}" </dev/null >/dev/null) ||
    die "$1: the instrumented run (trace mode) failed"
  "$bin" trace --show "$work/rt.trace" --dump 1000000000 2>/dev/null |
    gawk '/^ [LSM] / { i = index($2, ","); a = strtonum("0x" substr($2, 1, i - 1)); n++
             # Addresses, 1 MiB buckets (stack is the topmost 64 of them).
             b = int(a / 1048576); c[b]++; if (b > top) top = b }
          END { if (!n) exit 1; for (x in c) if (x + 0 > top - 64) s += c[x]; printf "%.2f\n", 100 * s / n }' ||
    die "$1: no references in the runtime's trace"
  rm -f "$work/rt.trace"
}

printf '%-8s %11s %11s %11s %7s %7s | %6s %6s %6s %6s %6s | %s\n' program cg_drefs rt_refs_nolibc rt_refs \
  cov0 cov stack prog libc ld other "rt_stack | unseen: stack libc+ld other prog (% of cg)"
names=() covs=()
n_split=0 s_stack=0 s_libc=0 s_other=0 s_prog=0
for sp in "${specs[@]}"; do
  IFS='|' read -r name pkg cmd <<<"$sp"
  [ -n "${PROGRAMS:-}" ] && [[ " $PROGRAMS " != *" $name "* ]] && continue
  if ((quick)); then
    ref_dir=$work/quick/bin rt_dir=$work/quick-rt/bin
  else
    read -r -a a0 <<<"${cmd#@BIN@/}"
    ref_dir=$(dirname "$(command -v "${a0[0]}")") || die "$name: no system ${a0[0]}"
    rt_dir=$inst/$pkg/bin
  fi
  d=$(drefs_of "$name" "$ref_dir" "$cmd")
  r0=$(rt_refs "$name" "$pkg" "$rt_dir" "$cmd" 0)
  r1=$(rt_refs "$name" "$pkg" "$rt_dir" "$cmd" 1)
  read -r cov0 cov < <(awk -v d="$d" -v a="$r0" -v b="$r1" 'BEGIN { printf "%.1f %.1f\n", 100 * a / d, 100 * b / d }')
  sp_cols="- - - - -" unseen="-"
  if ((split)); then
    libs=$(ls "$inst/$pkg/lib" 2>/dev/null | tr '\n' ' ' || true)
    read -r st pr lc ld ot < <(split_of "$name" "$ref_dir" "$cmd" "$libs")
    rs=$(rt_stack_of "$name" "$pkg" "$rt_dir" "$cmd")
    sp_cols="$st $pr $lc $ld $ot"
    # Stack: cachegrind's share less what the runtime saw there (locals
    # whose address is taken: arrays, buffers). Off the stack: libc's and
    # ld.so's share less what the wrappers fed, the other libraries' share,
    # and the program's own (the rest).
    read -r u_st u_lc u_ot u_pr < <(awk -v d="$d" -v a="$r0" -v b="$r1" -v st="$st" -v rs="$rs" \
      -v lc="$lc" -v ld="$ld" -v ot="$ot" 'BEGIN {
        cov = 100 * b / d; s = st - cov * rs / 100
        w = 100 * (b - a) / d; l = lc + ld - w; if (l < 0) l = 0
        printf "%.1f %.1f %.1f %.1f\n", s, l, ot, 100 - cov - s - l - ot }')
    unseen="$rs | $u_st $u_lc $u_ot $u_pr"
    n_split=$((n_split + 1))
    read -r s_stack s_libc s_other s_prog < <(awk -v a="$s_stack $s_libc $s_other $s_prog" -v b="${unseen#*| }" \
      'BEGIN { split(a, x, " "); split(b, y, " "); for (i = 1; i <= 4; i++) printf "%s ", x[i] + y[i]; print "" }')
  fi
  # shellcheck disable=SC2086
  printf '%-8s %11s %11s %11s %7s %7s | %6s %6s %6s %6s %6s | %s\n' "$name" "$d" "$r0" "$r1" "$cov0" "$cov" \
    $sp_cols "$unseen"
  names+=("$name") covs+=("$cov")
done
((${#names[@]})) || die "no program measured (PROGRAMS='${PROGRAMS:-}')"
echo "(cov0/cov: runtime references without/with the libc wrappers, % of cachegrind's D refs;"
echo " stack..other: lackey's data references on the reduced input, % by where they are made;"
echo " rt_stack: % of the runtime's references (reduced input) on the stack;"
echo " unseen: 100 - cov attributed to the stack (cachegrind's share less the runtime's),"
echo " libc + ld.so beyond what the wrappers fed, uninstrumented libraries, and the rest:"
echo " the program's own code; see --help)"
for i in "${!names[@]}"; do
  printf 'rt_coverage_pct_%s: %s %%\n' "${names[$i]}" "${covs[$i]}"
done
if ((n_split)); then
  awk -v s="$s_stack $s_libc $s_other $s_prog" -v n="$n_split" 'BEGIN { split(s, x, " ")
    printf "rt_unseen_stack_pct: %.1f %%\nrt_unseen_libc_pct: %.1f %%\n", x[1] / n, x[2] / n
    printf "rt_unseen_otherlib_pct: %.1f %%\nrt_unseen_prog_pct: %.1f %%\n", x[3] / n, x[4] / n }'
fi
printf '%s\n' "${covs[@]}" | awk '{ s += $1; if (NR == 1 || $1 < m) m = $1 }
  END { printf "rt_coverage_min_pct: %.1f %%\nrt_coverage_mean_pct: %.1f %%\n", m, s / NR }'
