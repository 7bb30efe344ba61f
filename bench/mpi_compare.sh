#!/usr/bin/env bash
# myrix MPI beside MPICH and Open MPI, the same C sources built with each one's mpicc:
#   bench/mpi/pingpong.c  one-way latency (half the round trip) and ping-pong bandwidth
#   bench/mpi/bw.c        windowed bandwidth (64 MPI_Isend in flight, 1-byte ack)
# Two ranks on this host (shared memory), started by each MPI's own launcher:
#   myrix     target/release/myrix mpiexec -n 2
#   MPICH     mpiexec.mpich -n 2                    (hydra)
#   Open MPI  mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe --mca btl self,vader
# The runs are interleaved: ROUNDS rounds (at least 3), each running myrix, MPICH and
# Open MPI in turn (the order rotates every round), so load from elsewhere on the
# machine falls on all three alike; each figure is the median over the rounds of the
# programs' own medians. Prints a table (size, myrix, MPICH, Open MPI, myrix/OpenMPI,
# myrix/MPICH) and writes it to target/bench/mpi_compare-<date>.txt (and
# target/bench/mpi_compare.txt).
#
# When myrix's library cannot run the programs yet (MPI_Send and friends still return
# MPI_ERR_UNSUPPORTED_OPERATION), the myrix column says n/a and the script goes on.
#
#   bash bench/mpi_compare.sh                 # 5 rounds, 8 B .. 1 MiB in powers of 4
#   ROUNDS=3 bash bench/mpi_compare.sh        # quicker
#   SIZES=8,1024,1048576 bash bench/mpi_compare.sh
#   ONLY=mpich,ompi bash bench/mpi_compare.sh # leave out an MPI (myrix, mpich, ompi)
#   PPARGS="-i 2000 -r 3" BWARGS="-n 50" ...  # more options for pingpong.c / bw.c
#   NOBUILD=1 bash bench/mpi_compare.sh       # measure the release build as it is (no cargo
#       build first: build before a quiet window, not inside it)
#   BASE=/tmp/old bash bench/mpi_compare.sh   # a fourth column, "base": the same programs
#       linked against the libmpi_abi.so in /tmp/old (an earlier build, copied aside),
#       run under the same myrix mpiexec in the same rounds (before/after, interleaved);
#       with --netns, under hydra over MYRIX_MPI_NET=eth as the "myrix" column
#   BASE_ENV="MYRIX_ETH_RING=0" ...           # settings exported to the base column's
#       ranks only, with --netns (BASE may then be this build's own library: a knob's A/B)
#
# --netns: the same two ranks in two network namespaces ($NSP_A 10.79.0.1 and
# $NSP_B 10.79.0.2, named after the script's process id: mxpa<pid>, mxpb<pid>;
# joined by a clean veth pair named myrixv0 on both sides; no loss
# injected: .ci/netns.sh shows how), as two hosts. Needs root. Both launchers start the
# remote rank through ssh; the script gives them an ssh stand-in that runs the command
# in the other namespace (hydra: -launcher-exec, Open MPI: plm_rsh_agent), each
# namespace with its own host name (unshare --uts) so no MPI takes them for one node:
#   MPICH     mpiexec.mpich -launcher ssh -launcher-exec NSSSH -iface myrixv0
#             -hosts 10.79.0.1,10.79.0.2 -n 2, UCX over TCP (UCX_TLS=tcp,self)
#   Open MPI  mpirun.openmpi -n 2 --host 10.79.0.1,10.79.0.2 --mca plm_rsh_agent NSSSH
#             --mca btl self,tcp --mca pml ob1 --bind-to none (btl and oob on myrixv0)
#   myrix     the myrix-built programs under the same hydra command (the library speaks
#             PMI-1 to hydra; myrix mpiexec starts ranks on this host only), twice:
#             column "myrix" over RSM's raw-Ethernet controller (MYRIX_MPI_NET=eth) and
#             column "myrix-udp" over its UDP controller (MYRIX_MPI_NET=udp), both in
#             the same interleaved rounds (hydra passes the launcher's environment on;
#             a probe with a bad MYRIX_MPI_NET must fail, or the columns are n/a)
# (bench/lib/netns_pair.sh). The launchers run in $NSP_A. Each round also runs the bare
# raw-Ethernet ping-pong (bench/eth_pingpong.c, 8 B, spin-polled, no library) across the
# same pair: the floor any MPI over this veth stands on, printed above the tables.
# CHRT=N (netns only) starts every launcher, and so every rank, and the bare ping-pong
# under `chrt -f N` (SCHED_FIFO): the same for all, as bench/rsm_net.sh's CHRT. Results go to target/bench/mpi_compare-netns-<date>.txt.
set -uo pipefail
cd "$(dirname "$0")/.."

