#!/usr/bin/env bash
# myrix MPI's one-sided latency beside MPICH's and Open MPI's: bench/mpi/rma.c (8 B
# put, get, accumulate, fetch_and_op, each followed by MPI_Win_flush, passive target
# inside MPI_Win_lock_all, 2 ranks of this host) built with each one's mpicc:
#   myrix     $MYRIX mpiexec -n 2            (default target/release/myrix; the program
#             linked against $MYRIXLIB/libmpi_abi.so, default the launcher's directory)
#   base      the same launcher, the program linked against $BASE/libmpi_abi.so (an
#             earlier build copied aside: before/after in the same rounds; optional)
#   MPICH     mpiexec.mpich -n 2
#   Open MPI  mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe --mca btl self,vader
# ROUNDS rounds (at least 3), each running every MPI once, the order rotating every
# round, so load from elsewhere falls on all alike; each figure is the median over the
# rounds, and the ratios are ratios of those medians. Measures the release build as
# it is (build first, outside any quiet window).
#
#   ROUNDS=7 ITERS=200000 bash bench/mpi_rma.sh
#   BASE=/tmp/old ONLY=myrix,base,ompi bash bench/mpi_rma.sh
#   BIN=/tmp/rma bash bench/mpi_rma.sh build    # compile the programs into /tmp/rma only
#   BIN=/tmp/rma /work/contract/quiet bash bench/mpi_rma.sh   # then time them (no compile
#       inside a quiet window)
set -uo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
-h | --help)
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
esac

MODE=${1:-run}
ROUNDS=${ROUNDS:-5}
[ "$ROUNDS" -lt 3 ] && ROUNDS=3
ITERS=${ITERS:-200000}
LIMIT=${LIMIT:-120}
BASE=${BASE:-}
ONLY=${ONLY:-myrix,base,mpich,ompi}
MYRIX=${MYRIX:-${CARGO_TARGET_DIR:-$PWD/target}/release/myrix}
L=${MYRIXLIB:-$(dirname "$MYRIX")}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
BIN=${BIN:-$W}
mkdir -p "$BIN"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
names=()
want() { [[ ",$ONLY," == *",$1,"* ]]; }
add() { # name compiler args...
  local name=$1
  shift
  if [ "$MODE" != build ] && [ "$BIN" != "$W" ] && [ -x "$BIN/rma_$name" ]; then
    names+=("$name")
  elif "$1" -O2 -o "$BIN/rma_$name" bench/mpi/rma.c "${@:2}" 2>"$W/cc_$name.err"; then
    names+=("$name")
  else
    echo "$name: does not compile: $(head -1 "$W/cc_$name.err")" >&2
  fi
}
want myrix && add myrix cc -Icrates/mpiapi/include -L"$L" -Wl,-rpath,"$L" -lmpi_abi
want base && [ -n "$BASE" ] && add base cc -Icrates/mpiapi/include -L"$BASE" -Wl,-rpath,"$BASE" -lmpi_abi
want mpich && add mpich mpicc.mpich
want ompi && add ompi mpicc.openmpi
[ "$MODE" = build ] && exit 0

launch() { # name
  case $1 in
  myrix | base) timeout "$LIMIT" env -u LD_LIBRARY_PATH "$MYRIX" mpiexec -n 2 "$BIN/rma_$1" "$ITERS" ;;
  mpich) timeout "$LIMIT" mpiexec.mpich -n 2 "$BIN/rma_mpich" "$ITERS" ;;
  ompi)
    timeout "$LIMIT" mpirun.openmpi -n 2 --allow-run-as-root --oversubscribe \
      --mca btl self,vader "$BIN/rma_ompi" "$ITERS"
    ;;
  esac
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$W/res" # lines: name put get acc fop
for r in $(seq "$ROUNDS"); do
  k=$(((r - 1) % ${#names[@]}))
  for name in "${names[@]:$k}" "${names[@]:0:$k}"; do
    if out=$(launch "$name" 2>>"$W/run_$name.err"); then
      echo "$name $out" >>"$W/res"
    else
      echo "round $r: $name failed: $(tail -1 "$W/run_$name.err")" >&2
    fi
  done
done

med() { # name column -> median or n/a
  awk -v n="$1" -v c="$2" '$1 == n {print $c}' "$W/res" | sort -g | awk '{a[NR] = $1} END {
    if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2];
    else printf "%.4g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }

echo "# bench/mpi_rma.sh: 8 B, 2 ranks, us per operation + MPI_Win_flush; medians of $ROUNDS interleaved rounds, $ITERS iterations"
echo "# $(uname -n), $(nproc) CPUs; load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf "%-6s %9s %9s %9s %9s   %s\n" mpi put get acc fop "rounds' put figures"
for name in "${names[@]}"; do
  printf "%-6s %9s %9s %9s %9s   %s\n" "$name" "$(med "$name" 2)" "$(med "$name" 3)" \
    "$(med "$name" 4)" "$(med "$name" 5)" "$(awk -v n="$name" '$1 == n {printf "%s ", $2}' "$W/res")"
done
for peer in ompi mpich base; do
  [[ " ${names[*]} " == *" $peer "* ]] && want myrix || continue
  printf "%-6s %9s %9s %9s %9s\n" "/$peer" "$(ratio "$(med myrix 2)" "$(med $peer 2)")" \
    "$(ratio "$(med myrix 3)" "$(med $peer 3)")" "$(ratio "$(med myrix 4)" "$(med $peer 4)")" \
    "$(ratio "$(med myrix 5)" "$(med $peer 5)")"
done
