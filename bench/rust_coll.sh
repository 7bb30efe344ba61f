#!/usr/bin/env bash
# The Rust API's collectives (crates/mpi/examples/coll_bench.rs, myrix_mpi::Comm)
# beside the C library's, MPICH's and Open MPI's (bench/mpi/coll.c built with each
# one's mpicc), interleaved: ROUNDS rounds (default 5), each running the four in
# turn (the order rotates every round) on NP ranks of this host (default 2). Both
# programs time alike: per size, REPS repetitions of ITERS calls, each the slowest
# rank's mean per call, the median printed. Prints every round's lines, then per
# test and size the median over the rounds of each, and rust / C library, rust /
# the faster of MPICH and Open MPI.
#
#   bash bench/rust_coll.sh                     # allreduce and bcast, 8 B, 2 ranks
#   TESTS=allreduce,bcast,reduce,allgather,barrier SIZES=8,1024 bash bench/rust_coll.sh
#   DUP=1 bash bench/rust_coll.sh               # both on a dup of the world
# Build first (release): cargo build --release -p myrix-cli -p myrix-mpiapi
#   -p myrix-mpi --example coll_bench. MYRIX, RUST name other binaries.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-$here/../target}
MYRIX=${MYRIX:-$target/release/myrix}
RUST=${RUST:-$target/release/examples/coll_bench}
ROUNDS=${ROUNDS:-5}
NP=${NP:-2}
TESTS=${TESTS:-allreduce,bcast}
SIZES=${SIZES:-8}
ITERS=${ITERS:-20000}
REPS=${REPS:-5}
DUP=${DUP:-0}
LIMIT=${LIMIT:-240}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for f in "$MYRIX" "$RUST"; do
  [ -x "$f" ] || { echo "rust_coll: $f is not built (see the header)" >&2; exit 2; }
done
"$MYRIX" mpicc -O2 -o "$W/coll_myrix" "$here/mpi/coll.c" || exit 2
mpicc.mpich -O2 -o "$W/coll_mpich" "$here/mpi/coll.c" || exit 2
mpicc.openmpi -O2 -o "$W/coll_ompi" "$here/mpi/coll.c" || exit 2
d=()
[ "$DUP" = 1 ] && d=(-d)
args=(-t "$TESTS" -s "$SIZES" -i "$ITERS" -r "$REPS" "${d[@]}")

run() { # name
  case $1 in
  rust) timeout "$LIMIT" "$MYRIX" mpiexec -n "$NP" "$RUST" "${args[@]}" ;;
  clib) timeout "$LIMIT" "$MYRIX" mpiexec -n "$NP" "$W/coll_myrix" "${args[@]}" ;;
  mpich) timeout "$LIMIT" mpiexec.hydra -n "$NP" "$W/coll_mpich" "${args[@]}" ;;
  ompi) timeout "$LIMIT" mpirun.openmpi --oversubscribe -n "$NP" --mca btl self,vader \
    "$W/coll_ompi" "${args[@]}" 2>/dev/null ;;
  esac | grep -v '^#' | sed "s/^/$1 /"
}

echo "# $(uptime)"
names=(rust clib mpich ompi)
for r in $(seq "$ROUNDS"); do
  for k in 0 1 2 3; do
    name=${names[$(((k + r) % 4))]}
    run "$name" | sed "s/^/round $r /" | tee -a "$W/all"
  done
done
echo "# $(uptime)"
# round R NAME TEST BYTES US ITERS -> medians per (test, bytes, name), ratios.
awk '
  { key = $4 " " $5; v[key, $3] = v[key, $3] " " $6; keys[key] = 1 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    if (n == 0) return -1
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "%-10s %8s %9s %9s %9s %9s %11s %12s\n", "test", "bytes", "rust", "clib", "mpich", "ompi", "rust/clib", "rust/peer"
    for (k in keys) {
      split(k, t, " ")
      r = median(v[k, "rust"]); c = median(v[k, "clib"]); m = median(v[k, "mpich"]); o = median(v[k, "ompi"])
      p = (m > 0 && (o < 0 || m < o)) ? m : o
      printf "%-10s %8s %9.3f %9.3f %9.3f %9.3f %11.2f %12.2f\n", t[1], t[2], r, c, m, o, (c > 0 ? r / c : 0), (p > 0 ? r / p : 0)
    }
  }' "$W/all"
