#!/usr/bin/env bash
# report.html of `llcprobe study` in a real headless Chromium (Debian's
# chromium package): a screenshot renders (a PNG of the window's size with
# more than a few colours), the DOM Chromium builds has the N x N heatmap
# cells and the ranked table, and the console shows no error (the check is
# first shown to catch an error on a page that throws one). Skips (77) with
# the reason when chromium is not installed (apt-get install chromium: about
# 350 MB, so scripts/setup.sh does not install it).
. "$(dirname "$0")/../cli_lib.sh"
gen=${LLCPROBE_GEN_PROFILE:?LLCPROBE_GEN_PROFILE names tests/predictcli/gen_profile}
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "SKIP: chromium is not installed (Debian: apt-get install chromium)"
  exit 77
fi

mkdir "$tmp/p"
for i in 1 2 3 4 5 6 7; do
  "$gen" "$tmp/p/prog$i.profile.json" "prog$i" intel8 2 "$((30 + i))"
done
"$bin" study -k 2 --profiles "$tmp/p" -o "$tmp/s" -q >/dev/null
check_rc "study of 7 programs in pairs" 0 $?

# browse WHAT URL ARGS...: headless Chromium, fresh profile, no network
# services; stderr (the console log) into $tmp/WHAT.log.
browse() {
  local what=$1 url=$2
  shift 2
  timeout 60 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$tmp/chrome-$what" \
    --enable-logging=stderr --v=0 --window-size=1200,1800 "$@" "$url" 2>"$tmp/$what.log"
}
# console_errors LOG: the console's error lines in a Chromium log.
console_errors() { grep -E "CONSOLE.*(Error|error|Uncaught)|Failed to load resource|net::ERR_" "$1"; }

printf '<!DOCTYPE html><html><body><script>throw new Error("deliberate");</script></body></html>\n' >"$tmp/bad.html"
browse bad "file://$tmp/bad.html" --dump-dom >/dev/null
check "the console check catches a page that throws" 'console_errors "$tmp/bad.log" >/dev/null'

browse dom "file://$tmp/s/report.html" --dump-dom >"$tmp/dom.html"
check_rc "chromium loads report.html" 0 $?
check "DOM: 7 x 7 = 49 heatmap cells" '[ "$(grep -o "<rect class=\"cell\"" "$tmp/dom.html" | wc -l)" = 49 ]'
check "DOM: ranked table with best, median and worst" 'grep -q "<table id=\"ranked\"" "$tmp/dom.html" && grep -q "<td>best</td>" "$tmp/dom.html" && grep -q "<td>median</td>" "$tmp/dom.html" && grep -q "<td>worst</td>" "$tmp/dom.html"'
check "DOM: occupancy and miss-ratio plots of the 4 groups" '[ "$(grep -o "<svg class=\"plot\"" "$tmp/dom.html" | wc -l)" = 8 ]'
if console_errors "$tmp/dom.log" >"$tmp/errs"; then bad "console errors: $(head -3 "$tmp/errs")"; else ok "no console errors"; fi

browse shot "file://$tmp/s/report.html" --screenshot="$tmp/shot.png" >/dev/null
check_rc "screenshot taken" 0 $?
"$python" - "$tmp/shot.png" <<'PY' && ok "screenshot: 1200 x 1800 PNG with many colours" || bad "screenshot not rendered"
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", b[16:24])
assert (w, h) == (1200, 1800), (w, h)
pos, idat = 8, b""
while pos < len(b):
    n, t = struct.unpack(">I4s", b[pos:pos + 8])
    if t == b"IDAT":
        idat += b[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
assert len(set(raw)) > 50, len(set(raw))
PY
[ -n "${LLCPROBE_KEEP_SCREENSHOT:-}" ] && cp "$tmp/shot.png" "$LLCPROBE_KEEP_SCREENSHOT"
exit $fail
