#!/usr/bin/env bash
# RSM over the network beside the bare ping-pongs it is built on, between two clean
# network namespaces joined by a veth pair, interleaved (one run of each per round):
#   raw Ethernet: bench/eth_pingpong.c (AF_PACKET, EtherType 0x86DF, spin-polled)
#                 against `myrix bench rsm --transport eth`
#   UDP:          bench/udp_pingpong.c against `myrix bench rsm --transport udp`
# 8 B: the put-based ping-pong's one-way time (each side puts into the other's segment
# and polls a flag) against the bare one-way time, and a completed put (implicit
# barrier mode: the write is in remote memory) against the bare round trip.
# Also the bare raw-Ethernet ping-pong with two frames each way (`eth2`: the RSM
# ping's data and flag are two writes, so two datagrams, unless they leave together).
# Prints the medians of RUNS rounds (default 5), the ratios and the load average at
# each round. Needs root.
#
#   bash bench/rsm_net.sh            # RUNS=3 bash bench/rsm_net.sh for a quicker look
#   MYRIX_BASE=/path/to/old/myrix bash bench/rsm_net.sh
#                                    # also that binary's RSM figures, in the same rounds
#   NICE=-15 bash bench/rsm_net.sh   # every measured program at that niceness: on a
#                                    # machine shared with (niced) builds, the bare
#                                    # programs, which never yield, keep their cores
#   CHRT=10 bash bench/rsm_net.sh    # every measured program SCHED_FIFO at priority 10
#                                    # (chrt -f): on a loaded machine the only way found
#                                    # to time the bare programs (the kernel still leaves
#                                    # 5 % of each core to the rest, sched_rt_runtime_us)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
ITERS=${ITERS:-20000}
command -v gcc >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc >/dev/null

if [ -z "${MYRIX:-}" ]; then
  cargo build --release -q -p myrix-cli
  MYRIX=${CARGO_TARGET_DIR:-$PWD/target}/release/myrix
fi
BASE=${MYRIX_BASE:-}
N=(nice -n "${NICE:-0}")
if [ -n "${CHRT:-}" ]; then N=(chrt -f "$CHRT"); fi
W=$(mktemp -d)
A=rsmna$$ B=rsmnb$$ VA=rsmva$$ VB=rsmvb$$
. bench/lib/rsm_pair.sh
trap rsm_pair_cleanup EXIT
rsm_pair_up 10.81.0

gcc -O2 -o "$W/eth_pp" bench/eth_pingpong.c
gcc -O2 -o "$W/udp_pp" bench/udp_pingpong.c

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

bare_eth() {
  # The client's last frame stops the server; the timeout only guards against its loss.
  timeout 60 ip netns exec "$A" "${N[@]}" taskset -c 0 "$W/eth_pp" -s "$VA" &
  sleep 0.2
  ip netns exec "$B" "${N[@]}" taskset -c 1 "$W/eth_pp" -c "$VB" "$maca" 8 "$ITERS" | awk '{print $2}'
  wait
}
bare_eth2() {
  timeout 60 ip netns exec "$A" "${N[@]}" taskset -c 0 "$W/eth_pp" -s "$VA" 2 &
  sleep 0.2
  ip netns exec "$B" "${N[@]}" taskset -c 1 "$W/eth_pp" -c "$VB" "$maca" 8 "$ITERS" 2 | awk '{print $2}'
  wait
}
bare_udp() {
  timeout 60 ip netns exec "$A" "${N[@]}" taskset -c 0 "$W/udp_pp" -s 10.81.0.1 7302 &
  sleep 0.2
  ip netns exec "$B" "${N[@]}" taskset -c 1 "$W/udp_pp" -c 10.81.0.1 7302 8 "$ITERS" | awk '{print $2}'
  wait
}
rsm() { # transport [binary] -> "put_us pingpong_us"
  local out=$W/srv.out bin=${2:-$MYRIX}
  : >"$out"
  MYRIX_RSM_NODES=$W/$1.nodes MYRIX_RSM_NODE=1 ip netns exec "$A" "${N[@]}" "$bin" bench rsm \
    --server --transport "$1" --cpu 0,1 >"$out" &
  for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.1; done
  MYRIX_RSM_NODES=$W/$1.nodes MYRIX_RSM_NODE=2 ip netns exec "$B" "${N[@]}" "$bin" bench rsm \
    --client "$(head -1 "$out")" --transport "$1" --start 8 --end 8 \
    --iterations "$ITERS" --warmup 2000 --cpu 0,1 --format json >"$W/rsm.json"
  wait
  local put pp
  put=$(sed 's/.*"put_us":\([0-9.e+-]*\).*/\1/' "$W/rsm.json")
  pp=$(sed 's/.*"pingpong_us":\([0-9.e+-]*\).*/\1/' "$W/rsm.json")
  echo "$put $pp"
}

