#!/usr/bin/env bash
# Creates the Python venv the fixture generator and the numpy interop tests use.
#
#   scripts/setup-venv.sh          -> <repo>/.venv (or $NPY_VENV)
#
# Idempotent: if the venv exists and imports the pinned numpy, it does nothing.
# Fails (non-zero exit) when numpy cannot be installed: CI must not skip interop.
# Prints the venv's python path on the last line of stdout.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${NPY_VENV:-$repo_root/.venv}"
requirements="$repo_root/scripts/requirements.txt"
python_bin="$venv/bin/python"

# The pinned version, read from requirements.txt so it is stated once.
wanted="$(sed -n 's/^numpy==\([^[:space:]]*\).*/\1/p' "$requirements")"
if [[ -z "$wanted" ]]; then
    echo "setup-venv: no 'numpy==<version>' pin in $requirements" >&2
    exit 1
fi

have_numpy() {
    [[ -x "$python_bin" ]] &&
        [[ "$("$python_bin" -c 'import numpy; print(numpy.__version__)' 2>/dev/null)" == "$wanted" ]]
}

# Every other `name==version` pin (matplotlib for the render tests) installed too.
have_pins() {
    "$python_bin" - "$requirements" <<'PY' 2>/dev/null
import importlib.metadata, sys
for line in open(sys.argv[1]):
    pin = line.split("#")[0].strip()
    if pin:
        name, _, version = pin.partition("==")
        # A pin may name extras (moto[server]); the distribution is the name before them.
        if importlib.metadata.version(name.split("[")[0]) != version:
            sys.exit(1)
PY
}

if ! { have_numpy && have_pins; }; then
    if [[ ! -x "$python_bin" ]]; then
        echo "setup-venv: creating $venv" >&2
        "${PYTHON:-python3}" -m venv "$venv" >&2
    fi
    echo "setup-venv: installing numpy==$wanted into $venv" >&2
    "$python_bin" -m pip install --disable-pip-version-check --quiet -r "$requirements" >&2
    if ! { have_numpy && have_pins; }; then
        echo "setup-venv: numpy $wanted (or another pin of $requirements) is not importable from $python_bin after install" >&2
        exit 1
    fi
fi

echo "$python_bin"