MODE=shm
case "${1:-}" in
-h | --help)
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
--netns) MODE=netns ;;
"") ;;
*)
  echo "usage: bash bench/mpi_compare.sh [--netns] [--help]   (ROUNDS, SIZES, ONLY in the environment)" >&2
  exit 2
  ;;
esac
if [ $MODE = netns ] && [ "$(id -u)" != 0 ]; then
  echo "mpi_compare.sh: --netns needs root (network namespaces)" >&2
  exit 2
fi

ROUNDS=${ROUNDS:-5}
[ "$ROUNDS" -lt 3 ] && ROUNDS=3
if [ $MODE = netns ]; then # round trips over TCP take tens of microseconds or more
  SIZES=${SIZES:-8,1024,65536,1048576}
  PPARGS=${PPARGS:--i 300 -r 3}
  BWARGS=${BWARGS:--n 20 -r 3}
  CHRT=${CHRT:-}
  [ -n "$CHRT" ] && export NSP_CHRT=$CHRT # bench/lib/netns_pair.sh's launchers
else
  SIZES=${SIZES:-8,32,128,512,2048,8192,32768,131072,524288,1048576}
fi
PPARGS=${PPARGS:-} # more options for pingpong (-i, -r, -w) and bw (-n, -r, -w, -W)
BWARGS=${BWARGS:-}
ONLY=${ONLY:-myrix,mpich,ompi}
BASE=${BASE:-}
names=(myrix mpich ompi)
if [ $MODE = netns ]; then # myrix twice: eth and udp (the latter left out with myrix)
  names=(myrix mpich ompi myrixudp)
  [[ ",$ONLY," == *",myrix,"* ]] && ONLY=$ONLY,myrixudp
fi
if [ -n "$BASE" ]; then
  [ -f "$BASE/libmpi_abi.so" ] || {
    echo "mpi_compare.sh: BASE=$BASE holds no libmpi_abi.so" >&2
    exit 2
  }
  names+=(base)
  ONLY=$ONLY,base
fi
LIMIT=${LIMIT:-300} # seconds per program run

need=()
command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
command -v mpicc.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev)
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null ||
    echo "mpi_compare.sh: apt-get install ${need[*]} failed" >&2
fi

W=$(mktemp -d)
. bench/lib/netns_pair.sh
cleanup() {
  [ $MODE = netns ] && netns_pair_down
  rm -rf "$W"
}
trap cleanup EXIT
if [ $MODE = netns ] && ! netns_pair_up "$W"; then
  echo "mpi_compare.sh: could not set up the namespaces" >&2
  exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MYRIX=${CARGO_TARGET_DIR:-$PWD/target}/release/myrix # cargo builds there

declare -A why # why an MPI's column is n/a
want() { [[ ",$ONLY," == *",$1,"* ]]; }

if want myrix && [ "${NOBUILD:-0}" != 1 ]; then
  if ! cargo build --release -q -p myrix-cli -p myrix-mpiapi; then
    why[myrix]="cargo build --release -p myrix-cli -p myrix-mpiapi failed"
  fi
fi
build() { # name compiler...
  local name=$1
  shift
  for p in pingpong bw; do
    if ! "$@" -O2 -o "$W/${p}_$name" "bench/mpi/$p.c" 2>"$W/cc_$name.err"; then
      why[$name]="does not compile: $(head -1 "$W/cc_$name.err")"
      return
    fi
  done
}
want myrix && [ -z "${why[myrix]:-}" ] && build myrix "$MYRIX" mpicc
if [[ " ${names[*]} " == *" myrixudp "* ]]; then # the same programs, another controller
  if [ -n "${why[myrix]:-}" ]; then why[myrixudp]=${why[myrix]}; else
    for p in pingpong bw; do cp "$W/${p}_myrix" "$W/${p}_myrixudp"; done
  fi
