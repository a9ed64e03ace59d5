#!/usr/bin/env bash
# The one test command (README "Quick start", CONTRIBUTING, CI). It installs
# what the tests need, checks style, builds the tool and every reference server
# whose toolchain is present, proves they answer alike (`shootout verify`),
# then runs the whole test suite. Any failure stops it with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

step "setup (system packages for the nginx and browser tests)"
bash scripts/setup.sh

step "python fixture is reproducible"
python3 targets/data/make_titanic.py --check

step "format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# Each crate's files form a tree (docs/architecture.md): a circle fails here.
python3 scripts/import-cycles.py

step "build shootout"
cargo build --release --locked

step "build every reference server whose toolchain is present"
./target/release/shootout build

step "verify every reference server against targets/SPEC.md"
./target/release/shootout verify --no-build

step "test suite"
# cargo captures a skipped test's own message, so say here what will skip.
[ -x /usr/sbin/nginx ] || echo "SKIP: the nginx load test (nginx is not installed)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || echo "SKIP: the browser test (no Chromium)"
[ -d crates/report/tests/browser/node_modules/playwright-core ] || echo "SKIP: the browser test (playwright-core not installed)"
# cargo's own last line is the last doc-test binary's, often "0 passed":
# the closing line is the sum over every test binary, doc tests included,
# printed even when a test fails (the script still exits non-zero then).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# --no-fail-fast: one failing binary must not hide the others' counts.
cargo test --workspace --locked --no-fail-fast | tee "$log" || status=$?
if [ "$status" -ne 0 ] && ! grep -q '^test result: FAILED' "$log"; then
    echo "error: cargo test exited $status with no failing test (a build error?)" >&2
fi
bash scripts/test-totals.sh "$log"
exit "$status"
