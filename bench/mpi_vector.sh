#!/usr/bin/env bash
# Non-contiguous ping-pong (issue 23): bench/mpi/pingpong.c with -t vector (doubles in
# 8-byte blocks 16 bytes apart), -t column (a column of a 2-D array of doubles, 16
# to a row) and -t indexed (blocks of 1, 2, 3, 4, ... doubles with one-double holes),
# and -t contig for reference, built with each MPI's mpicc and run with two
# ranks on this host (shared memory):
#   myrix     target/release/myrix mpiexec -n 2 (the library of this tree)
#   base      the same programs linked against $BASE/libmpi_abi.so (e.g. main's
#             library, copied aside), under the same myrix mpiexec   (when BASE is set)
#   MPICH     mpiexec.mpich -n 2
#   Open MPI  mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe --mca btl self,vader
# ROUNDS rounds (at least 3), each running every MPI and type in turn (the order of
# the MPIs rotates every round); each figure is the median over the rounds of the
# program's own median one-way latency. Prints a table per type with the ratios of
# medians, myrix/MPICH, myrix/OpenMPI, myrix/base (below 1: myrix is faster).
#
#   ROUNDS=5 SIZES=1024,65536,1048576 BASE=/tmp/main-lib NOBUILD=1 bash bench/mpi_vector.sh
#   TYPES="vector column indexed" PPARGS="-i 2000 -r 3" ...
#
# --netns: the two ranks in two network namespaces as two hosts (bench/lib/netns_pair.sh,
# as bench/mpi_compare.sh --netns; needs root; the namespaces are the script's own,
# mxpa<pid>/mxpb<pid>, removed on exit), every MPI started by its own launcher through
# the ssh stand-in: MPICH (UCX over TCP) and Open MPI (btl tcp) beside myrix twice,
# columns "myrix" (RSM's udp controller, MYRIX_MPI_NET=udp, the default) and "eth" (raw
# Ethernet, MYRIX_MPI_NET=eth), both on myrixv0, under the same hydra command; base
# (with BASE) over udp. Defaults there: SIZES=8,65536,1048576, TYPES="contig vector
# indexed", PPARGS="-i 300 -r 3", ROUNDS=3. A last table gives each MPI's time for
# each type over its own contiguous time of the same size (the cost of the layout).
#   NOBUILD=1 bash bench/mpi_vector.sh --netns
set -uo pipefail
cd "$(dirname "$0")/.."

MODE=shm
case "${1:-}" in
--netns) MODE=netns ;;
"") ;;
*)
  echo "usage: bash bench/mpi_vector.sh [--netns]   (ROUNDS, SIZES, TYPES, PPARGS, BASE in the environment)" >&2
  exit 2
  ;;
esac
if [ $MODE = netns ]; then
  [ "$(id -u)" = 0 ] || { echo "mpi_vector.sh: --netns needs root" >&2; exit 2; }
  ROUNDS=${ROUNDS:-3}
  SIZES=${SIZES:-8,65536,1048576}
  TYPES=${TYPES:-contig vector indexed}
  PPARGS=${PPARGS:--i 300 -r 3}
fi
ROUNDS=${ROUNDS:-5}
[ "$ROUNDS" -lt 3 ] && ROUNDS=3
SIZES=${SIZES:-1024,65536,1048576}
TYPES=${TYPES:-contig vector column}
PPARGS=${PPARGS:--i 2000 -r 3}
BASE=${BASE:-}
T=${CARGO_TARGET_DIR:-target}
OUT=$T/bench/mpi_vector
mkdir -p "$OUT"

if [ -z "${NOBUILD:-}" ]; then
  cargo build --release -p myrix-cli >&2 || exit 1
fi
MYRIX=$T/release/myrix
[ -x "$MYRIX" ] || { echo "mpi_vector.sh: no $MYRIX (build first)" >&2; exit 1; }

"$MYRIX" mpicc -O2 -Ibench/mpi bench/mpi/pingpong.c -o "$OUT/pp-myrix" || exit 1
mpicc.mpich -O2 -Ibench/mpi bench/mpi/pingpong.c -o "$OUT/pp-mpich" || exit 1
mpicc.openmpi -O2 -Ibench/mpi bench/mpi/pingpong.c -o "$OUT/pp-ompi" || exit 1
IMPLS="myrix mpich ompi"
[ $MODE = netns ] && IMPLS="myrix eth mpich ompi"
if [ -n "$BASE" ]; then
  [ -f "$BASE/libmpi_abi.so" ] || { echo "mpi_vector.sh: BASE=$BASE holds no libmpi_abi.so" >&2; exit 1; }
  cc -O2 -Ibench/mpi -Icrates/mpiapi/include bench/mpi/pingpong.c -o "$OUT/pp-base" \
    -L"$BASE" -Wl,-rpath,"$BASE" -lmpi_abi || exit 1
  IMPLS="${IMPLS/myrix/myrix base}"
