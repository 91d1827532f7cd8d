# Everyday commands; each is a thin alias so CI and humans run the same thing.

# Run the test suite (no Python needed).
test:
    cargo test --workspace

# Live suites: creates .venv (numpy, moto, s3fs from PyPI), starts the local S3 server, runs the ignored tests.
interop:
    scripts/ensure-unzip.sh
    scripts/s3-server.sh start
    NPY_PYTHON="$(scripts/setup-venv.sh)" bash -c 'eval "$(scripts/s3-server.sh env)"; cargo test --workspace -- --ignored'; status=$?; scripts/s3-server.sh stop; exit $status

# Format check and clippy with warnings as errors.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets --all-features -- -D warnings

# The main job: preallocate, fill from worker processes, verify, random reads.
tour *ARGS:
    cargo run --release --example tour -- {{ARGS}}

# Criterion micro-benchmarks (header, dtype, views, byte swap, object-array pickles, open, reads, sums).
bench *ARGS:
    cargo bench -p npy-core -p npy-mmap {{ARGS}}

# Side by side with numpy, ndarray-npy and npyz: one table (docs/BENCHMARKS.md).
# Sizes are options: `just compare --help`. Needs ~4.5 GB of disk by default.
compare *ARGS:
    NPY_PYTHON="${NPY_PYTHON:-$(scripts/setup-venv.sh)}" cargo run --release -p npy-bench --features contenders --bin npy-compare -- {{ARGS}}

# The Python package: install it into .venv (debug build) and run its tests (starts the local S3 server).
python *ARGS:
    cargo build --example lock_probe
    CARGO_TARGET_DIR="$PWD/target" MATURIN_PEP517_ARGS="--profile dev" "$(scripts/setup-venv.sh)" -m pip install --quiet --force-reinstall --no-deps ./crates/npy-python
    scripts/s3-server.sh start
    NPY_LOCK_PROBE="$PWD/target/debug/examples/lock_probe" bash -c 'eval "$(scripts/s3-server.sh env)"; .venv/bin/python -m pytest crates/npy-python/tests -q {{ARGS}}'; status=$?; scripts/s3-server.sh stop; exit $status

# npy_mmap against numpy, s3fs and Dask (release wheel; docs/BENCHMARKS.md, "Python"). Needs ~10 GB of disk.
bench-python *ARGS:
    cargo build --release -p npy-bench --bin npy-gather
    CARGO_TARGET_DIR="$PWD/target" "$(scripts/setup-venv.sh)" -m pip install --quiet --force-reinstall --no-deps ./crates/npy-python
    scripts/s3-server.sh start
    bash -c 'eval "$(scripts/s3-server.sh env)"; .venv/bin/python benches/python/bench.py "$@"' _ {{ARGS}}; status=$?; scripts/s3-server.sh stop; exit $status

# Everything CI runs.
ci:
    .ci/run

# Fuzz every target (cargo-fuzz on stable via RUSTC_BOOTSTRAP; see docs/SECURITY.md).
# Default 30 minutes each; `just fuzz 60 header` fuzzes one target for a minute.
fuzz SECONDS="1800" *TARGETS:
    fuzz/run.sh run {{SECONDS}} {{TARGETS}}

# Copy tests/fixtures into the fuzz corpora (fuzz/corpus/<target>/, not committed).
fuzz-seed:
    fuzz/run.sh seed

# `npy render` vs `npy stats` on a 4 GiB float32 array (docs/BENCHMARKS.md, "Pictures").
bench-render *ARGS:
    scripts/bench-render.sh {{ARGS}}

# npy-remote against numpy + s3fs on the local S3 server, and behind a throttled store (docs/BENCHMARKS.md).
compare-remote *ARGS:
    scripts/s3-server.sh start
    NPY_PYTHON="${NPY_PYTHON:-$(scripts/setup-venv.sh)}" bash -c 'eval "$(scripts/s3-server.sh env)"; cargo run --release -p npy-bench --features remote --bin npy-remote-compare -- "$@"' _ {{ARGS}}; status=$?; scripts/s3-server.sh stop; exit $status
