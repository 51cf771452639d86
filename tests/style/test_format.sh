#!/usr/bin/env bash
# Every tracked .c/.h file is laid out as .clang-format says.
set -euo pipefail
src=$1
want_major=14
if ! command -v clang-format >/dev/null 2>&1; then
    echo "skip: clang-format is not installed"
    exit 77
fi
major=$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$major" != "$want_major" ]; then
    echo "skip: clang-format $major; the layout was applied with release $want_major"
    exit 77
fi
cd "$src"
if ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "skip: $src is not a git checkout (the tracked files are the ones checked)"
    exit 77
fi
bad=0
while IFS= read -r f; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f (clang-format -i $f)"
        bad=$((bad + 1))
    fi
done < <(git ls-files '*.c' '*.h')
if [ "$bad" -ne 0 ]; then
    echo "FAIL: $bad files differ from .clang-format"
    exit 1
fi
echo "ok: $(git ls-files '*.c' '*.h' | wc -l) files follow .clang-format"
