#!/usr/bin/env bash
# `npy render` against `npy stats` on the same big float32 array (issue 16's
# target: render under 2x the time of stats, under 100 MB of the process's
# own memory beyond the page cache).
#
#   scripts/bench-render.sh [DIR] [RUNS]      (defaults: /tmp/npy-render-bench, 5)
#
# Creates DIR/big.npy once, a (32768, 32768) float32 array (4 GiB) of a
# smooth field written by numpy from the project venv, then runs stats and
# render alternately RUNS times (after one untimed warm-up of each, so both
# read a warm page cache) and prints each run and the medians. Peak memory is
# RssAnon polled from /proc every 10 ms: the mapping's file pages are page
# cache, shared and reclaimable, so max RSS (which counts them) says nothing.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-/tmp/npy-render-bench}"
runs="${2:-5}"
mkdir -p "$dir"
cargo build --release -p npy-cli --manifest-path "$repo/Cargo.toml" >&2
npy="$repo/target/release/npy"
big="$dir/big.npy"
if [[ ! -f "$big" ]]; then
    python="$("$repo/scripts/setup-venv.sh")"
    echo "writing $big (4 GiB)" >&2
    "$python" - "$big" <<'PY'
import sys
import numpy as np
n = 32768
a = np.lib.format.open_memmap(sys.argv[1], mode="w+", dtype=np.float32, shape=(n, n))
x = np.linspace(0, 20, n, dtype=np.float32)
for i in range(0, n, 1024):
    y = np.arange(i, i + 1024, dtype=np.float32)[:, None] / 1000
    a[i:i + 1024] = np.sin(x[None, :] + y) * np.cos(y * 3)
a.flush()
PY
fi

# Prints "<seconds> <peak RssAnon KiB>" for one run of "$@".
measure() {
    local start end pid peak=0 value
    start=$(date +%s%N)
    "$@" > /dev/null &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        value=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [[ -n "$value" && "$value" -gt "$peak" ]] && peak=$value
        sleep 0.01
    done
    wait "$pid"
    end=$(date +%s%N)
    echo "$(( (end - start) / 1000000 )) $peak"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

stats_cmd=("$npy" stats "$big")
render_cmd=("$npy" render "$big" "$dir/big.png")
measure "${stats_cmd[@]}" > /dev/null
measure "${render_cmd[@]}" > /dev/null
: > "$dir/stats.txt"
: > "$dir/render.txt"
for run in $(seq "$runs"); do
    read -r ms kib < <(measure "${stats_cmd[@]}")
    echo "$ms $kib" >> "$dir/stats.txt"
    echo "run $run: stats  ${ms} ms, peak RssAnon ${kib} KiB"
    read -r ms kib < <(measure "${render_cmd[@]}")
    echo "$ms $kib" >> "$dir/render.txt"
    echo "run $run: render ${ms} ms, peak RssAnon ${kib} KiB"
done
stats_ms=$(cut -d' ' -f1 "$dir/stats.txt" | median)
render_ms=$(cut -d' ' -f1 "$dir/render.txt" | median)
render_kib=$(cut -d' ' -f2 "$dir/render.txt" | sort -n | tail -1)
echo "median: stats ${stats_ms} ms, render ${render_ms} ms (ratio $(awk "BEGIN { printf \"%.2f\", $render_ms / $stats_ms }")), render peak RssAnon ${render_kib} KiB"
