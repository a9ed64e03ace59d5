#!/usr/bin/env python3
"""The closing line of scripts/test.sh, from cargo test's captured output and
the skip log that shootout-testkit writes (SHOOTOUT_SKIP_LOG).

cargo has no runtime skip: a test that could not run returns early and cargo
counts it as passed. Each such test recorded itself in the skip log
(binary, test, kind, reason), so here it moves from "passed" to "skipped",
beside cargo's own ignored tests. Prints every skipped test with its
reason, then `N passed, N failed, N skipped` alone on the last line (the
plain form CI reads). A test that recorded a skip but failed stays failed.

usage: test-totals.py CARGO_LOG [SKIP_LOG]
"""
import re
import sys
from collections import defaultdict

RUNNING = re.compile(r"^\s+Running \S+.* \((?P<path>[^)]+)\)\s*$")
DOCTESTS = re.compile(r"^\s+Doc-tests (?P<crate>\S+)\s*$")
TEST = re.compile(r"^test (?P<name>\S+)(?: - .*)? \.\.\. (?P<status>ok|FAILED|ignored)(?:, (?P<reason>.*))?$")
RESULT = re.compile(r"^test result: \S+ (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored;")


def display(binary):
    """`load_cli-0123abcd` -> `load_cli` (cargo's hash is noise to a reader)."""
    return re.sub(r"-[0-9a-f]{16}$", "", binary)


def parse_cargo(lines):
    binary = "?"
    status = defaultdict(dict)  # binary -> test -> ok|FAILED|ignored
    ignored = []  # (binary, test, reason)
    failed_in = defaultdict(int)
    totals = {"passed": 0, "failed": 0, "ignored": 0}
    for line in lines:
        line = line.rstrip("\n")
        if m := RUNNING.match(line):
            binary = m["path"].rsplit("/", 1)[-1]
        elif m := DOCTESTS.match(line):
            binary = "doc-tests " + m["crate"]
        elif m := TEST.match(line):
            status[binary][m["name"]] = m["status"]
            if m["status"] == "ignored":
                ignored.append((binary, m["name"], m["reason"] or "#[ignore]"))
        elif m := RESULT.match(line):
            for k in totals:
                totals[k] += int(m[k])
            failed_in[binary] += int(m["failed"])
    return totals, status, ignored, failed_in


def parse_skips(path):
    skips = {}  # (binary, test) -> [(kind, reason)]
    if not path:
        return skips
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t", 3)
                if len(parts) == 4:
                    binary, test, kind, reason = parts
                    skips.setdefault((binary, test), []).append((kind, reason))
    except FileNotFoundError:
        pass
    return skips


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        totals, status, ignored, failed_in = parse_cargo(f)
    skips = parse_skips(sys.argv[2] if len(sys.argv) == 3 else None)
    skipped = []
    for (binary, test), why in sorted(skips.items()):
        st = status.get(binary, {}).get(test)
        # A line lost to a child's output on the same terminal: the binary
        # had no failure, so the test passed as far as cargo knows.
        if st == "ok" or (st is None and binary in failed_in and failed_in[binary] == 0):
            reasons = "; ".join(f"{r} ({k})" for k, r in dict.fromkeys(why))
            skipped.append((binary, test, reasons))
    passed = totals["passed"] - len(skipped)
    listed = skipped + ignored
    if listed:
        print(f"skipped ({len(listed)}):")
    for binary, test, reason in listed:
        print(f"  {display(binary)}::{test}: {reason}")
    # Last, alone on its line: the line CI reads.
    print(f"{passed} passed, {totals['failed']} failed, {len(listed)} skipped")


if __name__ == "__main__":
    main()
