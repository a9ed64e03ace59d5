#!/usr/bin/env python3
"""The closing lines of scripts/test.sh, from cargo-nextest's JUnit reports,
the skip log that shootout-testkit writes (SHOOTOUT_SKIP_LOG) and the
per-process times that scripts/test-runner.sh writes (SHOOTOUT_TEST_TIMES).

Rust's test harness has no runtime skip: a test that could not run returns
early and counts as passed. Each such test recorded itself in the skip log
(binary, test, kind, reason), so here it moves from "passed" to "skipped",
beside the harness's own ignored tests. Prints the ten slowest test
binaries (wall and CPU seconds, summed over their tests), every skipped
test with its reason, then `N passed, N failed, N skipped` alone on the
last line (the plain form CI reads). A test that recorded a skip but
failed stays failed. A report that is missing or unreadable is an error
(exit 2): a phase that wrote nothing must not read as "0 failed".

usage: test-totals.py [--times TIMES] [--skips SKIP_LOG] JUNIT.xml...
"""
import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict


def short(binary):
    """`shootout::load_cli` or `load_cli-0123abcd` -> `load_cli`; a crate's
    unit tests (`shootout-servers`, `shootout_servers-0123abcd`) ->
    `shootout_servers (unit)`."""
    if "::" in binary:
        return binary.split("::", 1)[1]
    name = binary.rsplit("-", 1)[0] if len(binary) > 17 and binary[-17] == "-" else binary
    name = name.replace("-", "_")
    return name + " (unit)" if name.startswith("shootout") else name


def parse_junit(paths):
    """(binary, test) -> ok|failed|ignored, from every report."""
    status = {}
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            sys.exit(f"test-totals: cannot read {path}: {e}")
        for case in root.iter("testcase"):
            binary = short(case.get("classname", "?"))
            name = case.get("name", "?")
            if case.find("failure") is not None or case.find("error") is not None:
                status[(binary, name)] = "failed"
            elif case.find("skipped") is not None:
                status[(binary, name)] = "ignored"
            else:
                status[(binary, name)] = "ok"
    return status


def parse_skips(path):
    skips = defaultdict(list)  # (binary, test) -> [(kind, reason)]
    if not path:
        return skips
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t", 3)
                if len(parts) == 4:
                    binary, test, kind, reason = parts
                    skips[(short(binary), test)].append((kind, reason))
    except FileNotFoundError:
        pass
    return skips


def slowest(path, n=10):
    per = defaultdict(lambda: [0.0, 0.0, 0])
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 4:
                    b = per[short(parts[0])]
                    b[0] += float(parts[2])
                    b[1] += float(parts[3])
                    b[2] += 1
    except FileNotFoundError:
        return
    rows = sorted(per.items(), key=lambda kv: -kv[1][0])[:n]
    print(f"slowest test binaries (of {len(per)}; wall and CPU seconds summed over their tests):")
    for name, (wall, cpu, tests) in rows:
        print(f"  {wall:7.1f}s wall {cpu:7.1f}s cpu  {tests:4d} tests  {name}")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.rsplit("usage: ", 1)[1])
    ap.add_argument("--times")
    ap.add_argument("--skips")
    ap.add_argument("junit", nargs="+")
    a = ap.parse_args()
    status = parse_junit(a.junit)
    skips = parse_skips(a.skips)
    if a.times:
        slowest(a.times)
    skipped = []
    for (binary, test), why in sorted(skips.items()):
        if status.get((binary, test)) == "ok":
            reasons = "; ".join(f"{r} ({k})" for k, r in dict.fromkeys(why))
            skipped.append((binary, test, reasons))
        elif (binary, test) not in status:
            print(f"test-totals: a skip from {binary}::{test}, which no report names")
    ignored = [(b, t, "#[ignore]") for (b, t), s in sorted(status.items()) if s == "ignored"]
    passed = sum(1 for s in status.values() if s == "ok") - len(skipped)
    failed = [(b, t) for (b, t), s in sorted(status.items()) if s == "failed"]
    listed = skipped + ignored
    if failed:
        print(f"failed ({len(failed)}):")
        for b, t in failed:
            print(f"  {b}::{t}")
    if listed:
        print(f"skipped ({len(listed)}):")
    for binary, test, reason in listed:
        print(f"  {binary}::{test}: {reason}")
    # Last, alone on its line: the line CI reads.
    print(f"{passed} passed, {len(failed)} failed, {len(listed)} skipped")


if __name__ == "__main__":
    main()
