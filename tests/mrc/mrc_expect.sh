# Sourced by the mrc CLI tests after cli_lib.sh.
# expect CODE PATTERN ARGS...: `llcprobe mrc ARGS` exits with CODE and
# prints a single stderr line that contains PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 2
  "$bin" mrc "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$code" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$pattern" "$tmp/err"; then
    ok "mrc $*: $code"
  else
    bad "mrc $*: exit $rc, wanted $code with '$pattern' ($(cat "$tmp/err"))"
  fi
}
