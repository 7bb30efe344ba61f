#!/usr/bin/env python3
"""Calls and inclusive instructions per call of functions in a callgrind output file.

    python3 bench/rsm_net_cg.py callgrind.out.PID PATTERN...

For each function whose name contains one of the patterns: the calls recorded to it
(summed over its callers) and the instructions inside it and its callees per call
(the callee costs callgrind writes after each `calls=` line). Used by
bench/rsm_net_cg.sh; see docs/rsm-net.md.
"""
import re
import sys


def main():
    path, pats = sys.argv[1], sys.argv[2:]
    names = {}
    calls = {}
    cost = {}
    callee = None
    want_cost = None
    rx = re.compile(r"^c?fn=\((\d+)\)(?: (.*))?$")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if want_cost is not None:
                parts = line.split()
                if len(parts) >= 2:
                    cost[want_cost] = cost.get(want_cost, 0) + int(parts[1])
                want_cost = None
                continue
            m = rx.match(line)
            if m:
                fid, name = m.group(1), m.group(2)
                if name:
                    names[fid] = name
                if line.startswith("cfn="):
                    callee = fid
                continue
            if line.startswith("calls=") and callee is not None:
                n = int(line[6:].split()[0])
                calls[callee] = calls.get(callee, 0) + n
                want_cost = callee
    rows = []
    for fid, name in names.items():
        if any(p in name for p in pats) and calls.get(fid):
            rows.append((name, calls[fid], cost.get(fid, 0)))
    for name, n, c in sorted(rows, key=lambda r: -r[2]):
        print(f"{n:8d} calls {c / n:9.0f} instr/call  {name[:150]}")


main()
