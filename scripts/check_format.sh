#!/usr/bin/env bash
# Every C++ file of src/, tests/ and benchmarks/ (tracked or new, not ignored) as .clang-format writes it (not the threat and
# hack corpora's kernels: candidate code, embedded verbatim in their files); names each file that differs and exits 1.
# `scripts/check_format.sh --fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h' 'benchmarks/*.cpp' ':!tests/threats' ':!tests/hacks' 2>/dev/null ||
                     find src tests benchmarks \( -path tests/threats -o -path tests/hacks \) -prune -o -name '*.cpp' -print -o -name '*.h' -print)
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
status=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "$f: not as .clang-format writes it (scripts/check_format.sh --fix rewrites it)"
    status=1
  fi
done
exit $status
