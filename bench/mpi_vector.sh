#!/usr/bin/env bash
# Non-contiguous ping-pong (issue 23): bench/mpi/pingpong.c with -t vector (doubles in
# 8-byte blocks 16 bytes apart) and -t column (a column of a 2-D array of doubles, 16
# to a row), and -t contig for reference, built with each MPI's mpicc and run with two
# ranks on this host (shared memory):
#   myrix     target/release/myrix mpiexec -n 2 (the library of this tree)
#   base      the same programs linked against $BASE/libmpi_abi.so (e.g. main's
#             library, copied aside), under the same myrix mpiexec   (when BASE is set)
#   MPICH     mpiexec.mpich -n 2
#   Open MPI  mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe --mca btl self,vader
# ROUNDS rounds (at least 3), each running every MPI and type in turn (the order of
# the MPIs rotates every round); each figure is the median over the rounds of the
# program's own median one-way latency. Prints a table per type with the ratios of
# medians, myrix/base, myrix/MPICH, myrix/OpenMPI (below 1: myrix is faster).
#
#   ROUNDS=5 SIZES=1024,65536,1048576 BASE=/tmp/main-lib NOBUILD=1 bash bench/mpi_vector.sh
#   TYPES="vector column" PPARGS="-i 2000 -r 3" ...
set -uo pipefail
cd "$(dirname "$0")/.."

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
if [ -n "$BASE" ]; then
  [ -f "$BASE/libmpi_abi.so" ] || { echo "mpi_vector.sh: BASE=$BASE holds no libmpi_abi.so" >&2; exit 1; }
  cc -O2 -Ibench/mpi -Icrates/mpiapi/include bench/mpi/pingpong.c -o "$OUT/pp-base" \
    -L"$BASE" -Wl,-rpath,"$BASE" -lmpi_abi || exit 1
  IMPLS="myrix base mpich ompi"
fi

run() { # impl type -> the program's output
  local exe=$OUT/pp-$1
  # shellcheck disable=SC2086
  case $1 in
  myrix | base) "$MYRIX" mpiexec -n 2 "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
  mpich) mpiexec.mpich -n 2 "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
  ompi) mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe --mca btl self,vader \
    "$exe" -t "$2" -s "$SIZES" $PPARGS ;;
  esac
}

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

python3 - "$RAW" "$IMPLS" "$TYPES" "$ROUNDS" "$load0" <<'EOF'
import sys, statistics
raw, impls, types, rounds, load0 = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4], sys.argv[5]
d = {}
for line in open(raw):
    i, t, b, l = line.split()
    d.setdefault((i, t, int(b)), []).append(float(l))
end = open('/proc/loadavg').read().split()[:3]
print(f"# one-way latency in us, median over {rounds} interleaved rounds; load average {load0} at the start, {' '.join(end)} at the end")
for t in types:
    sizes = sorted({b for (i, tt, b) in d if tt == t})
    print(f"\n## {t}")
    head = ["bytes"] + impls + [f"myrix/{x}" for x in impls if x != "myrix"]
    print(" ".join(f"{h:>12}" for h in head))
    for b in sizes:
        med = {i: statistics.median(d[(i, t, b)]) if (i, t, b) in d else None for i in impls}
        row = [f"{b:>12}"] + [f"{med[i]:>12.2f}" if med[i] else f"{'n/a':>12}" for i in impls]
        for x in impls:
            if x == "myrix":
                continue
            row.append(f"{med['myrix'] / med[x]:>12.2f}" if med["myrix"] and med[x] else f"{'n/a':>12}")
        print(" ".join(row))
EOF
