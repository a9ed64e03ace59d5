#!/usr/bin/env bash
# Create (or reuse) the shared virtualenv for every targets/python-* server.
#
# The venv lives in targets/python/.venv and is built with `python3 -m venv`
# from the pinned requirements.txt beside this script. A stamp file inside the
# venv records a hash of requirements.txt plus the interpreter version; when it
# matches, the script exits at once. Otherwise the venv is rebuilt from scratch.
# Safe to call from several target builds at once (serialised with flock when
# available). Works from any current directory.
set -euo pipefail

src="${BASH_SOURCE[0]}"
case "$src" in */*) here="${src%/*}" ;; *) here=. ;; esac
here="$(cd "$here" && pwd)"
venv="$here/.venv"
req="$here/requirements.txt"
stamp="$venv/.requirements.sha256"

die() { echo "ensure-venv: $*" >&2; exit 1; }

command -v python3 >/dev/null 2>&1 || die "python3 is not on PATH; install Python 3 (3.11 is what the pins were resolved with)"
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 \
    || die "python3 has no working venv/ensurepip module; install it (e.g. apt-get install python3-venv)"
[ -f "$req" ] || die "missing $req"

hash_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$req" | cut -d' ' -f1
    else
        python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$req"
    fi
}
want="$(hash_of) $(python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"

is_current() {
    [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]
}

# Fast path: nothing to do.
if is_current; then
    exit 0
fi

build() {
    # Re-check under the lock: another build may have finished meanwhile.
    if is_current; then
        return 0
    fi
    echo "ensure-venv: building $venv from requirements.txt" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" || die "python3 -m venv failed"
    export PIP_DISABLE_PIP_VERSION_CHECK=1
    "$venv/bin/python" -m pip install --quiet --require-virtualenv -r "$req" \
        || { rm -rf "$venv"; die "pip install -r requirements.txt failed"; }
    # Written last, so a half-built venv never looks current.
    echo "$want" > "$stamp"
    echo "ensure-venv: ready" >&2
}

if command -v flock >/dev/null 2>&1; then
    lock="$here/.venv.lock"
    exec 9>"$lock"
    flock 9
    build
else
    build
fi
