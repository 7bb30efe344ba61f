#!/usr/bin/env bash
# The Rust API's allreduce against the C library's on the same inputs, bit for bit:
# crates/mpi/examples/reduce_hash.rs and bench/mpi/reduce_hash.c (built with
# `myrix mpicc`) print hashes of the same allreduces' results; run at NPS ranks
# (default "1 2 3 4"), through the shared segment and with MYRIX_MPI_COLL=p2p, and
# compared. Exits 1 on a difference. Build first: cargo build -p myrix-cli
# -p myrix-mpiapi -p myrix-mpi --example reduce_hash (PROFILE=release for those).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-$here/../target}/${PROFILE:-debug}
MYRIX=${MYRIX:-$target/myrix}
NPS=${NPS:-1 2 3 4}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$MYRIX" mpicc -O2 -o "$W/c" "$here/mpi/reduce_hash.c" || exit 2
bad=0
for coll in auto p2p; do
  for n in $NPS; do
    MYRIX_MPI_COLL=$coll timeout 120 "$MYRIX" mpiexec -n "$n" "$W/c" >"$W/c.out" || bad=1
    MYRIX_MPI_COLL=$coll timeout 120 "$MYRIX" mpiexec -n "$n" "$target/examples/reduce_hash" >"$W/r.out" || bad=1
    if [ -s "$W/c.out" ] && cmp -s "$W/c.out" "$W/r.out"; then
      echo "same: $n ranks, MYRIX_MPI_COLL=$coll, $(wc -l <"$W/c.out") allreduces"
    else
      echo "DIFFERENT: $n ranks, MYRIX_MPI_COLL=$coll"
      diff "$W/c.out" "$W/r.out" | head
      bad=1
    fi
  done
done
exit $bad
