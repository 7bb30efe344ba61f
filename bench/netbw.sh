#!/usr/bin/env bash
# Large MPI messages across two network namespaces (issue 23, "netbw"): the 1 MiB
# ping-pong one way and the windowed 1 MiB bandwidth of myrix over RSM's udp and eth
# controllers beside Open MPI's TCP, in interleaved rounds, at each veth MTU of MTUS.
# Builds nothing: it runs the libmpi_abi.so in LIB (default $CARGO_TARGET_DIR/release,
# else target/release; `cargo build --release -p myrix-mpiapi` first) and, with
# BASE=dir, the one in dir too (columns base-udp, base-eth: before/after in the same
# rounds). Also counts the veth's packets during each myrix ping-pong (both ways, per
# message: the frames a MiB takes). Needs root (bench/lib/netns_pair.sh).
#   bash bench/netbw.sh                       # MTUS="1500 65535" ROUNDS=3
#   MTUS=1500 ROUNDS=5 BASE=/tmp/old bash bench/netbw.sh
#   ONLY=udp,ompi bash bench/netbw.sh         # columns: udp eth ompi (base-* with BASE)
#   ENVS="MYRIX_MPI_POOL=1m" bash ...         # more variables for the myrix ranks
#   RAILS=2 ONLY=udp,udp2 bash bench/netbw.sh # a second veth pair (myrixv1, 10.79.1.x):
#     columns udp2/eth2 (base-udp2/base-eth2) run on both rails (MYRIX_MPI_IFACE=
#     myrixv0,myrixv1), the others on myrixv0 alone
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || {
  echo "netbw.sh: needs root (network namespaces)" >&2
  exit 2
}
MTUS=${MTUS:-1500 65535}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-1048576}
LIMIT=${LIMIT:-60}
LIB=${LIB:-${CARGO_TARGET_DIR:-$PWD/target}/release}
BASE=${BASE:-}
ENVS=${ENVS:-}
RAILS=${RAILS:-1}
ONLY=${ONLY:-udp,eth,ompi,base-udp,base-eth,udp2,eth2,base-udp2,base-eth2}
[ -f "$LIB/libmpi_abi.so" ] || {
  echo "netbw.sh: no $LIB/libmpi_abi.so (cargo build --release -p myrix-mpiapi)" >&2
  exit 2
}
W=$(mktemp -d)
. bench/lib/netns_pair.sh
trap 'netns_pair_down; rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cols=(udp eth ompi)
[ "$RAILS" = 2 ] && cols+=(udp2 eth2)
[ -n "$BASE" ] && cols+=(base-udp base-eth)
[ -n "$BASE" ] && [ "$RAILS" = 2 ] && cols+=(base-udp2 base-eth2)
want() { [[ ",$ONLY," == *",$1,"* ]]; }
mk() { # name libdir
  for p in pingpong bw; do
    cc -O2 -o "$W/${p}_$1" "bench/mpi/$p.c" -Icrates/mpiapi/include -L"$2" \
      -Wl,-rpath,"$2" -lmpi_abi || exit 1
  done
}
mk new "$LIB"
[ -n "$BASE" ] && mk base "$BASE"
for p in pingpong bw; do mpicc.openmpi -O2 -o "$W/${p}_ompi" "bench/mpi/$p.c" || exit 1; done

rail2_up() { # mtu: a second veth pair, myrixv1, 10.79.1.1 in $NSP_A and .2 in $NSP_B
  local xa=mxpya$$ xb=mxpyb$$ x
  ip link add "$xa" type veth peer name "$xb" &&
    ip link set "$xa" netns "$NSP_A" && ip link set "$xb" netns "$NSP_B" || return 1
  for x in "$NSP_A $xa 10.79.1.1" "$NSP_B $xb 10.79.1.2"; do
    set -- $x
    ip -n "$1" link set "$2" name myrixv1 && ip -n "$1" addr add "$3/24" dev myrixv1 &&
      ip -n "$1" link set myrixv1 mtu "$mtu" && ip -n "$1" link set myrixv1 up || return 1
  done
}
pkts() { # [veth] packets through $NSP_A's veth (default: myrixv0 and myrixv1), both ways
  ip netns exec "$NSP_A" sh -c "cat /sys/class/net/${1:-myrixv*}/statistics/[rt]x_packets" |
    awk '{s += $1} END {print s}'
}
run() { # column test -> the figure (us one way, or MB/s)
  local c=$1 t=$2 prog net= iface=myrixv0
  case $c in
  ompi) prog=$W/${t}_ompi ;;
  base-*) prog=$W/${t}_base net=${c#base-} ;;
  *) prog=$W/${t}_new net=$c ;;
  esac
  # A column ending in 2: both rails.
  [ "${net%2}" != "$net" ] && net=${net%2} iface=myrixv0,myrixv1
  local args=(-s "$SIZE" -r 3)
  [ "$t" = pingpong ] && args+=(-i 50 -w 5) || args+=(-n 20)
  if [ "$c" = ompi ]; then
    netns_pair_launch ompi "$prog" "${args[@]}"
  else
    (
      export MYRIX_MPI_NET="$net" MYRIX_MPI_IFACE="$iface" $ENVS
      netns_pair_launch myrix "$prog" "${args[@]}"
    )
  fi | awk '!/^#/ && NF >= 2 {print $2; exit}'
}

