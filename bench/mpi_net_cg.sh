#!/usr/bin/env bash
# Where an 8 B MPI ping-pong between two network namespaces spends its instructions:
# both ranks of bench/mpi/pingpong.c under `valgrind --tool=callgrind` (counts are
# repeatable whatever the machine's load), hydra launching them across a clean veth
# pair of this script's own (bench/lib/netns_pair.sh), MYRIX_MPI_NET=eth by default.
#   MYRIX=path/to/release/myrix OUT=dir [NET=eth|udp] [ITERS=2000] [LIB=dir] \
#     bash bench/mpi_net_cg.sh
# LIB: run the ranks against the libmpi_abi.so in that directory instead of MYRIX's
# (an A/B of two builds of the library with one program). Writes OUT/r0.cg and
# OUT/r1.cg and prints, per rank, calls and inclusive instructions per call
# (bench/rsm_net_cg.py) of MPI_Send and MPI_Recv, the channel's progress, the RSM
# put paths, the engine's frame handling and the system calls; the receive side's
# counts include its empty polls (how many: the calls of `poll_all`). Needs root.
set -uo pipefail # not -e: bench/lib/netns_pair.sh's down fails when nothing is up
cd "$(dirname "$0")/.."
: "${MYRIX:?set MYRIX to a release myrix binary}"
OUT=${OUT:-$(mktemp -d)}
NET=${NET:-eth}
ITERS=${ITERS:-2000}
mkdir -p "$OUT"
W=$(mktemp -d)
. bench/lib/netns_pair.sh
trap 'netns_pair_down; rm -rf "$W"' EXIT
netns_pair_up "$W" || { echo "mpi_net_cg.sh: no namespaces" >&2; exit 1; }
"$MYRIX" mpicc -O2 -o "$W/pp" bench/mpi/pingpong.c || exit 1
TOG="--toggle-collect=MPI_Send --toggle-collect=MPI_Recv"
# Each rank names its own output after its PMI rank (hydra sets PMI_RANK).
cat >"$W/cg" <<EOF
#!/bin/sh
${LIB:+export LD_LIBRARY_PATH=$LIB}
exec valgrind -q --tool=callgrind --callgrind-out-file=$OUT/r\$PMI_RANK.cg $TOG "\$@"
EOF
chmod +x "$W/cg"
MYRIX_MPI_NET=$NET LIMIT=280 netns_pair_launch myrix "$W/cg" "$W/pp" -s 8 -i "$ITERS" -w 0 -r 1
for r in 0 1; do
  echo "== rank $r ($ITERS round trips)"
  python3 bench/rsm_net_cg.py "$OUT/r$r.cg" 'MPI_Send' 'MPI_Recv' 'ChannelFabric>::poll_all' \
    'NetInner>::put_staged' 'NetInner>::publish' 'NetInner>::flush_deferred' \
    'ImportBackend>::put' 'ImportBackend>::put_deferred' 'ExportBackend>::poll' \
    'Protocol>::handle_frame' 'Endpoint>::send_with' 'Endpoint>::transmit' \
    'Rx>::poll_into' 'Tx>::pump' 'sendto' 'recvfrom' 'malloc' 'sched_yield' 'clock_gettime'
done
