#!/usr/bin/env bash
# Fuzzing driver, used by `just fuzz`, `just fuzz-seed` and CI's smoke run.
#
#   fuzz/run.sh seed                      copy tests/fixtures into fuzz/corpus/<target>/
#   fuzz/run.sh run SECONDS [TARGET...]   seed, then build and fuzz each target
#                                         for SECONDS; fails when a target does
#                                         not build, crashes, or runs no input;
#                                         ends with runs and seconds per target
#   fuzz/run.sh check                     exit 0 if fuzzing can run here (prints why not)
#
# Toolchain: stable with RUSTC_BOOTSTRAP=1 (cargo-fuzz needs -Z flags, which
# stable rustc accepts only with that variable set), so fuzzing needs nothing
# beyond the toolchain the project builds with. NPY_FUZZ_TOOLCHAIN=nightly
# uses a nightly toolchain instead. cargo-fuzz is installed from crates.io when
# missing (about a minute on 2 cores), unless NPY_FUZZ_NO_INSTALL is set.
#
# Environment: NPY_FUZZ_TOOLCHAIN (see above); NPY_FUZZ_JOBS (parallel fuzzing
# processes per target, default 1); NPY_FUZZ_SANITIZER (none/address for every
# target; CI's smoke run uses none so that one build serves all targets).
set -euo pipefail
cd "$(dirname "$0")"

TARGETS=(header read_npy mmap_open npz npz_index pickle)
FIXTURES=../tests/fixtures

# Pure safe Rust is fuzzed without a sanitizer (twice the executions; the
# bugs to find are panics, hangs and huge allocations, which libFuzzer sees
# by itself); targets that reach unsafe code (mappings, zip, zlib) use ASan.
sanitizer() {
    if [ -n "${NPY_FUZZ_SANITIZER:-}" ]; then
        echo "$NPY_FUZZ_SANITIZER"
        return
    fi
    case "$1" in
        header | read_npy | pickle) echo none ;;
        *) echo address ;;
    esac
}

toolchain() {
    echo "+${NPY_FUZZ_TOOLCHAIN:-stable}"
}

cargo_fuzz() {
    local tc
    tc="$(toolchain)"
    if [ "$tc" = "+stable" ]; then
        RUSTC_BOOTSTRAP=1 cargo "$tc" fuzz "$@"
    else
        cargo "$tc" fuzz "$@"
    fi
}

ensure_cargo_fuzz() {
    if cargo fuzz --version >/dev/null 2>&1; then
        return 0
    fi
    if [ -n "${NPY_FUZZ_NO_INSTALL:-}" ]; then
        echo "cargo-fuzz is not installed and NPY_FUZZ_NO_INSTALL is set" >&2
        return 1
    fi
    echo "installing cargo-fuzz from crates.io (cargo install cargo-fuzz --locked)" >&2
    cargo install cargo-fuzz --locked >&2
}

seed() {
    local target dir
    for target in "${TARGETS[@]}"; do
        dir="corpus/$target"
        mkdir -p "$dir"
        case "$target" in
            header | read_npy)
                find "$FIXTURES" -name '*.npy' -exec cp {} "$dir/" \;
                ;;
            mmap_open)
                # The target's first byte picks a row window; 0 = whole file.
                local f
                while IFS= read -r f; do
                    { printf '\0'; cat "$f"; } >"$dir/$(basename "$f")"
                    { printf '\x13'; cat "$f"; } >"$dir/w-$(basename "$f")"
                done < <(find "$FIXTURES" -name '*.npy')
                ;;
            npz)
                find "$FIXTURES" -name '*.npz' -exec cp {} "$dir/" \;
                ;;
            npz_index)
                # A member of "abcdefg" in two blocks (4 and 3 bytes, 3 and 2
                # compressed), as the directory and the 0x424e field record
                # it, then 5 bytes of compressed data (not deflate: rejected).
                python3 -c '
import struct, sys, zlib
crc = zlib.crc32
payload = struct.pack("<BBII", 1, 0, 4, 2) + struct.pack("<II", 3, crc(b"abcd")) + struct.pack("<II", 2, crc(b"efg"))
field = struct.pack("<HH", 0x424E, len(payload)) + payload
sys.stdout.buffer.write(struct.pack("<QQI", 7, 5, crc(b"abcdefg")) + field + b"\x01\x02\x03\x04\x05")
' >"$dir/two-blocks"
                ;;
            pickle)
                # numpy's object arrays, whole (read_npy) and as bare pickles;
                # and ints just past Python's 4300-digit limit and far past
                # it (LONG4 of 1785 and 8192 bytes), whose text is bounded.
                local f n
                while IFS= read -r f; do
                    cp "$f" "$dir/"
                    tail -c +129 "$f" >"$dir/pickle-$(basename "$f")"
                done < <(find "$FIXTURES/object" -name '*.npy')
                for n in 1785 8192; do
                    {
                        printf '\x80\x02\x8b'
                        # shellcheck disable=SC2059 # the format is the length
                        printf "$(printf '\\x%02x\\x%02x' $((n % 256)) $((n / 256)))"
                        printf '\x00\x00'
                        head -c "$n" /dev/zero | tr '\0' '\177'
                        printf '.'
                    } >"$dir/big-int-$n"
                done
                ;;
        esac
    done
    echo "seeded: $(for t in "${TARGETS[@]}"; do printf '%s=%s ' "$t" "$(find "corpus/$t" -type f | wc -l)"; done)"
}

