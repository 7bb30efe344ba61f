#!/usr/bin/env bash
# Two network namespaces joined by a veth pair, with netem adding delay, loss,
# duplication and reordering both ways: `up` creates them, `down` deletes them.
# Used by .ci/run for the MX-over-UDP test (crates/cli/tests/netem.rs).
set -euo pipefail
A=myrix-a B=myrix-b
case "${1:-}" in
up)
  "$0" down 2>/dev/null || true
  ip netns add $A
  ip netns add $B
  ip link add myrix-va type veth peer name myrix-vb
  ip link set myrix-va netns $A
  ip link set myrix-vb netns $B
  ip -n $A addr add 10.77.0.1/24 dev myrix-va
  ip -n $B addr add 10.77.0.2/24 dev myrix-vb
  for ns in $A $B; do ip -n $ns link set lo up; done
  ip -n $A link set myrix-va up
  ip -n $B link set myrix-vb up
  for x in "$A myrix-va 10.77.0.2" "$B myrix-vb 10.77.0.1"; do
    set -- $x
    if ip netns exec "$1" tc qdisc add dev "$2" root netem \
      delay 100us 50us loss 2% duplicate 1% reorder 10% 2>/dev/null; then
      echo "netns: netem on $2 (delay, loss 2%, duplicate 1%, reorder 10%)"
    else
      # Kernels without sch_netem (some VM kernels): nftables drops and
      # duplicates at random; reordering is then not injected.
      ip netns exec "$1" nft -f - <<NFT
table ip myrix {
  chain in {
    type filter hook prerouting priority 0; policy accept;
    iifname "$2" numgen random mod 100 < 2 drop
  }
  chain out {
    type filter hook output priority 0; policy accept;
    oifname "$2" numgen random mod 100 < 1 dup to $3 device "$2"
  }
}
NFT
      echo "netns: no netem in this kernel; nftables on $2 (loss 2%, duplicate 1%, no reordering)"
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
