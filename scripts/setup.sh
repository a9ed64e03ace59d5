#!/usr/bin/env bash
# Installs what shootout's tests and benchmarks use: Debian's nginx
# (real-server load tests), PostgreSQL (the database routes, their
# verification and the database studies), Chromium (browser test of the HTML
# report), the peer tools tests call (curl, iproute2's `ip`, util-linux's
# `setpriv` and `taskset`), a toolchain for every reference server where one
# is missing (go, python3 with venv, node and npm, Java with Maven, cargo),
# cargo-nextest (the test runner) and the browser test's npm packages.
#
# Nothing here is fatal: what cannot be installed is said once, and each test
# that needs it is counted as skipped, naming it. Under CI=true those tests
# fail instead (shootout-testkit; CONTRIBUTING.md "Skipped tests"), so a
# missing install step cannot hide behind a green run.
set -u
cd "$(dirname "$0")/.." || exit 2

say() { printf 'setup: %s\n' "$*" >&2; }
has() { command -v "$1" >/dev/null 2>&1; }

need_pkgs=()
[ -x /usr/sbin/nginx ] || need_pkgs+=(nginx)
# Any major version will do: shootout uses the newest it finds.
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need_pkgs+=(postgresql)
[ -x /usr/bin/chromium ] || need_pkgs+=(chromium chromium-driver)
{ has taskset && has setpriv; } || need_pkgs+=(util-linux)
has curl || need_pkgs+=(curl)
has ip || need_pkgs+=(iproute2)
# deploy/kubernetes/check.sh lints its scripts with shellcheck; e2e.sh
# (run by hand) reads the kubelet's state with jq.
has shellcheck || need_pkgs+=(shellcheck)
has jq || need_pkgs+=(jq)
# The reference servers' toolchains (targets/*/target.toml `toolchain`),
# from Debian where this machine lacks them.
has go || need_pkgs+=(golang-go)
{ has python3 && python3 -c 'import venv, ensurepip' 2>/dev/null; } || need_pkgs+=(python3 python3-venv)
{ has node && has npm; } || need_pkgs+=(nodejs npm)
{ has java && has mvn; } || need_pkgs+=(default-jdk-headless maven)
has cargo || need_pkgs+=(cargo)

if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && has apt-get; then
        say "installing ${need_pkgs[*]} from Debian"
        # shootout starts its own throwaway clusters; Debian's package would
        # otherwise create and start a system cluster on port 5432.
        if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
            mkdir -p /etc/postgresql-common
            echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
        fi
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"; } >/tmp/shootout-apt.log 2>&1; then
            say "apt-get failed (see /tmp/shootout-apt.log); the tests that need ${need_pkgs[*]} will be skipped (failed under CI=true)"
        fi
    else
        say "not root or no apt-get: cannot install ${need_pkgs[*]}; the tests that need them will be skipped (failed under CI=true)"
    fi
fi

# The test runner scripts/test.sh uses (test groups, per-test time-outs,
# JUnit): built once from crates.io into ~/.cargo/bin, then kept. Without it
# the suite cannot run, so its failure is said and test.sh stops on it.
# 0.9.133 is the first with the group() filterset .config/nextest.toml needs.
nextest=0.9.151
have=$(cargo nextest --version 2>/dev/null | sed -n 's/^cargo-nextest \([0-9.]*\).*/\1/p')
if [ -z "$have" ] || [ "$(printf '%s\n' 0.9.133 "$have" | sort -V | head -1)" != 0.9.133 ]; then
    say "installing cargo-nextest $nextest from crates.io (once; a few minutes)"
    cargo install --locked --quiet "cargo-nextest@$nextest" >&2 || say "cargo install cargo-nextest failed: the test suite cannot run"
fi

# deploy/kubernetes/check.sh reads its rendered manifests back with
# PyYAML, in the python3 the scripts run (pip, from PyPI, once).
if has python3 && ! python3 -c 'import yaml' 2>/dev/null; then
    say "installing PyYAML for deploy/kubernetes/check.sh"
    python3 -m pip install --quiet --root-user-action=ignore pyyaml >&2 || say "pip install pyyaml failed: deploy/kubernetes/check.sh will stop on it"
fi

browser=crates/report/tests/browser
if has npm; then
    if [ ! -d "$browser/node_modules/playwright-core" ]; then
        say "installing the browser test's npm packages"
        npm ci --prefix "$browser" --no-audit --no-fund --loglevel=error >&2 || say "npm ci failed; the browser test will be skipped (failed under CI=true)"
    fi
else
    say "no npm: the browser test will be skipped (failed under CI=true)"
fi
exit 0
