#!/usr/bin/env bash
# Lists every #include "<folder>/..." in src/ and in the tests that mirror it which reaches a floor
# not strictly below its own folder's (ARCHITECTURE.md's layer table); prints nothing and exits 0
# when the floors hold.
#   core -> {eval, skills, text, curriculum} -> {llm, queue} -> {agents, serve} -> rl -> cli
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A floor=([core]=0 [eval]=1 [skills]=1 [text]=1 [curriculum]=1 [llm]=2 [queue]=2 [agents]=3 [serve]=3 [rl]=4 [cli]=5)
status=0
for root in src tests; do
  for dir in "${!floor[@]}"; do
    [ -d "$root/$dir" ] || continue
    while IFS=: read -r file line target; do
      [ "$target" = "$dir" ] && continue
      if [ -z "${floor[$target]:-}" ] || [ "${floor[$target]}" -ge "${floor[$dir]}" ]; then
        echo "$file:$line includes $target/ (floor ${floor[$target]:-?}) from $dir/ (floor ${floor[$dir]})"
        status=1
      fi
    done < <(grep -rnoE '^#include "[a-z_]+/' "$root/$dir" --include='*.h' --include='*.cpp' |
             sed -E 's|^([^:]+):([0-9]+):#include "([a-z_]+)/$|\1:\2:\3|' | grep -v ':support$')
  done
done
exit $status