check() {
    if ! command -v rustup >/dev/null 2>&1; then
        echo "no rustup: cannot select a toolchain for cargo-fuzz"
        return 1
    fi
    if ! ensure_cargo_fuzz; then
        echo "cargo-fuzz unavailable"
        return 1
    fi
    local tc
    tc="$(toolchain)"
    # The -Z flags must be accepted: the decisive test is a tiny build probe.
    if [ "$tc" = "+stable" ]; then
        if ! RUSTC_BOOTSTRAP=1 rustc +stable -Zunstable-options --print sysroot >/dev/null 2>&1; then
            echo "stable rustc refuses -Z flags even with RUSTC_BOOTSTRAP=1"
            return 1
        fi
    fi
    echo "fuzzing available with toolchain $tc"
}

# The figures of one target's log: "runs seconds" (libFuzzer's final
# stat::number_of_executed_units, summed over jobs, and the longest
# "Done N runs in S second(s)"); empty when the log has no final stats.
figures() {
    awk '
        /^stat::number_of_executed_units:/ { runs += $2; seen = 1 }
        /^Done [0-9]+ runs in [0-9]+ second/ { if ($5 > secs) secs = $5 }
        END { if (seen) print runs, secs + 0 }
    ' "$1"
}

run() {
    local seconds="$1"
    shift
    local targets=("$@")
    [ ${#targets[@]} -eq 0 ] && targets=("${TARGETS[@]}")
    check
    seed
    local jobs="${NPY_FUZZ_JOBS:-1}"
    local target status=0 summary=()
    mkdir -p logs
    for target in "${targets[@]}"; do
        local log="logs/$target.log"
        echo "==> fuzzing $target for ${seconds}s ($(toolchain), sanitizer $(sanitizer "$target"), $jobs job(s))"
        local extra=()
        # Headers are at most 10000 characters by default: longer inputs only
        # cost time (seeds beyond it are truncated). Pickles get room for
        # ints far beyond Python's 4300-digit limit (1786 bytes).
        case "$target" in
            pickle) extra+=("-dict=pickle.dict" "-max_len=65536") ;;
            npz | npz_index) ;;
            *) extra+=("-dict=npy.dict" "-max_len=16384") ;;
        esac
        [ "$jobs" -gt 1 ] && extra+=("-jobs=$jobs" "-workers=$jobs")
        # A target that does not build fails the run (not a silent pass).
        if ! cargo_fuzz build --release --sanitizer "$(sanitizer "$target")" "$target" >"$log" 2>&1; then
            tail -n 30 "$log" >&2
            echo "!! $target does not build: see fuzz/$log" >&2
            summary+=("$target: does not build")
            status=1
            continue
        fi
        # -timeout: one input taking a second is a hang for these parsers.
        # -rss_limit_mb: a reader that trusts a length field shows up here.
        # The exit status is libFuzzer's: non-zero for a crash, hang or OOM.
        local code=0
        rm -f fuzz-*.log
        cargo_fuzz run --release --sanitizer "$(sanitizer "$target")" "$target" \
            -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
            -print_final_stats=1 "${extra[@]}" >>"$log" 2>&1 || code=$?
        # With -jobs, each job's output is in fuzz-<n>.log.
        if compgen -G 'fuzz-*.log' >/dev/null; then
            cat fuzz-*.log >>"$log"
            rm -f fuzz-*.log
        fi
        grep -E '^(stat::|Done [0-9]+ runs)|ERROR|panicked|SUMMARY|Test unit written' "$log" || true
        local numbers runs secs
        numbers="$(figures "$log")"
        read -r runs secs <<<"${numbers:-0 0}"
        if [ "$code" -ne 0 ] || grep -qE 'ERROR: libFuzzer|panicked at|Test unit written' "$log"; then
            echo "!! $target failed (exit $code): see fuzz/$log and fuzz/artifacts/$target/" >&2
            summary+=("$target: FAILED (exit $code) after $runs runs in ${secs}s")
            status=1
        elif [ -z "$numbers" ] || [ "$runs" -le 0 ]; then
            echo "!! $target executed no inputs: see fuzz/$log" >&2
            summary+=("$target: executed no inputs")
            status=1
        else
            summary+=("$target: $runs runs in ${secs}s, 0 crashes")
        fi
    done
    printf '==> summary\n'
    printf '%s\n' "${summary[@]}"
    return "$status"
}

case "${1:-}" in
    seed) seed ;;
    check) check ;;
    run)
        shift
        run "${1:-60}" "${@:2}"
        ;;
    *)
        sed -n '2,18p' "$0"
        exit 2
        ;;
esac
