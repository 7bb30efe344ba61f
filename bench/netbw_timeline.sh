#!/usr/bin/env bash
# Where a large MPI message's time goes across two network namespaces (issue 23,
# "netbw"): runs the 1 MiB ping-pong of myrix (bench/mpi/pingpong.c, `-s SIZE -i 50
# -w 5 -r 3`) under each setting of CONFIGS in interleaved rounds, beside Open MPI TCP,
# and per run counts what crossed the veth and each namespace's UDP layer:
#   one-way/us   the ping-pong's median one-way time
#   pkts/msg     veth packets (both ways; an offload batch counts once) per message
#   dgrams/msg   UDP datagrams received (both namespaces; after GRO: a coalesced run
#                counts once) per message
#   rcvbuf-err   datagrams the kernel dropped for a full socket buffer (whole run)
# With STRACE=1, one more run per setting under `strace -f -c` prints each rank's
# system calls per message (slow under strace: its time is not the figure).
# A setting is `default` or space-separated VAR=value pairs for the myrix ranks; the
# settings are separated by `;`. Needs root (bench/lib/netns_pair.sh); builds nothing:
# it runs the libmpi_abi.so in LIB (as bench/netbw.sh).
#   CONFIGS='default;MYRIX_MPI_NET_ACK_IDLE_US=1' bash bench/netbw_timeline.sh
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || {
  echo "netbw_timeline.sh: needs root (network namespaces)" >&2
  exit 2
}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-1048576}
LIMIT=${LIMIT:-60}
NET=${NET:-udp}
OMPI=${OMPI:-1}
STRACE=${STRACE:-0}
CONFIGS=${CONFIGS:-default}
LIB=${LIB:-${CARGO_TARGET_DIR:-$PWD/target}/release}
[ -f "$LIB/libmpi_abi.so" ] || {
  echo "netbw_timeline.sh: no $LIB/libmpi_abi.so (cargo build --release -p myrix-mpiapi)" >&2
  exit 2
}
W=$(mktemp -d)
. bench/lib/netns_pair.sh
trap 'netns_pair_down; rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cc -O2 -o "$W/pp" bench/mpi/pingpong.c -Icrates/mpiapi/include -L"$LIB" \
  -Wl,-rpath,"$LIB" -lmpi_abi || exit 1
[ "$OMPI" = 1 ] && { mpicc.openmpi -O2 -o "$W/pp_ompi" bench/mpi/pingpong.c || exit 1; }
# Each rank's strace summary is named after its namespace (the stand-in for ssh sets
# the host name to it).
printf '#!/bin/sh\nexec strace -f -c -o %s/strace.$(hostname) "$@"\n' "$W" >"$W/st"
chmod +x "$W/st"

IFS=';' read -r -a cfgs <<<"$CONFIGS"
NMSG=310 # 2 × (5 warm-up + 3 × 50) messages
pkts() {
  ip netns exec "$NSP_A" sh -c 'cat /sys/class/net/myrixv0/statistics/tx_packets \
    /sys/class/net/myrixv0/statistics/rx_packets' | awk '{s += $1} END {print s}'
}
udp() { # "InDatagrams RcvbufErrors" summed over both namespaces
  for ns in "$NSP_A" "$NSP_B"; do ip netns exec "$ns" cat /proc/net/snmp; done |
    awk '/^Udp:/ && $2 ~ /^[0-9]/ {d += $2; e += $6} END {print d, e}'
}
run() { # setting [wrapper]
  local envs=()
  [ "$1" != default ] && read -r -a envs <<<"$1"
  (
    export MYRIX_MPI_NET="$NET" "${envs[@]}"
    netns_pair_launch myrix ${2:+"$2"} "$W/pp" -s "$SIZE" -i 50 -w 5 -r 3
  ) | awk '!/^#/ && NF >= 2 {print $2; exit}'
}

res=$W/res
: >"$res"
netns_pair_up "$W" || exit 1
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
  for i in "${!cfgs[@]}"; do
    c=${cfgs[$i]}
    p0=$(pkts)
    read -r d0 e0 < <(udp)
    v=$(run "$c")
    p1=$(pkts)
    read -r d1 e1 < <(udp)
    [ -n "$v" ] && echo "$i lat $v" >>"$res" &&
      echo "$i pkts $(awk -v a="$p0" -v b="$p1" -v n=$NMSG 'BEGIN {printf "%.1f", (b - a) / n}')" >>"$res" &&
      echo "$i dg $(awk -v a="$d0" -v b="$d1" -v n=$NMSG 'BEGIN {printf "%.1f", (b - a) / n}')" >>"$res" &&
      echo "$i err $((e1 - e0))" >>"$res"
  done
  if [ "$OMPI" = 1 ]; then
    v=$(netns_pair_launch ompi "$W/pp_ompi" -s "$SIZE" -i 50 -w 5 -r 3 |
      awk '!/^#/ && NF >= 2 {print $2; exit}')
    [ -n "$v" ] && echo "ompi lat $v" >>"$res"
  fi
  echo "round $r of $ROUNDS done ($(cut -d' ' -f1 /proc/loadavg))" >&2
done
med() {
  awk -v c="$1" -v t="$2" '$1 == c && $2 == t {print $3}' "$res" | sort -g |
    awk '{a[NR] = $1} END {if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2];
      else printf "%.4g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
all() { awk -v c="$1" -v t="$2" '$1 == c && $2 == t {printf "%s ", $3}' "$res"; }
echo "# bench/netbw_timeline.sh: $SIZE B ping-pong over $NET, medians of $ROUNDS interleaved rounds"
echo "# lib $LIB; load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
om=$(med ompi lat)
printf "%-44s %10s %8s %9s %10s %10s  %s\n" setting one-way/us /OpenMPI pkts/msg dgrams/msg rcvbuf-err rounds
for i in "${!cfgs[@]}"; do
  l=$(med "$i" lat)
  printf "%-44s %10s %8s %9s %10s %10s  (%s)\n" "${cfgs[$i]}" "$l" \
    "$(awk -v a="$l" -v b="$om" 'BEGIN {if (b + 0 > 0 && a != "n/a") printf "%.2f", a / b; else print "n/a"}')" \
    "$(med "$i" pkts)" "$(med "$i" dg)" "$(all "$i" err)" "$(all "$i" lat)"
done
[ "$OMPI" = 1 ] && printf "%-44s %10s %8s %9s %10s %10s  (%s)\n" "Open MPI TCP" "$om" 1 "" "" "" "$(all ompi lat)"

if [ "$STRACE" = 1 ]; then
  for c in "${cfgs[@]}"; do
    rm -f "$W"/strace.*
    run "$c" "$W/st" >/dev/null
    for f in "$W"/strace.*; do
      [ -f "$f" ] || continue
      echo "# strace -f -c, setting '$c', rank in ${f##*.}: calls per message (of $NMSG)"
      awk -v n=$NMSG '$1 ~ /^[0-9.]+$/ && NF >= 5 {c = $4; s = $NF; if (NF == 5) {c = $4}
        printf "  %-16s %8.1f\n", s, c / n}' "$f" | sort -k2 -gr | head -8
    done
  done
fi
