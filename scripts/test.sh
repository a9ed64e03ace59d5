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

step "build shootout"
cargo build --release --locked

step "build every reference server whose toolchain is present"
./target/release/shootout build

step "verify every reference server against targets/SPEC.md"
./target/release/shootout verify --no-build

step "test suite"
cargo test --workspace --locked