for t in eth udp base_eth base_udp; do
  : >"$W/$t.bare" ; : >"$W/$t.put" ; : >"$W/$t.pp"
done
: >"$W/eth2.bare"
loads=""
for r in $(seq "$RUNS"); do
  loads="$loads $(cut -d' ' -f1 /proc/loadavg)"
  bare_eth >>"$W/eth.bare"
  # The two binaries take turns at going first, so neither always runs right after
  # the bare program (or always second).
  for who in $( ((r % 2)) && echo "new base" || echo "base new"); do
    if [ "$who" = new ]; then
      rsm eth | { read -r put pp; echo "$put" >>"$W/eth.put"; echo "$pp" >>"$W/eth.pp"; }
    elif [ -n "$BASE" ]; then
      rsm eth "$BASE" | { read -r put pp; echo "$put" >>"$W/base_eth.put"; echo "$pp" >>"$W/base_eth.pp"; }
    fi
  done
  bare_eth2 >>"$W/eth2.bare"
  bare_udp >>"$W/udp.bare"
  for who in $( ((r % 2)) && echo "new base" || echo "base new"); do
    if [ "$who" = new ]; then
      rsm udp | { read -r put pp; echo "$put" >>"$W/udp.put"; echo "$pp" >>"$W/udp.pp"; }
    elif [ -n "$BASE" ]; then
      rsm udp "$BASE" | { read -r put pp; echo "$put" >>"$W/base_udp.put"; echo "$pp" >>"$W/base_udp.pp"; }
    fi
  done
  # Each round's figures (the medians below hide the spread): bare, put, ping-pong.
  {
    printf '# round %s of %s: eth bare %s put %s pp %s' "$r" "$RUNS" \
      "$(tail -1 "$W/eth.bare")" "$(tail -1 "$W/eth.put")" "$(tail -1 "$W/eth.pp")"
    if [ -n "$BASE" ]; then
      printf ' | base put %s pp %s' "$(tail -1 "$W/base_eth.put")" "$(tail -1 "$W/base_eth.pp")"
    fi
    echo
  } >&2
done
echo "# 8 B between two namespaces (clean veth), medians of $RUNS interleaved rounds, us, ${N[*]}; load at each round:$loads, at the end $(cut -d' ' -f1 /proc/loadavg)"
report() { # name bare_file put_file pp_file
  b=$(median <"$2") p=$(median <"$3") q=$(median <"$4")
  awk -v t="$1" -v b="$b" -v p="$p" -v q="$q" 'BEGIN {
    printf "%-8s bare one-way %.3f  RSM put ping-pong one-way %.3f (%.2fx)  RSM put completed %.3f (%.2fx the bare round trip)\n",
      t, b, q, q / b, p, p / (2 * b) }'
}
report eth "$W/eth.bare" "$W/eth.put" "$W/eth.pp"
report udp "$W/udp.bare" "$W/udp.put" "$W/udp.pp"
if [ -n "$BASE" ]; then
  report base-eth "$W/eth.bare" "$W/base_eth.put" "$W/base_eth.pp"
  report base-udp "$W/udp.bare" "$W/base_udp.put" "$W/base_udp.pp"
fi
awk -v b="$(median <"$W/eth2.bare")" -v q="$(median <"$W/eth.pp")" 'BEGIN {
  printf "eth2     bare one-way, two frames each way %.3f; RSM ping-pong / that %.2fx\n", b, q / b }'
