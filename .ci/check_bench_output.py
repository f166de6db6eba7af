#!/usr/bin/env python3
"""Checks what `memref-bench --json --plot` wrote in CI's benchmarks route: the JSON's rows are
the sizes and opt levels asked for, with a positive median each, and the plot is a PNG.

Usage: check_bench_output.py ROWS.json PLOT.png
"""

import json
import sys

rows = json.load(open(sys.argv[1]))["rows"]
got = [(r["size"], r["opt_level"]) for r in rows]
assert got == [(16, 0), (32, 0), (16, 3), (32, 3)] and all(r["median"] > 0 for r in rows), rows
print(f"memref-bench --json: {len(rows)} rows")
with open(sys.argv[2], "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n", "memref-bench --plot did not write a PNG"
print("memref-bench --plot: a PNG")
