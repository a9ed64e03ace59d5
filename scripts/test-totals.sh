#!/usr/bin/env bash
# Sums cargo test's "test result: ok. X passed; Y failed; ..." lines (one per
# test binary, doc tests included) from a captured log, or stdin, and prints
# "N passed, N failed" alone on a line: scripts/test.sh's closing line.
set -euo pipefail
awk '
    /^test result: / {
        for (i = 2; i <= NF; i++) {
            if ($i ~ /^passed;?$/) passed += $(i - 1)
            if ($i ~ /^failed;?$/) failed += $(i - 1)
        }
    }
    END { printf "%d passed, %d failed\n", passed, failed }
' "${1:--}"
