#!/usr/bin/env bash
# Single copy by cross-memory attach against myrix's pipelined copies through the shm
# rings, in the same run: for each length, the median time of one process_vm_readv of
# that many bytes (the copy alone) and myrix's one-way ping-pong latency (the whole
# message: the sender's copy, the rendezvous, the pull through the rings, the receiver's
# copy). Medians of RUNS runs (default 5).
#
#   bash bench/cma.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
command -v gcc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc >/dev/null
cargo build --release -q -p myrix-cli
MYRIX=$PWD/target/release/myrix
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
gcc -O2 -o "$W/cma_copy" bench/cma_copy.c
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf '%10s %16s %18s %8s\n' length cma_copy_us myrix_one_way_us ratio
for len in 65536 262144 1048576 4194304; do
  it=$(( len > 1048576 ? 100 : 1000 ))
  : >"$W/c"; : >"$W/m"
  for _ in $(seq "$RUNS"); do
    "$W/cma_copy" "$len" "$it" | awk '{print $3}' >>"$W/c"
    # myrix runs a tenth of --iterations above 64 KiB.
    "$MYRIX" bench pingpong --transport shm --start "$len" --end "$len" \
      --iterations $((it * 10)) --warmup $((it)) --cpu 0,1 --format json |
      sed 's/.*"latency_us":\([0-9.e+-]*\).*/\1/' >>"$W/m"
  done
  c=$(median <"$W/c"); m=$(median <"$W/m")
  printf '%10s %16.2f %18.2f %8.2f\n' "$len" "$c" "$m" "$(echo "$c / $m" | bc -l)"
done
