#!/usr/bin/env bash
# One `myrix bench rsm` run at 8 B between two clean namespaces joined by a veth pair
# (named by this script's pid, deleted on exit), each side optionally under a wrapper,
# for counting what a run costs rather than timing it:
#   SWRAP / CWRAP  command prefixes for the server / the client, e.g.
#                  "perf stat -x, -e context-switches,syscalls:sys_enter_sendto -o srv.perf"
#                  "valgrind --tool=callgrind --toggle-collect=*ImportBackend>::put_scalars"
#   T=eth|udp (default eth)  ITERS (default 20000)  MYRIX (default: build the release binary)
#   SIZE (bytes per message, default 8)  WARMUP (default 500)
# Prints the client's JSON row. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${T:-eth}
ITERS=${ITERS:-20000}
SIZE=${SIZE:-8}
WARMUP=${WARMUP:-500}
SWRAP=${SWRAP:-}
CWRAP=${CWRAP:-}
if [ -z "${MYRIX:-}" ]; then
  cargo build --release -q -p myrix-cli
  MYRIX=${CARGO_TARGET_DIR:-$PWD/target}/release/myrix
fi
W=$(mktemp -d)
A=rs1a$$ B=rs1b$$ VA=rs1va$$ VB=rs1vb$$
. bench/lib/rsm_pair.sh
trap rsm_pair_cleanup EXIT
rsm_pair_up 10.82.0
out=$W/srv.out
: >"$out"
# shellcheck disable=SC2086 # the wrappers are word lists
MYRIX_RSM_NODES=$W/$T.nodes MYRIX_RSM_NODE=1 ip netns exec "$A" $SWRAP "$MYRIX" bench rsm \
  --server --transport "$T" --cpu 0,1 >"$out" &
# The server under valgrind takes a while to print its address.
for _ in $(seq 600); do [ -s "$out" ] && break; sleep 0.1; done
# shellcheck disable=SC2086
MYRIX_RSM_NODES=$W/$T.nodes MYRIX_RSM_NODE=2 ip netns exec "$B" $CWRAP "$MYRIX" bench rsm \
  --client "$(head -1 "$out")" --transport "$T" --start "$SIZE" --end "$SIZE" --iterations "$ITERS" \
  --warmup "$WARMUP" --cpu 0,1 --format json
wait
