#!/bin/bash
# usage (root): bash bench/omx_wire.sh [ROUNDS] [MTU]
# One-way MX ping-pong latency of the three raw-Ethernet wire layouts side by side:
# myrix's own (`--transport eth`), Open-MX's default mode (`--transport omx`) and its
# MX-compatible mode (`--transport omx --omx-wire mx`), between two network namespaces
# of this script's own (`omw<pid>a`/`b`, a veth pair, no impairment, MTU 9000 by
# default: the MX-compatible mode's frames are 4144 bytes), ROUNDS rounds interleaved
# (default 5). Prints, per layout and length, the median one-way latency in µs and every
# run's figure, then the load average. MYRIX names the binary (default: the release
# build in CARGO_TARGET_DIR or target/). The namespaces are deleted on exit.
set -euo pipefail
ROUNDS=${1:-5}; MTU=${2:-9000}
MYRIX=${MYRIX:-${CARGO_TARGET_DIR:-target}/release/myrix}
A=omw$$a B=omw$$b VA=omw$$va VB=omw$$vb
trap 'ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true' EXIT
ip netns add $A; ip netns add $B
ip link add $VA type veth peer name $VB
ip link set $VA netns $A; ip link set $VB netns $B
ip -n $A link set $VA mtu "$MTU" up; ip -n $B link set $VB mtu "$MTU" up
ip -n $A link set lo up; ip -n $B link set lo up
LENS="--start 8 --end 32768 --multiplier 8 --iterations 2000 --warmup 200"
declare -A res
run() { # name transport extra...
  local name=$1 t=$2; shift 2
  local out; out=$(mktemp)
  ip netns exec $A "$MYRIX" bench pingpong --server --transport "$t" --interface $VA "$@" \
    --cpu 0,1 > "$out" &
  local srv=$!
  for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
  local rows
  rows=$(ip netns exec $B "$MYRIX" bench pingpong --client "$(head -1 "$out")" \
    --transport "$t" --interface $VB "$@" --cpu 0,1 $LENS --format json)
  wait $srv; rm -f "$out"
  for kv in $(echo "$rows" | python3 -c 'import json,sys
for r in json.load(sys.stdin): print("%d=%.2f" % (r["length"], r["latency_us"]))'); do
    res[$name/${kv%=*}]="${res[$name/${kv%=*}]:-} ${kv#*=}"
  done
}
for _ in $(seq "$ROUNDS"); do
  run eth eth
  run omx omx
  run omx-mx omx --omx-wire mx
done
for name in eth omx omx-mx; do
  for len in 8 64 512 4096 32768; do
    v=${res[$name/$len]}
    echo "$name $len median $(echo $v | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') all:$v"
  done
done
echo "load: $(uptime | sed 's/.*load average: //')"