fi
[ $MODE = netns ] && cp "$OUT/pp-myrix" "$OUT/pp-eth"

if [ $MODE = netns ]; then
  W=$(mktemp -d)
  . bench/lib/netns_pair.sh
  trap 'netns_pair_down; rm -rf "$W"' EXIT
  netns_pair_up "$W" || { echo "mpi_vector.sh: could not set up the namespaces" >&2; exit 1; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LIMIT=${LIMIT:-120}
fi

run() { # impl type -> the program's output
  local exe=$OUT/pp-$1
  if [ $MODE = netns ]; then
    local net=udp
    [ "$1" = eth ] && net=eth
    [ -n "${NET_PROBE:-}" ] && net=$NET_PROBE
    # shellcheck disable=SC2086
    case $1 in
    myrix | eth | base) MYRIX_MPI_NET=$net MYRIX_MPI_IFACE=myrixv0 netns_pair_launch myrix \
      "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
    *) netns_pair_launch "$1" "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
    esac
    return
  fi
  # shellcheck disable=SC2086
  case $1 in
  myrix | base) "$MYRIX" mpiexec -n 2 "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
  mpich) mpiexec.mpich -n 2 "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
  ompi) mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe --mca btl self,vader \
    "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
  esac
}

# hydra passes the launcher's environment on: a bad MYRIX_MPI_NET must fail, or the
# udp and eth columns could be the same controller.
if [ $MODE = netns ] && NET_PROBE=bogus SIZES=8 PPARGS="-i 10 -r 1" run myrix contig >/dev/null 2>&1; then
  echo "mpi_vector.sh: MYRIX_MPI_NET did not reach the ranks (a bad value ran)" >&2
  exit 1
fi

load0=$(cut -d' ' -f1-3 /proc/loadavg)
RAW=$OUT/raw.txt
: >"$RAW"
set -- $IMPLS
n=$#
for r in $(seq 0 $((ROUNDS - 1))); do
  order=""
  for k in $(seq 0 $((n - 1))); do
    i=$(((k + r) % n + 1))
    order="$order ${!i}"
  done
  for impl in $order; do
    for ty in $TYPES; do
      run "$impl" "$ty" 2>"$OUT/err.txt" | grep -v '^#' | while read -r bytes lat _; do
        echo "$impl $ty $bytes $lat" >>"$RAW"
      done
      [ -s "$OUT/err.txt" ] && { echo "# $impl $ty:" >&2; head -3 "$OUT/err.txt" >&2; }
    done
  done
done

python3 - "$RAW" "$IMPLS" "$TYPES" "$ROUNDS" "$load0" "$MODE" <<'EOF'
import sys, statistics
raw, impls, types, rounds, load0, mode = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4], sys.argv[5], sys.argv[6]
d = {}
for line in open(raw):
    i, t, b, l = line.split()
    d.setdefault((i, t, int(b)), []).append(float(l))
end = open('/proc/loadavg').read().split()[:3]
where = "two ranks in two network namespaces (myrix: RSM udp, eth: RSM raw Ethernet, MPICH: UCX tcp, Open MPI: btl tcp)" if mode == "netns" else "two ranks on one host (shared memory)"
print(f"# bench/mpi_vector.sh: {where}")
print(f"# one-way latency in us, median over {rounds} interleaved rounds; load average {load0} at the start, {' '.join(end)} at the end")
for t in types:
    sizes = sorted({b for (i, tt, b) in d if tt == t})
    print(f"\n## {t}")
    # myrix (and eth, base) over each peer; myrix over base
    ours = [i for i in impls if i in ("myrix", "eth", "base")]
    pairs = [(m, x) for m in ours for x in impls if x not in ours] + [("myrix", "base")] * ("base" in impls)
    head = ["bytes"] + impls + [f"{m}/{x}" for m, x in pairs]
    print(" ".join(f"{h:>12}" for h in head))
    for b in sizes:
        med = {i: statistics.median(d[(i, t, b)]) if (i, t, b) in d else None for i in impls}
        row = [f"{b:>12}"] + [f"{med[i]:>12.2f}" if med[i] else f"{'n/a':>12}" for i in impls]
        for m, x in pairs:
            row.append(f"{med[m] / med[x]:>12.2f}" if med[m] and med[x] else f"{'n/a':>12}")
        print(" ".join(row))
if "contig" in types and len(types) > 1:
    print("\n## each type's time over the same MPI's contiguous time of the same size")
    print(" ".join(f"{h:>12}" for h in ["type", "bytes"] + impls))
    for t in types:
        if t == "contig":
            continue
        for b in sorted({b for (i, tt, b) in d if tt == t}):
            row = [f"{t:>12}", f"{b:>12}"]
            for i in impls:
                a, c = d.get((i, t, b)), d.get((i, "contig", b))
                row.append(f"{statistics.median(a) / statistics.median(c):>12.2f}" if a and c else f"{'n/a':>12}")
            print(" ".join(row))
EOF