fi
want mpich && build mpich mpicc.mpich
base_cc() { cc "$@" -Icrates/mpiapi/include -L"$BASE" -Wl,-rpath,"$BASE" -lmpi_abi; } # -l after the source
[ -n "$BASE" ] && build base base_cc
want ompi && build ompi mpicc.openmpi

launch() { # name program args...
  local name=$1
  shift
  if [ $MODE = netns ]; then
    case $name in
    myrix) MYRIX_MPI_NET=${NET_MYRIX:-eth} netns_pair_launch myrix "$@" ;;
    myrixudp) MYRIX_MPI_NET=udp netns_pair_launch myrix "$@" ;;
    base) (
      [ -n "${BASE_ENV:-}" ] && export ${BASE_ENV?}
      MYRIX_MPI_NET=${NET_MYRIX:-eth} netns_pair_launch myrix "$@"
    ) ;;
    *) netns_pair_launch "$name" "$@" ;;
    esac
    return
  fi
  case $name in
  myrix | base) timeout "$LIMIT" "$MYRIX" mpiexec -n 2 "$@" ;;
  mpich) timeout "$LIMIT" mpiexec.mpich -n 2 "$@" ;;
  ompi)
    timeout "$LIMIT" mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe \
      --mca btl self,vader "$@"
    ;;
  esac
}

# A first short run per MPI: one that cannot do point-to-point yet is n/a from here on.
for name in "${names[@]}"; do
  want $name || { why[$name]="left out (ONLY=$ONLY)"; continue; }
  [ -n "${why[$name]:-}" ] && continue
  if ! out=$(launch $name "$W/pingpong_$name" -s 8 -i 10 -r 1 2>"$W/probe.err") ||
    ! echo "$out" | grep -q '^ *8 '; then
    why[$name]="cannot run the ping-pong: $(grep -v '^$' "$W/probe.err" | head -1)"
  fi
done

if [ $MODE = netns ] && [ -z "${why[myrix]:-}" ] &&
  NET_MYRIX=bogus launch myrix "$W/pingpong_myrix" -s 8 -i 10 -r 1 >/dev/null 2>&1; then
  why[myrix]="MYRIX_MPI_NET did not reach the ranks (a bad value ran)"
  why[myrixudp]=${why[myrix]}
fi

bare_floor() { # the bare raw-Ethernet ping-pong across the pair: one-way µs at 8 B
  local mac srv
  mac=$(ip -n "$NSP_A" link show myrixv0 | awk '/link\/ether/ {print $2}')
  timeout 60 ip netns exec "$NSP_A" ${CHRT:+chrt -f $CHRT} "$W/eth_pp" -s myrixv0 >/dev/null &
  srv=$!
  sleep 0.2
  timeout 60 ip netns exec "$NSP_B" ${CHRT:+chrt -f $CHRT} "$W/eth_pp" -c myrixv0 "$mac" 8 20000 |
    awk '{print $2}'
  wait $srv
}
bare_ok=
if [ $MODE = netns ] && cc -O2 -o "$W/eth_pp" bench/eth_pingpong.c 2>/dev/null; then
  bare_ok=1
fi

