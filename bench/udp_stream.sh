#!/usr/bin/env bash
# MX's stream of 1 MiB messages over UDP on loopback beside a bare UDP blast of the
# same bytes (bench/udp_stream.c), interleaved, RUNS times each (default 5). Prints each
# run, the medians, their ratio, and MX's retransmitted frames as a share of its frames.
#
#   bash bench/udp_stream.sh [MYRIX_BINARY]      # RUNS=3 for a quicker look
#   HOGS=2 bash bench/udp_stream.sh ...          # with 2 busy loops competing for the CPUs
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
LEN=${LEN:-1048576}
ITERS=${ITERS:-20}
WINDOW=${WINDOW:-64}
MYRIX=${1:-}
if [ -z "$MYRIX" ]; then
  cargo build --release -q -p myrix-cli
  MYRIX=$PWD/target/release/myrix
fi
W=$(mktemp -d)
hogs=()
cleanup() {
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT
for _ in $(seq "${HOGS:-0}"); do
  sh -c 'while :; do :; done' &
  hogs+=($!)
done
gcc -O2 -o "$W/udp_stream" bench/udp_stream.c
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
port=47100
for i in $(seq "$RUNS"); do
  port=$((port + 1))
  "$W/udp_stream" -r 127.0.0.1 $port > "$W/bare.$i" &
  sleep 0.2
  "$W/udp_stream" -s 127.0.0.1 $port "$LEN" $((ITERS * WINDOW))
  wait
  bare=$(awk '{print $3}' "$W/bare.$i")
  echo "$bare" >> "$W/bare"
  "$MYRIX" bench stream --transport udp --start "$LEN" --end "$LEN" --iterations "$ITERS" \
    --window "$WINDOW" --warmup 2 --stats > "$W/mx.$i" 2> "$W/stats.$i"
  mx=$(awk '$1 == '"$LEN"' {print $3}' "$W/mx.$i")
  echo "$mx" >> "$W/mx"
  # Frames the client (the sender of the data) retransmitted, as a share of its frames.
  re=$(sed -n 's/.*stats client: frames_in=[0-9]* frames_out=\([0-9]*\) retransmits=\([0-9]*\).*/\2 \1/p' "$W/stats.$i" |
    awk '{printf "%.3f", $2 ? 100 * $1 / $2 : 0}')
  # Frames the receiver got twice (resent or re-pulled needlessly), as a share of its frames.
  dup=$(sed -n 's/.*stats server: frames_in=\([0-9]*\).*duplicates=\([0-9]*\).*pull_rerequests=\([0-9]*\).*/\2 \1 \3/p' "$W/stats.$i" |
    awk '{printf "%.3f %% (%d pull re-requests)", $2 ? 100 * $1 / $2 : 0, $3}')
  echo "run $i: bare UDP $bare MB/s (lost $(awk '{print $4}' "$W/bare.$i") %), MX $mx MB/s, client retransmits $re %, server duplicates $dup"
done
b=$(median < "$W/bare"); m=$(median < "$W/mx")
echo "median: bare UDP $b MB/s, MX $m MB/s, MX/bare $(awk -v m="$m" -v b="$b" 'BEGIN {printf "%.2f", m / b}')"
