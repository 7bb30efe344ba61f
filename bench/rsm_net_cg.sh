#!/usr/bin/env bash
# Instructions per call of the RSM library's entry points over the network, both sides
# under `valgrind --tool=callgrind` (repeatable whatever the machine's load), one
# `myrix bench rsm` run at 8 B between fresh namespaces (bench/rsm_net_one.sh):
#   MYRIX=path/to/myrix OUT=dir bash bench/rsm_net_cg.sh
# Writes OUT/cli.cg and OUT/srv.cg and prints, per side, calls and inclusive
# instructions per call (bench/rsm_net_cg.py) of `put`, `put_with_flag`, the
# exporter's poll and the protocol's frame handling. T=eth|udp, ITERS (default 2000).
# Needs root and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
TOG="--toggle-collect=*ImportBackend>::put --toggle-collect=*ImportBackend>::put_scalars"
TOG="$TOG --toggle-collect=*ImportBackend>::put_with_flag --toggle-collect=*ExportBackend>::poll"
SWRAP="valgrind -q --tool=callgrind --callgrind-out-file=$OUT/srv.cg $TOG" \
  CWRAP="valgrind -q --tool=callgrind --callgrind-out-file=$OUT/cli.cg $TOG" \
  ITERS=${ITERS:-2000} bash bench/rsm_net_one.sh >"$OUT/row.json"
for side in cli srv; do
  echo "== $side"
  python3 bench/rsm_net_cg.py "$OUT/$side.cg" 'ImportBackend>::put' 'ExportBackend>::poll' \
    'RsmProtocol as myrix_mx::protocol::Protocol>::handle_frame' \
    'Endpoint>::transmit' 'Endpoint>::send_with' 'NetImport>::queue' 'NetImport>::check_rails' \
    'Engine<' 'sendto' 'recvfrom'
done
