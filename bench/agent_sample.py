#!/usr/bin/env python3
"""The fixed sample of LEKA's benchmarks (bench/agent.sh on cpu, bench/gpu.sh's `agent` step on cuda).

Reads `ekb list --json` on stdin and prints N non-held-out workloads, the first of each of N patterns
spread evenly over the suite's patterns in list order, domains interleaved (so that a run cut short
has reached every domain); with --heldout, then the held-out workloads of the same patterns. With
--largest, each pattern's workload that moves the most bytes instead of its first (on a GPU the
first, often a micro shape, is a few microseconds: launch-bound, nothing to optimize).
Usage: ekb list --json | bench/agent_sample.py N [--heldout] [--largest]
"""
import collections
import json
import sys

n_wanted = int(sys.argv[1])
with_heldout = "--heldout" in sys.argv[2:]
largest = "--largest" in sys.argv[2:]
workloads = json.load(sys.stdin)
first, most_bytes = {}, {}
for w in workloads:
    if not w["heldout"] and w.get("valid", True):
        if largest and w["min_bytes"] <= most_bytes.get(w["pattern"], -1):
            continue
        most_bytes[w["pattern"]] = w["min_bytes"]
        first[w["pattern"]] = w["name"] if largest else first.get(w["pattern"], w["name"])
patterns = list(first)
n = min(n_wanted, len(patterns))
picked = [patterns[int(k * len(patterns) / n)] for k in range(n)]
by_domain = collections.defaultdict(list)
for p in picked:
    by_domain[p.split(".")[0]].append(first[p])
order = []
while any(by_domain.values()):
    for d in sorted(by_domain):
        if by_domain[d]:
            order.append(by_domain[d].pop(0))
if with_heldout:
    order += [w["name"] for w in workloads if w["heldout"] and w["pattern"] in picked]
print("\n".join(order))
