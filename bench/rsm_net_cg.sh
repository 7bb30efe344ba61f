#!/usr/bin/env bash
# Instructions per call of the RSM library's entry points over the network, both sides
# under `valgrind --tool=callgrind` (repeatable whatever the machine's load), one
# `myrix bench rsm` run at 8 B between fresh namespaces (bench/rsm_net_one.sh):
#   MYRIX=path/to/myrix OUT=dir bash bench/rsm_net_cg.sh
# Writes OUT/cli.cg and OUT/srv.cg and prints, per side, calls and inclusive
# instructions per call (bench/rsm_net_cg.py) of `put`, `put_with_flag`, the
# exporter's poll, the protocol's frame handling (the answer built in it included) and
# its polls for frames to send. T=eth|udp, ITERS (default 2000).
# Needs root and valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
# Everything is collected, in every thread (no --toggle-collect: toggles flip, so a
# toggled function called inside another cancels it, and the exporter's agent takes
# some of the frames, which ones varying between runs): inclusive costs per call are
# then whole, whichever thread made the call.
VG="valgrind -q --tool=callgrind"
SWRAP="$VG --callgrind-out-file=$OUT/srv.cg" \
  CWRAP="$VG --callgrind-out-file=$OUT/cli.cg" \
  ITERS=${ITERS:-2000} bash bench/rsm_net_one.sh >"$OUT/row.json"
for side in cli srv; do
  echo "== $side"
  python3 bench/rsm_net_cg.py "$OUT/$side.cg" 'ImportBackend>::put' 'ExportBackend>::poll' \
    'RsmProtocol as myrix_mx::protocol::Protocol>::handle_frame' \
    'RsmProtocol as myrix_mx::protocol::Protocol>::poll_transmit' 'Endpoint>::send_answer' \
    'Endpoint>::transmit' 'Endpoint>::send_with' 'NetImport>::queue' 'NetImport>::check_rails' \
    'Engine<' 'sendto' 'recvfrom'
done
