#!/usr/bin/env python3
"""Adds up the `latency` histograms of shard interval logs by themselves,
without shootout, and prints their count and percentiles as JSON, so that
e2e.sh can compare them with what `shootout merge` reported.

    hdrcheck.py shard-1.hlog shard-2.hlog
    {"count": 20000, "p50": 0.412, "p99": 1.203, "max": 3.115}   (ms)

It decodes HdrHistogram's V2 compressed encoding (base64 of a zlib stream
of ZigZag LEB128 counts, HdrHistogram's own "Histogram encoding" doc) and
takes each quantile as HdrHistogram does: the highest value equivalent to
the first bucket whose running count reaches ceil(q * total).
"""

import base64
import json
import math
import struct
import sys
import zlib

COMPRESSED_V2 = 0x1C849304
ENCODING_V2 = 0x1C849303


def decode(b64):
    raw = base64.b64decode(b64)
    cookie, length = struct.unpack(">ii", raw[:8])
    if cookie & ~0xF0 != COMPRESSED_V2:  # the low byte's high nibble: word size
        raise ValueError(f"not a V2 compressed histogram: cookie {cookie:#x}")
    data = zlib.decompress(raw[8 : 8 + length])
    cookie, payload, offset, digits, lowest, highest, _ratio = struct.unpack(">iiiiqqd", data[:40])
    if cookie & ~0xF0 != ENCODING_V2 or offset != 0:
        raise ValueError("unsupported histogram encoding")
    counts = []
    pos, end = 40, 40 + payload
    while pos < end:
        value, shift = 0, 0
        for i in range(9):
            byte = data[pos]
            pos += 1
            if i == 8:
                value |= byte << 56
                break
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        value = (value >> 1) ^ -(value & 1)  # ZigZag
        if value < 0:
            counts.extend([0] * -value)
        else:
            counts.append(value)
    return digits, lowest, counts


def main():
    total = None
    layout = None
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                if not line.startswith("Tag=latency,"):
                    continue
                digits, lowest, counts = decode(line.rstrip("\n").split(",")[-1])
                if layout is None:
                    layout = (digits, lowest)
                elif layout != (digits, lowest):
                    raise ValueError(f"{path}: histograms of another layout")
                if total is None:
                    total = []
                if len(counts) > len(total):
                    total.extend([0] * (len(counts) - len(total)))
                for i, c in enumerate(counts):
                    total[i] += c
    if total is None:
        raise SystemExit("no latency histograms")
    digits, lowest = layout
    unit = int(math.floor(math.log2(lowest)))
    sub_count_mag = int(math.ceil(math.log2(2 * 10**digits)))
    half_mag = sub_count_mag - 1
    half = 1 << half_mag

    def highest_equivalent(index):
        bucket = (index >> half_mag) - 1
        sub = (index & (half - 1)) + half
        if bucket < 0:
            sub -= half
            bucket = 0
        return (sub << (bucket + unit)) + (1 << (bucket + unit)) - 1

    count = sum(total)

    def quantile(q):
        want = max(1, math.ceil(q * count))
        running = 0
        for i, c in enumerate(total):
            running += c
            if running >= want:
                return highest_equivalent(i)
        raise AssertionError

    top = max(i for i, c in enumerate(total) if c)
    out = {"count": count, "p50": quantile(0.5) / 1000, "p99": quantile(0.99) / 1000, "max": highest_equivalent(top) / 1000}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
