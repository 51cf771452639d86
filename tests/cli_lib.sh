# Shared preamble of the end-to-end CLI tests, sourced by each script:
#   . "$(dirname "$0")/../cli_lib.sh" "$@"
# Sets bin (the llcprobe binary, $1), fail, tmp (removed at exit) and python
# (the interpreter for JSON checks), and
# defines the assertions below. A script ends with `exit $fail`.
set -u
bin=$1
fail=0
tmp=$(mktemp -d /tmp/llcprobe-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# python3 on PATH may be a version manager's shim (pyenv's costs ~0.6 s a
# call, more than most checks here): resolve the interpreter once.
python=${LLCPROBE_PYTHON:-$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || echo python3)}

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# check_rc NAME EXPECTED ACTUAL
check_rc() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: exit $3, expected $2"; fi; }

# check NAME SHELL-EXPR: the expression, evaluated, must succeed.
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

# jcheck NAME FILE EXPR: a python3 expression over d (the JSON document in
# FILE) must be true.
jcheck() {
  if "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then
    ok "$1"; else bad "$1: ($3) is false"; fi
}
