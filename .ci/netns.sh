#!/usr/bin/env bash
# Two network namespaces joined by a veth pair, with delay, loss, duplication and
# reordering added both ways (netem, or nftables and HTB where the kernel has no netem):
# `up` creates them, `down` deletes them.
# Used by .ci/run for the MX-over-UDP test (crates/cli/tests/netns.rs).
# MYRIX_NETNS_A / MYRIX_NETNS_B / MYRIX_NETNS_VA / MYRIX_NETNS_VB / MYRIX_NETNS_NET
# (the /24's first three octets) name other namespaces, veths and subnet (defaults:
# myrix-a, myrix-b, myrix-va, myrix-vb, 10.77.0), so two users of one machine do not
# take each other's. MYRIX_NETNS_CLEAN=1 leaves the link unimpaired (benchmarks);
# MYRIX_NETNS_LOSS / _DUP / _REORDER set the percentages (defaults 2, 1, 10).
set -euo pipefail
LOSS=${MYRIX_NETNS_LOSS:-2} DUP=${MYRIX_NETNS_DUP:-1} REORDER=${MYRIX_NETNS_REORDER:-10}
A=${MYRIX_NETNS_A:-myrix-a} B=${MYRIX_NETNS_B:-myrix-b}
VA=${MYRIX_NETNS_VA:-myrix-va} VB=${MYRIX_NETNS_VB:-myrix-vb} NET=${MYRIX_NETNS_NET:-10.77.0}
case "${1:-}" in
up)
  "$0" down 2>/dev/null || true
  ip netns add $A
  ip netns add $B
  ip link add $VA type veth peer name $VB
  ip link set $VA netns $A
  ip link set $VB netns $B
  ip -n $A addr add $NET.1/24 dev $VA
  ip -n $B addr add $NET.2/24 dev $VB
  for ns in $A $B; do ip -n $ns link set lo up; done
  ip -n $A link set $VA up
  ip -n $B link set $VB up
  if [ "${MYRIX_NETNS_CLEAN:-0}" = 1 ]; then
    echo "netns: $A ($NET.1) and $B ($NET.2), link not impaired"
    exit 0
  fi
  for x in "$A $VA $NET.2" "$B $VB $NET.1"; do
    set -- $x
    if ip netns exec "$1" tc qdisc add dev "$2" root netem \
      delay 100us 50us loss $LOSS% duplicate $DUP% reorder $REORDER% 2>/dev/null; then
      echo "netns: netem on $2 (delay, loss $LOSS%, duplicate $DUP%, reorder $REORDER%)"
    else
      # Kernels without sch_netem (some VM kernels): nftables drops and
      # duplicates at random, and reorders by steering one frame in ten into a slow
      # HTB class (20 Mbit/s, one frame at a time): the frames sent after it through
      # the fast class overtake it.
      ip netns exec "$1" tc qdisc add dev "$2" root handle 1: htb default 10
      ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate 10gbit quantum 60000
      ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:20 htb rate 20mbit quantum 1600 \
        burst 2k cburst 2k
      ip netns exec "$1" nft -f - <<NFT
table ip myrix {
  chain in {
    type filter hook prerouting priority 0; policy accept;
    iifname "$2" numgen random mod 100 < $LOSS drop
  }
  chain out {
    type filter hook output priority 0; policy accept;
    oifname "$2" numgen random mod 100 < $DUP dup to $3 device "$2"
    oifname "$2" numgen random mod 100 < $REORDER meta priority set 1:20
  }
}
# The same for raw MX frames (EtherType 0x86DF), which the ip table never sees.
table netdev myrix {
  chain in {
    type filter hook ingress device "$2" priority 0; policy accept;
    ether type 0x86df numgen random mod 100 < $LOSS drop
  }
  chain out {
    type filter hook egress device "$2" priority 0; policy accept;
    ether type 0x86df numgen random mod 100 < $DUP dup to "$2"
    ether type 0x86df numgen random mod 100 < $REORDER meta priority set 1:20
  }
}
NFT
      echo "netns: no netem in this kernel; nftables and HTB on $2 (loss $LOSS%, duplicate $DUP%, $REORDER% of frames delayed behind a 20 Mbit/s class)"
    fi
  done
  ;;
down)
  ip netns del $A 2>/dev/null || true
  ip netns del $B 2>/dev/null || true
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
