#!/usr/bin/env bash
# probe/man/llcprobe.1 against the built binary's --help texts: every
# command has its subsection (.SS CMD), every long option of
# `llcprobe CMD --help` is named in that subsection, every option the page
# names exists, the output files, environment variables and version agree,
# and the page renders without warnings (groff, else mandoc, else man).
# LLCPROBE_MAN_PAGE overrides the page checked.
. "$(dirname "$0")/../cli_lib.sh"
src=${LLCPROBE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
page=${LLCPROBE_MAN_PAGE:-$src/probe/man/llcprobe.1}
[ -r "$page" ] || { bad "no man page at $page"; exit $fail; }

# The page as text to search: roff's \- is a hyphen; font changes, \& and
# \c dropped; comment lines left out.
sed -e '/^\.\\"/d' -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f([A-Z][A-Z]//g' \
    -e 's/\\&//g' -e 's/\\c$//' "$page" >"$tmp/page.txt"

# section CMD: the lines from `.SS CMD` to the next .SS or .SH.
section() { awk -v c="$1" '$1 == ".SS" { f = ($2 == c || $2 == "\"" c "\""); next } $1 == ".SH" { f = 0 } f' "$tmp/page.txt"; }
# names OPT FILE: FILE names OPT as a whole word (--rate, not --rate-x).
names() { grep -qE -- "(^|[^a-zA-Z0-9-])$1([^a-zA-Z0-9-]|\$)" "$2"; }
long_opts() { grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u; }

"$bin" --help >"$tmp/help" 2>&1
check_rc "llcprobe --help" 0 $?
cmds=$(awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 } f && /^$/ { exit }' "$tmp/help")
[ -n "$cmds" ] && ok "commands listed: $(echo $cmds)" || bad "no commands in llcprobe --help"
cp "$tmp/help" "$tmp/all_help"

for cmd in $cmds; do
  "$bin" "$cmd" --help >"$tmp/help.$cmd" 2>&1
  check_rc "$cmd --help" 0 $?
  cat "$tmp/help.$cmd" >>"$tmp/all_help"
  names "$cmd" <(sed -n '/^\.SH COMMANDS/,/^\.SS/p' "$tmp/page.txt") && ok "$cmd: in the COMMANDS list" ||
    bad "$cmd: missing from the COMMANDS list"
  section "$cmd" >"$tmp/sec.$cmd"
  if [ ! -s "$tmp/sec.$cmd" ]; then
    bad "$cmd: no '.SS $cmd' section in the page"
    continue
  fi
  ok "$cmd: has a section"
  missing=
  n=0
  for opt in $(long_opts <"$tmp/help.$cmd"); do
    [ "$opt" = --help ] && continue # every command's; the page says so once
    n=$((n + 1))
    names "$opt" "$tmp/sec.$cmd" || missing="$missing $opt"
  done
  [ -z "$missing" ] && ok "$cmd: all $n long options of --help in its section" ||
    bad "$cmd: options of '$cmd --help' not in the page's '$cmd' section:$missing"
done
names --help "$tmp/page.txt" && ok "--help in the page" || bad "--help not in the page"

# Every long option the page names exists: in some --help text, or (the two
# the help texts leave out) accepted by the binary. Other tools' options the
# page quotes are in the help texts too (exp-bbv's --pc-out-file).
"$bin" --version >/dev/null 2>&1 && echo --version >"$tmp/extra"
"$bin" sim --list-workloads 2>/dev/null | grep -q '^  uniform:size=S' && echo --list-workloads >>"$tmp/extra"
long_opts <"$tmp/all_help" | cat - "$tmp/extra" | sort -u >"$tmp/known"
unknown=$(long_opts <"$tmp/page.txt" | comm -23 - "$tmp/known" | tr '\n' ' ')
[ -z "$unknown" ] && ok "every long option in the page exists" || bad "options in the page that the binary lacks: $unknown"

# The documented ranges of numeric options (map, sample, calibrate parse
# them with llc_opt_*): every LO..HI range of the --help text is in the
# command's section of the page.
for cmd in map sample calibrate; do
  [ -s "$tmp/help.$cmd" ] || continue
  missing=
  for r in $(grep -oE '[0-9][0-9.e^+-]*\.\.[0-9][0-9.e^+-]*[0-9]' "$tmp/help.$cmd" | sort -u); do
    grep -qF -- "$r" "$tmp/sec.$cmd" || missing="$missing $r"
  done
  [ -z "$missing" ] && ok "$cmd: option ranges of --help in the page" || bad "$cmd: ranges not in the page:$missing"
done

# Output files the help texts name (PREFIX.x.y) are in FILES.
sed -n '/^\.SH FILES/,/^\.SH /p' "$tmp/page.txt" >"$tmp/files"
missing=
for f in $(grep -oE 'PREFIX\.[a-z-]+(\.[a-z]+)?' "$tmp/all_help" | sort -u); do
  grep -qF -- "$f" "$tmp/files" || missing="$missing $f"
done
[ -z "$missing" ] && ok "output files of the help texts in FILES" || bad "not in FILES:$missing"

# Environment variables: those the help texts name, and every getenv() of
# the program and its runtime library (probe/), are in ENVIRONMENT.
sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$tmp/page.txt" >"$tmp/env"
vars=$(grep -ohE '\b(LLCPROBE|LIBPFM|SUDO)_[A-Z0-9_]+' "$tmp/all_help" | sort -u)
if [ -d "$src/probe" ]; then
  vars="$vars $(grep -rhoE 'getenv\("[A-Z0-9_]+"\)' "$src/probe" --include='*.c' | sed 's/getenv("\(.*\)")/\1/' | sort -u)"
fi
missing=
for v in $vars; do
  names "$v" "$tmp/env" || missing="$missing $v"
done
[ -z "$missing" ] && ok "environment variables in ENVIRONMENT ($(echo $vars | wc -w) checked)" ||
  bad "not in ENVIRONMENT:$missing"

# The version in .TH is the binary's.
version=$("$bin" --version 2>/dev/null)
grep -q "^\.TH LLCPROBE 1 .*\"$version\"" "$page" && ok ".TH names $version" ||
  bad ".TH does not name '$version': $(grep '^\.TH' "$page")"

# Sections a man page has.
missing=
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
  grep -qE "^\.SH \"?$s\"?\$" "$page" || missing="$missing '$s'"
done
[ -z "$missing" ] && ok "man sections present" || bad "no .SH$missing"

# Renders without warnings.
if command -v groff >/dev/null 2>&1; then
  formatter="groff -man -Tutf8 -ww"
  groff -man -Tutf8 -ww -z "$page" >"$tmp/lint" 2>&1
  rc=$?
elif command -v mandoc >/dev/null 2>&1; then
  formatter="mandoc -Tlint -Wwarning"
  mandoc -Tlint -Wwarning "$page" >"$tmp/lint" 2>&1
  rc=$?
elif command -v man >/dev/null 2>&1; then
  formatter="man --warnings -l"
  MANWIDTH=80 man --warnings -l "$page" 2>"$tmp/lint" >/dev/null
  rc=$?
else
  [ "$fail" -eq 0 ] || exit $fail # the checks above do not need one
  echo "SKIP: no roff formatter"
  exit 77
fi
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/lint" ]; then
  ok "renders without warnings ($formatter)"
else
  bad "$formatter: exit $rc: $(head -c 2000 "$tmp/lint")"
fi
exit $fail
