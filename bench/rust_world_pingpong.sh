#!/bin/bash
# The Rust API's 8-byte ping-pong (crates/mpi/examples/ring.rs, myrix_mpi::World)
# beside MPICH's and Open MPI's C ping-pong (bench/mpi/pingpong.c), interleaved:
# ROUNDS rounds (default 5) of TRIPS timed round trips (default 20000) each, two
# ranks on this host. Prints one line per program and round; docs/mpi.md "Rust API"
# takes the medians. Build first: cargo build --release -p myrix-mpi --example ring
# (RING names another binary). Needs mpicc.mpich, mpiexec.hydra, mpicc.openmpi.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-$here/../target}
RING=${RING:-$target/release/examples/ring}
ROUNDS=${ROUNDS:-5}
TRIPS=${TRIPS:-20000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc.mpich -O2 -o "$tmp/pingpong_mpich" "$here/mpi/pingpong.c"
mpicc.openmpi -O2 -o "$tmp/pingpong_ompi" "$here/mpi/pingpong.c"
uptime
for i in $(seq "$ROUNDS"); do
  echo "round $i"
  mpiexec.hydra -n 2 "$RING" "$TRIPS" | grep pingpong | sed 's/^/rust-world: /'
  mpiexec.hydra -n 2 "$tmp/pingpong_mpich" -s 8 -i "$TRIPS" -w 100 -r 1 | grep -v '^#' | sed 's/^/mpich: /'
  mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$tmp/pingpong_ompi" -s 8 -i "$TRIPS" -w 100 -r 1 2>/dev/null |
    grep -v '^#' | sed 's/^/openmpi: /'
done
uptime
