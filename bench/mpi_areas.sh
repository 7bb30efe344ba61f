#!/usr/bin/env bash
# The channel segments per rank after an all-to-all against job size (issue 23: one
# area per sender and host): bench/mpi/areas.c linked against this build's
# libmpi_abi.so (and, with BASE=<dir>, against the one in <dir>: an earlier build
# copied aside, run in the same rounds), under myrix mpiexec with a registry directory
# of its own, at RANKS ranks, ROUNDS interleaved rounds. Prints per build and job size
# the median over ranks and rounds of: segments mapped (inboxes, areas, ack segments,
# the collectives' segment), MiB of them mapped, VmRSS KiB.
#
#   bash bench/mpi_areas.sh
#   RANKS="2 4 8 16" ROUNDS=3 BASE=/tmp/old bash bench/mpi_areas.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RANKS=${RANKS:-2 4 8 16}
ROUNDS=${ROUNDS:-3}
L=${CARGO_TARGET_DIR:-$PWD/target}/release
[ -n "${NOBUILD:-}" ] || cargo build --release -q -p myrix-cli -p myrix-mpiapi || exit 1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
builds=(this)
cc -O2 -Icrates/mpiapi/include bench/mpi/areas.c -o "$W/areas_this" -L"$L" -Wl,-rpath,"$L" -lmpi_abi || exit 1
if [ -n "${BASE:-}" ]; then
  cc -O2 -Icrates/mpiapi/include bench/mpi/areas.c -o "$W/areas_base" -L"$BASE" -Wl,-rpath,"$BASE" -lmpi_abi || exit 1
  builds+=(base)
fi
for r in $(seq "$ROUNDS"); do
  for n in $RANKS; do
    for b in "${builds[@]}"; do
      mkdir -p "$W/reg"
      MYRIX_RSM_DIR="$W/reg" timeout 120 "$L/myrix" mpiexec -n "$n" "$W/areas_$b" |
        awk -v b=$b -v n=$n '$1 == "areas" {print b, n, $3 / 2, $4 / 1048576, $5}' >>"$W/res"
      rm -rf "$W/reg"
    done
  done
done
med() { awk -v b="$1" -v n="$2" -v c="$3" '$1 == b && $2 == n {print $c}' "$W/res" | sort -g |
  awk '{v[NR] = $1} END { if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)] }'; }
echo "# bench/mpi_areas.sh: medians over ranks and $ROUNDS rounds; load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf "%-5s %5s %9s %11s %9s\n" build ranks segments mapped_MiB rss_KiB
for n in $RANKS; do
  for b in "${builds[@]}"; do
    printf "%-5s %5s %9s %11.2f %9s\n" $b $n "$(med $b $n 3)" "$(med $b $n 4)" "$(med $b $n 5)"
  done
done
