#!/usr/bin/env bash
# Lists every #include "<folder>/..." in src/ and in the tests that mirror it which reaches a floor
# not strictly below its own folder's (ARCHITECTURE.md's layer table), and every include of torch
# (<torch/...>, <ATen/...>, <c10/...>, or a folder that links it) from a folder that does not link it;
# prints nothing and exits 0 when both hold.
#   core -> {eval, skills, text, curriculum} -> {llm, queue, parallel} -> {llm_native, agents, serve} -> {bench, rl} -> train -> cli
# What links torch shows in the path: llm_native, parallel, train and cli (the binary links everything).
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A floor=([core]=0 [eval]=1 [skills]=1 [text]=1 [curriculum]=1 [llm]=2 [queue]=2 [parallel]=2 [llm_native]=3
                  [agents]=3 [serve]=3 [bench]=4 [rl]=4 [train]=5 [cli]=6)
declare -A links_torch=([llm_native]=1 [parallel]=1 [train]=1 [cli]=1)
status=0
for root in src tests; do
  for dir in "${!floor[@]}"; do
    [ -d "$root/$dir" ] || continue
    while IFS=: read -r file line target; do
      [ "$target" = "$dir" ] && continue
      if [ -z "${floor[$target]:-}" ] || [ "${floor[$target]}" -ge "${floor[$dir]}" ]; then
        echo "$file:$line includes $target/ (floor ${floor[$target]:-?}) from $dir/ (floor ${floor[$dir]})"
        status=1
      elif [ -n "${links_torch[$target]:-}" ] && [ -z "${links_torch[$dir]:-}" ]; then
        echo "$file:$line includes $target/, which links torch, from $dir/, which does not"
        status=1
      fi
    done < <(grep -rnoE '^#include "[a-z_]+/' "$root/$dir" --include='*.h' --include='*.cpp' |
             sed -E 's|^([^:]+):([0-9]+):#include "([a-z_]+)/$|\1:\2:\3|' | grep -v ':support$')
    if [ -z "${links_torch[$dir]:-}" ]; then
      while IFS=: read -r file line _; do
        echo "$file:$line includes torch from $dir/, which does not link it"
        status=1
      done < <(grep -rnE '^#include <(torch|ATen|c10)/' "$root/$dir" --include='*.h' --include='*.cpp' || true)
    fi
  done
done
exit $status
