#!/usr/bin/env bash
# Installs what shootout's tests and benchmarks use beyond the toolchains:
# Debian's nginx (real-server load test), PostgreSQL (the database routes,
# their verification and the database studies), Chromium (browser test of
# the HTML report) and the report test's npm packages. Each missing piece is reported
# and its test skips visibly; nothing here is fatal, so a machine without root
# or apt still runs every other check.
set -u
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

need_pkgs=()
[ -x /usr/sbin/nginx ] || need_pkgs+=(nginx)
# Any major version will do: shootout uses the newest it finds.
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need_pkgs+=(postgresql)
[ -x /usr/bin/chromium ] || need_pkgs+=(chromium chromium-driver)
command -v taskset >/dev/null || need_pkgs+=(util-linux)

if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing ${need_pkgs[*]} from Debian"
        # shootout starts its own throwaway clusters; Debian's package would
        # otherwise create and start a system cluster on port 5432.
        if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
            mkdir -p /etc/postgresql-common
            echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
        fi
        if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"; } >/tmp/shootout-apt.log 2>&1; then
            say "apt-get failed (see /tmp/shootout-apt.log); the nginx, database and browser tests will SKIP"
        fi
    else
        say "not root or no apt-get: cannot install ${need_pkgs[*]}; the tests that need them will SKIP"
    fi
fi

browser=crates/report/tests/browser
if command -v npm >/dev/null; then
    if [ ! -d "$browser/node_modules/playwright-core" ]; then
        say "installing the browser test's npm packages"
        npm ci --prefix "$browser" --no-audit --no-fund --loglevel=error >&2 || say "npm ci failed; the browser test will SKIP"
    fi
else
    say "no npm: the browser test will SKIP"
fi
exit 0
