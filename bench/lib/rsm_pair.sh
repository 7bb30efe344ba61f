# Two network namespaces joined by one veth pair, for the RSM network benches (source
# it; needs root). rsm_pair_up NET (e.g. 10.81.0) uses $A, $B, $VA, $VB and $W, set by
# the caller: addresses NET.1 and NET.2, and the node tables $W/eth.nodes and
# $W/udp.nodes (node 1 in $A, node 2 in $B), and $maca/$macb (the boards' MACs, for
# the bare ping-pong). rsm_pair_cleanup kills the caller's
# background jobs (a server a failed client left waiting), deletes both namespaces
# and $W.

rsm_pair_cleanup() {
  for j in $(jobs -p); do kill "$j" 2>/dev/null || true; done
  ip netns del "$A" 2>/dev/null || true
  ip netns del "$B" 2>/dev/null || true
  rm -rf "$W"
}

rsm_pair_up() { # NET
  local net=$1 ns
  ip netns add "$A"
  ip netns add "$B"
  ip link add "$VA" type veth peer name "$VB"
  ip link set "$VA" netns "$A"
  ip link set "$VB" netns "$B"
  ip -n "$A" addr add "$net.1/24" dev "$VA"
  ip -n "$B" addr add "$net.2/24" dev "$VB"
  for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
  ip -n "$A" link set "$VA" up
  ip -n "$B" link set "$VB" up
  maca=$(ip netns exec "$A" cat /sys/class/net/"$VA"/address)
  macb=$(ip netns exec "$B" cat /sys/class/net/"$VB"/address)
  printf '1 eth:%s@%s\n2 eth:%s@%s\n' "$VA" "$maca" "$VB" "$macb" >"$W/eth.nodes"
  printf '1 udp:%s.1:7301\n2 udp:%s.2:7301\n' "$net" "$net" >"$W/udp.nodes"
}
