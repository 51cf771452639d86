# Shared preamble of the end-to-end CLI tests, sourced by each script:
#   . "$(dirname "$0")/../cli_lib.sh" "$@"
# Sets bin (the llcprobe binary, $1), fail, and tmp (removed at exit), and
# defines the assertions below. A script ends with `exit $fail`.
set -u
bin=$1
fail=0
tmp=$(mktemp -d /tmp/llcprobe-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

# check_rc NAME EXPECTED ACTUAL
check_rc() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: exit $3, expected $2"; fi; }

# check NAME SHELL-EXPR: the expression, evaluated, must succeed.
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

# jcheck NAME FILE EXPR: a python3 expression over d (the JSON document in
# FILE) must be true.
jcheck() {
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($3) else 1)" "$2"; then
    ok "$1"; else bad "$1: ($3) is false"; fi
}
