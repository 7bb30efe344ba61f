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
ONLY=${ONLY:-udp,eth,ompi,base-udp,base-eth}
[ -f "$LIB/libmpi_abi.so" ] || {
  echo "netbw.sh: no $LIB/libmpi_abi.so (cargo build --release -p myrix-mpiapi)" >&2
  exit 2
}
W=$(mktemp -d)
. bench/lib/netns_pair.sh
trap 'netns_pair_down; rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cols=(udp eth ompi)
[ -n "$BASE" ] && cols+=(base-udp base-eth)
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

pkts() { # packets through the veth of $NSP_A, both ways
  ip netns exec "$NSP_A" sh -c 'cat /sys/class/net/myrixv0/statistics/tx_packets \
    /sys/class/net/myrixv0/statistics/rx_packets' | awk '{s += $1} END {print s}'
}
run() { # column test -> the figure (us one way, or MB/s)
  local c=$1 t=$2 prog net lib=new
  case $c in
  ompi) prog=$W/${t}_ompi ;;
  base-*) prog=$W/${t}_base net=${c#base-} ;;
  *) prog=$W/${t}_new net=$c ;;
  esac
  local args=(-s "$SIZE" -r 3)
  [ "$t" = pingpong ] && args+=(-i 50 -w 5) || args+=(-n 20)
  if [ "$c" = ompi ]; then
    netns_pair_launch ompi "$prog" "${args[@]}"
  else
    (
      export MYRIX_MPI_NET="$net" $ENVS
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
  echo "# MTU $mtu: load average $(cut -d' ' -f1-3 /proc/loadavg) at the start" >>"$res.load"
  for r in $(seq "$ROUNDS"); do
    k=$(((r - 1) % ${#cols[@]}))
    order=("${cols[@]:$k}" "${cols[@]:0:$k}")
    for c in "${order[@]}"; do
      want "$c" || continue
      p0=$(pkts)
      v=$(run "$c" pingpong)
      p1=$(pkts)
      [ -n "$v" ] && echo "$mtu $c lat $v" >>"$res"
      # 2 × (5 warm-up + 3 × 50) messages, each way counted.
      [ -n "$v" ] && [ "$c" != ompi ] &&
        echo "$mtu $c pkts $(awk -v a="$p0" -v b="$p1" 'BEGIN {printf "%.1f", (b - a) / 310}')" >>"$res"
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
    printf "%6s %-9s %10s %9s %10s %9s %12s  %s\n" MTU column one-way/us /OpenMPI bw/MB/s /OpenMPI pkts/message rounds
    for c in "${cols[@]}"; do
      want "$c" || continue
      l=$(med "$mtu" "$c" lat)
      b=$(med "$mtu" "$c" bw)
      printf "%6s %-9s %10s %9s %10s %9s %12s  (%s/ %s)\n" "$mtu" "$c" "$l" \
        "$(awk -v a="$l" -v b="$o" 'BEGIN {if (b + 0 > 0 && a != "n/a") printf "%.2f", a / b; else print "n/a"}')" \
        "$b" "$(awk -v a="$b" -v b="$ob" 'BEGIN {if (b + 0 > 0 && a != "n/a") printf "%.2f", a / b; else print "n/a"}')" \
        "$(med "$mtu" "$c" pkts)" "$(all "$mtu" "$c" lat)" "$(all "$mtu" "$c" bw)"
    done
  done
  echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
}
