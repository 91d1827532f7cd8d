#!/usr/bin/env bash
# Fuzzing driver, used by `just fuzz`, `just fuzz-seed` and CI's smoke run.
#
#   fuzz/run.sh seed                      copy tests/fixtures into fuzz/corpus/<target>/
#   fuzz/run.sh run SECONDS [TARGET...]   seed, then fuzz each target for SECONDS
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

TARGETS=(header read_npy mmap_open npz pickle)
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
            pickle)
                # numpy's object arrays, whole (read_npy) and as bare pickles.
                local f
                while IFS= read -r f; do
                    cp "$f" "$dir/"
                    tail -c +129 "$f" >"$dir/pickle-$(basename "$f")"
                done < <(find "$FIXTURES/object" -name '*.npy')
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

run() {
    local seconds="$1"
    shift
    local targets=("$@")
    [ ${#targets[@]} -eq 0 ] && targets=("${TARGETS[@]}")
    check
    seed
    local jobs="${NPY_FUZZ_JOBS:-1}"
    local target status=0
    mkdir -p logs
    for target in "${targets[@]}"; do
        echo "==> fuzzing $target for ${seconds}s ($(toolchain), sanitizer $(sanitizer "$target"), $jobs job(s))"
        local extra=()
        # Headers are at most 10000 characters by default: longer inputs only
        # cost time (seeds beyond it are truncated).
        case "$target" in
            pickle) extra+=("-dict=pickle.dict" "-max_len=16384") ;;
            npz) ;;
            *) extra+=("-dict=npy.dict" "-max_len=16384") ;;
        esac
        [ "$jobs" -gt 1 ] && extra+=("-jobs=$jobs" "-workers=$jobs")
        # -timeout: one input taking a second is a hang for these parsers.
        # -rss_limit_mb: a reader that trusts a length field shows up here.
        if ! cargo_fuzz run --release --sanitizer "$(sanitizer "$target")" "$target" \
            -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
            -print_final_stats=1 "${extra[@]}" \
            2>&1 | tee "logs/$target.log" | grep -E '^(stat::|Done [0-9]+ runs|#[0-9]+.*DONE)|ERROR|panicked|SUMMARY|Test unit written'; then
            :
        fi
        if grep -qE 'ERROR: libFuzzer|panicked at|Test unit written' "logs/$target.log"; then
            echo "!! $target found a crash: see fuzz/logs/$target.log and fuzz/artifacts/$target/"
            status=1
        fi
    done
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
