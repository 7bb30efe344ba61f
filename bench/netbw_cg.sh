#!/usr/bin/env bash
# Instruction counts of the MPI 1 MiB ping-pong across two network namespaces (issue
# 23, "netbw"): both myrix ranks of bench/mpi/pingpong.c under callgrind, over the
# controller NET (udp or eth), for comparing two libraries by what they execute rather
# than by a timing on a shared machine. Builds nothing: LIB (default
# $CARGO_TARGET_DIR/release, else target/release) holds the libmpi_abi.so to count.
# Prints each rank's total and its most expensive functions (inclusive), and leaves
# the callgrind files in OUT (default: a temporary directory, deleted) for
# callgrind_annotate. Needs root (bench/lib/netns_pair.sh); the pair is named by this
# script's pid and deleted on exit.
#   bash bench/netbw_cg.sh                      # NET=udp SIZE=1048576 ITERS=20
#   TYPE=vector bash bench/netbw_cg.sh          # pingpong.c's -t (contig, vector, column,
#                                               # indexed: non-contiguous data)
#   LIB=/tmp/base OUT=/tmp/cg-base bash bench/netbw_cg.sh
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || {
  echo "netbw_cg.sh: needs root (network namespaces)" >&2
  exit 2
}
NET=${NET:-udp}
SIZE=${SIZE:-1048576}
ITERS=${ITERS:-20}
TYPE=${TYPE:-contig}
LIMIT=${LIMIT:-240}
LIB=${LIB:-${CARGO_TARGET_DIR:-$PWD/target}/release}
[ -f "$LIB/libmpi_abi.so" ] || {
  echo "netbw_cg.sh: no $LIB/libmpi_abi.so" >&2
  exit 2
}
W=$(mktemp -d)
OUT=${OUT:-$W/cg}
mkdir -p "$OUT"
. bench/lib/netns_pair.sh
trap 'netns_pair_down; rm -rf "$W"' EXIT
cc -O2 -o "$W/pingpong" bench/mpi/pingpong.c -Icrates/mpiapi/include -L"$LIB" \
  -Wl,-rpath,"$LIB" -lmpi_abi || exit 1
netns_pair_up "$W" || exit 1
# Ranks under valgrind are slow: the engine's timers (resends after 5 ms and more)
# may fire and add their own work; a run's count is repeatable to about a percent.
MYRIX_MPI_NET=$NET netns_pair_launch myrix valgrind --tool=callgrind \
  --callgrind-out-file="$OUT/cg.%p" "$W/pingpong" -t "$TYPE" -s "$SIZE" -i "$ITERS" -w 1 -r 1 |
  grep -v '^==' || exit 1
for f in "$OUT"/cg.*; do
  echo "## $(basename "$f"): $(grep -m1 '^summary\|^totals' "$f")"
  callgrind_annotate --inclusive=yes "$f" 2>/dev/null | sed -n '/^Ir/,$p' | sed -n 3,30p
done
