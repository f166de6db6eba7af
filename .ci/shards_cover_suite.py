#!/usr/bin/env python3
"""Checks that lit's shards ran the whole suite once: the test cases in the shards' xunit
files (lit --num-shards N --run-shard K --xunit-xml-output F) are exactly the suite's, as
`lit --show-tests <suite>` lists them, no test is in two shards and none failed.

Usage: shards_cover_suite.py LIT SUITE SHARD.xml...
"""

import collections
import subprocess
import sys
import xml.etree.ElementTree as ET


def suite_tests(lit: str, suite: str) -> set[str]:
    out = subprocess.run([lit, "--show-tests", suite], capture_output=True, text=True, check=True).stdout
    return {line.split("::", 1)[1].strip() for line in out.splitlines() if "::" in line}


def shard_tests(path: str) -> tuple[list[str], list[str]]:
    """The tests of one xunit file (as `folder/file`), and those that failed."""
    names, failed = [], []
    for case in ET.parse(path).getroot().iter("testcase"):
        # classname is `<suite name>.<folder>`, with the folder's / written as dots.
        folder = case.get("classname").split(".", 1)[1].replace(".", "/")
        name = f"{folder}/{case.get('name')}"
        names.append(name)
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
    return names, failed


def main(lit: str, suite: str, *shards: str) -> int:
    expected = suite_tests(lit, suite)
    runs = collections.Counter()
    problems = []
    for path in shards:
        names, failed = shard_tests(path)
        runs.update(names)
        problems += [f"{path}: {name} failed" for name in failed]
        print(f"{path}: {len(names)} tests")
    problems += [f"{name} ran in {n} shards" for name, n in runs.items() if n > 1]
    problems += [f"{name} is in no shard" for name in sorted(expected - set(runs))]
    problems += [f"{name} is not in `lit --show-tests {suite}`" for name in sorted(set(runs) - expected)]
    for problem in problems:
        print("error:", problem, file=sys.stderr)
    if not problems:
        print(f"{len(shards)} shards ran the {len(expected)} tests of {suite} once each, none failed")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    sys.exit(main(*sys.argv[1:]))