: >"$W/res" # lines: name test size value
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
  order=("${names[@]}")
  k=$(((r - 1) % ${#names[@]}))
  order=("${order[@]:$k}" "${order[@]:0:$k}")
  if [ $MODE = netns ] && [ -n "${bare_ok:-}" ]; then
    v=$(bare_floor)
    [ -n "$v" ] && echo "bare lat 8 $v" >>"$W/res"
  fi
  for name in "${order[@]}"; do
    [ -n "${why[$name]:-}" ] && continue
    if out=$(launch $name "$W/pingpong_$name" -s "$SIZES" $PPARGS 2>>"$W/run_$name.err"); then
      echo "$out" | awk -v n=$name '!/^#/ && NF >= 3 {print n, "lat", $1, $2; print n, "ppbw", $1, $3}' >>"$W/res"
    else
      echo "round $r: $name pingpong failed (status $?)" >&2
    fi
    if out=$(launch $name "$W/bw_$name" -s "$SIZES" $BWARGS 2>>"$W/run_$name.err"); then
      echo "$out" | awk -v n=$name '!/^#/ && NF >= 2 {print n, "bw", $1, $2}' >>"$W/res"
    else
      echo "round $r: $name bw failed (status $?)" >&2
    fi
  done
  echo "round $r of $ROUNDS done" >&2
done

med() { # name test size -> median or n/a
  awk -v n="$1" -v t="$2" -v s="$3" '$1 == n && $2 == t && $3 == s {print $4}' "$W/res" |
    sort -g | awk '{a[NR] = $1} END {
      if (NR == 0) print "n/a";
      else if (NR % 2) print a[(NR + 1) / 2];
      else printf "%.4g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
  if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }
table() { # test title
  echo "# $2"
  printf "%9s %10s %10s %10s %14s %12s" size myrix MPICH OpenMPI myrix/OpenMPI myrix/MPICH
  [ -n "$BASE" ] && printf " %10s %14s %12s" base base/OpenMPI myrix/base
  [ $MODE = netns ] && printf " %10s %14s" myrix-udp udp/OpenMPI
  echo
  for s in ${SIZES//,/ }; do
    m=$(med myrix "$1" "$s")
    a=$(med mpich "$1" "$s")
    b=$(med ompi "$1" "$s")
    printf "%9s %10s %10s %10s %14s %12s" "$s" "$m" "$a" "$b" "$(ratio "$m" "$b")" "$(ratio "$m" "$a")"
    if [ -n "$BASE" ]; then
      c=$(med base "$1" "$s")
      printf " %10s %14s %12s" "$c" "$(ratio "$c" "$b")" "$(ratio "$m" "$c")"
    fi
    if [ $MODE = netns ]; then
      c=$(med myrixudp "$1" "$s")
      printf " %10s %14s" "$c" "$(ratio "$c" "$b")"
    fi
    echo
  done
}

mkdir -p target/bench
suffix=""
where="2 ranks on one host (shared memory)"
if [ $MODE = netns ]; then
  suffix=-netns
  where="2 ranks in two network namespaces (veth; myrix: RSM eth, myrix-udp: RSM udp, MPICH: UCX over TCP, Open MPI: btl tcp)"
fi
out=target/bench/mpi_compare$suffix-$(date +%Y%m%d-%H%M%S).txt
{
  echo "# bench/mpi_compare.sh${suffix:+ --netns}: $where, medians of $ROUNDS interleaved rounds"
  echo "# $(uname -n), $(nproc) CPUs, load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  [ -n "$BASE" ] && echo "# base: the same programs linked against $BASE/libmpi_abi.so${BASE_ENV:+, its ranks with $BASE_ENV}"
  [ -n "${CHRT:-}" ] && echo "# every launcher, rank and the bare ping-pong under chrt -f $CHRT"
  [ $MODE = netns ] && echo "# bare raw-Ethernet ping-pong (bench/eth_pingpong.c), 8 B one way: $(med bare lat 8) us (median of the rounds)"
  for name in "${names[@]}"; do
    [ -n "${why[$name]:-}" ] && echo "# $name: n/a: ${why[$name]}"
  done
  table lat "ping-pong one-way latency, us (ratio < 1: myrix faster)"
  echo
  table ppbw "ping-pong bandwidth, MB/s = size / one-way time (ratio > 1: myrix faster)"
  echo
  table bw "windowed bandwidth, 64 in flight + 1-byte ack, MB/s (ratio > 1: myrix faster)"
} | tee "$out"
{
  echo
  echo "# every run's figure (the median of its repetitions): MPI test size value"
  cat "$W/res"
} >>"$out"
cp "$out" target/bench/mpi_compare$suffix.txt
echo "written to $out" >&2