res=$W/res
: >"$res"
for mtu in $MTUS; do
  NSP_MTU=$mtu netns_pair_up "$W" || {
    echo "netbw.sh: could not set up the namespaces (MTU $mtu)" >&2
    exit 1
  }
  [ "$RAILS" = 2 ] && { rail2_up "$mtu" || {
    echo "netbw.sh: could not add the second rail (MTU $mtu)" >&2
    exit 1
  }; }
  echo "# MTU $mtu: load average $(cut -d' ' -f1-3 /proc/loadavg) at the start" >>"$res.load"
  for r in $(seq "$ROUNDS"); do
    k=$(((r - 1) % ${#cols[@]}))
    order=("${cols[@]:$k}" "${cols[@]:0:$k}")
    for c in "${order[@]}"; do
      want "$c" || continue
      p0=$(pkts) q0=$(pkts myrixv0)
      v=$(run "$c" pingpong)
      p1=$(pkts) q1=$(pkts myrixv0)
      [ -n "$v" ] && echo "$mtu $c lat $v" >>"$res"
      # 2 × (5 warm-up + 3 × 50) messages, each way counted; the share of the second rail.
      [ -n "$v" ] && [ "$c" != ompi ] &&
        echo "$mtu $c pkts $(awk -v a="$p0" -v b="$p1" 'BEGIN {printf "%.1f", (b - a) / 310}')" >>"$res" &&
        echo "$mtu $c rail2 $(awk -v a="$p0" -v b="$p1" -v c="$q0" -v d="$q1" \
          'BEGIN {printf "%.0f", (b > a ? 100 * ((b - a) - (d - c)) / (b - a) : 0)}')" >>"$res"
      v=$(run "$c" bw)
      [ -n "$v" ] && echo "$mtu $c bw $v" >>"$res"
    done
    echo "MTU $mtu: round $r of $ROUNDS done ($(cut -d' ' -f1 /proc/loadavg))" >&2
  done
  echo "# MTU $mtu: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end" >>"$res.load"
  netns_pair_down
done

med() { # mtu column test
  awk -v m="$1" -v c="$2" -v t="$3" '$1 == m && $2 == c && $3 == t {print $4}' "$res" |
    sort -g | awk '{a[NR] = $1} END {
      if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2];
      else printf "%.4g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
all() { awk -v m="$1" -v c="$2" -v t="$3" '$1 == m && $2 == c && $3 == t {printf "%s ", $4}' "$res"; }
{
  echo "# bench/netbw.sh: $SIZE B across two namespaces, medians of $ROUNDS interleaved rounds (all rounds in brackets)"
  echo "# lib $LIB${BASE:+, base $BASE}${ENVS:+, $ENVS}; $(uname -n), $(nproc) CPUs"
  cat "$res.load"
  for mtu in $MTUS; do
    o=$(med "$mtu" ompi lat)
    ob=$(med "$mtu" ompi bw)
    printf "%6s %-9s %10s %9s %10s %9s %12s %7s  %s\n" MTU column one-way/us /OpenMPI bw/MB/s /OpenMPI pkts/message rail2/% rounds
    for c in "${cols[@]}"; do
      want "$c" || continue
      l=$(med "$mtu" "$c" lat)
      b=$(med "$mtu" "$c" bw)
      printf "%6s %-9s %10s %9s %10s %9s %12s %7s  (%s/ %s)\n" "$mtu" "$c" "$l" \
        "$(awk -v a="$l" -v b="$o" 'BEGIN {if (b + 0 > 0 && a != "n/a") printf "%.2f", a / b; else print "n/a"}')" \
        "$b" "$(awk -v a="$b" -v b="$ob" 'BEGIN {if (b + 0 > 0 && a != "n/a") printf "%.2f", a / b; else print "n/a"}')" \
        "$(med "$mtu" "$c" pkts)" "$(med "$mtu" "$c" rail2)" "$(all "$mtu" "$c" lat)" "$(all "$mtu" "$c" bw)"
    done
  done
  echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
}
