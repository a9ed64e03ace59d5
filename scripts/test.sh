#!/usr/bin/env bash
# The one test command (README "Quick start", CONTRIBUTING, CI). It installs
# what the tests need, checks style and the house's rules, builds the tool
# and every reference server, proves they answer alike (`shootout verify`),
# then runs the whole test suite. Any failure stops it with a non-zero exit.
#
# Its last line is `N passed, N failed, N skipped` (scripts/test-totals.py),
# after the ten slowest test binaries and the list of skipped tests with
# their reasons. Under CI=true (how CI
# runs .ci/run) a test that finds something missing that scripts/setup.sh
# installs fails instead of skipping (shootout-testkit), and so does a
# reference server skipped for a missing toolchain. Each step's duration is
# printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

strict=false
case "${CI:-}" in true | 1) strict=true ;; esac

steps=()
step_name=""
step_start=$SECONDS
run_start=$SECONDS
step() {
    finish_step
    step_name="$*"
    step_start=$SECONDS
    printf '\n==> %s\n' "$*" >&2
}
finish_step() {
    if [ -n "$step_name" ]; then
        steps+=("$(printf '%5ds  %s' $((SECONDS - step_start)) "$step_name")")
    fi
    step_name=""
}
times_shown=false
show_times() {
    $times_shown && return 0
    times_shown=true
    finish_step
    printf '\nstep times (%ds in all):\n' $((SECONDS - run_start)) >&2
    printf '  %s\n' "${steps[@]}" >&2
}

tmp=$(mktemp -d)
# A step that fails still shows where the time went.
trap 'show_times; rm -rf "$tmp"' EXIT

step "setup (system packages, toolchains, the browser test's npm packages)"
bash scripts/setup.sh

# CI clones afresh each time, so its cargo target folder is kept outside
# the clone, between runs: compiled dependencies (the bulk of the build,
# optimised) are reused, and cargo's own fingerprints decide what is stale
# (the workspace's crates, whose files are new in every clone, rebuild).
# Passed as --target-dir, not CARGO_TARGET_DIR, so that `shootout build`'s
# cargo still puts the Rust servers where their manifests look. Emptied
# past 24 GiB. Elsewhere: the clone's own target/.
target_dir=target
if $strict; then
    target_dir=${SHOOTOUT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/shootout}/cargo-target
    mkdir -p "$target_dir"
    if [ "$(du -s --block-size=1G "$target_dir" | cut -f1)" -gt 24 ]; then
        echo "test.sh: $target_dir is over 24 GiB: emptied" >&2
        rm -rf "$target_dir" && mkdir -p "$target_dir"
    fi
fi
cargo_dir=(--target-dir "$target_dir")

step "python fixture is reproducible"
python3 targets/data/make_titanic.py --check

step "format, lints and the house's rules"
cargo fmt --all --check
cargo clippy "${cargo_dir[@]}" --workspace --all-targets --locked -- -D warnings
# Each crate's files form a tree (docs/architecture.md): a circle fails here.
python3 scripts/import-cycles.py
# Typed errors, quiet libraries, an architecture document that is true.
python3 scripts/house-rules.py

# One profile for everything: the test build's `shootout` (dependencies
# optimised, see Cargo.toml) builds and verifies the reference servers, so
# the workspace is compiled twice (clippy, tests), not three times. The
# benchmarks in bench/ build --release themselves.
step "build shootout and every test binary"
cargo test "${cargo_dir[@]}" --workspace --locked --no-run
shootout=$target_dir/debug/shootout

# A reference server skipped for a missing toolchain is a silent hole in
# every test that uses it: CI fails on it, naming the toolchain.
no_skipped_targets() {
    if $strict && grep -q ': skipped: ' "$1"; then
        grep ': skipped: ' "$1" | sed 's/^/error: CI=true: /' >&2
        echo "error: CI=true: scripts/setup.sh should have installed every target's toolchain" >&2
        return 1
    fi
}

step "build every reference server"
"$shootout" build 2>&1 | tee "$tmp/build.log"
no_skipped_targets "$tmp/build.log"

step "verify every reference server against targets/SPEC.md"
"$shootout" verify --no-build 2>&1 | tee "$tmp/verify.log"
no_skipped_targets "$tmp/verify.log"

# The quick half of deploy/kubernetes/ (the cluster itself, local-cluster.sh
# and e2e.sh, takes minutes and root: it is run by hand, see its README).
step "deploy/kubernetes: manifests render, N agrees, scripts parse"
bash deploy/kubernetes/check.sh

# cargo-nextest (scripts/setup.sh installs it): each test its own process,
# with a per-test time-out and a JUnit report. Two phases, sets defined once
# in .config/nextest.toml: what checks behaviour runs on every core, then
# what judges a measured figure runs alone, one test at a time.
export SHOOTOUT_SKIP_LOG="$tmp/skips.tsv"
export SHOOTOUT_TEST_TIMES="$tmp/times.tsv"
: >"$SHOOTOUT_SKIP_LOG"
: >"$SHOOTOUT_TEST_TIMES"
# Every test process through scripts/test-runner.sh, which records its
# wall and CPU time (for the slowest-binaries table below).
runner_var="CARGO_TARGET_$(rustc -vV | sed -n 's/^host: //p' | tr 'a-z-' 'A-Z_')_RUNNER"
export "$runner_var=$PWD/scripts/test-runner.sh"
status=0
junit=()
phase() {
    local name=$1
    shift
    step "test suite: $name"
    rm -f target/nextest/default/junit.xml
    # --no-fail-fast: one failing test must not hide the others' counts.
    cargo nextest run "${cargo_dir[@]}" --workspace --locked --no-fail-fast "$@" || status=$?
    if [ -f target/nextest/default/junit.xml ]; then
        cp target/nextest/default/junit.xml "$tmp/junit-$name.xml"
        junit+=("$tmp/junit-$name.xml")
    else
        echo "error: the $name phase wrote no report (a build error?)" >&2
        [ "$status" -ne 0 ] || status=1
    fi
}
phase parallel -E 'not group(timing)'
phase timing -E 'group(timing)' --test-threads 1
unset "$runner_var"
show_times
# Last: the slowest binaries, every skipped test with its reason, then the
# closing line CI reads.
python3 scripts/test-totals.py --times "$SHOOTOUT_TEST_TIMES" --skips "$SHOOTOUT_SKIP_LOG" "${junit[@]}"
exit "$status"
