#!/usr/bin/env python3
"""One `vinci optimize --out` folder in three lines: exit code and wall time, agent calls by role
with how many are trainable, and what the policy answers came to. Used by the GPU scripts.
Usage: episode_summary.py OUT_DIR EXIT_CODE START_S END_S"""
import collections
import json
import sys

out, rc, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
ep = json.loads(open(f"{out}/episodes.jsonl").readline())
roles = collections.Counter(c["role"] for c in ep["calls"])
tokens = sum(len(c["response_ids"]) for c in ep["calls"])
trainable = sum(c["trainable"] for c in ep["calls"])
fails = collections.Counter(c["parse_failure"] or "parsed" for c in ep["calls"] if c["role"] == "policy")
print(f"exit {rc} (2: no correct kernel, expected of random weights); {end - start:.1f} s wall")
print(f"calls by role: {dict(roles)}; {tokens} response tokens; {trainable}/{len(ep['calls'])} trainable")
print(f"policy answers: {dict(fails)}")
