#!/usr/bin/env bash
# myrix MPI's collectives beside MPICH's and Open MPI's: bench/mpi/coll.c (allreduce
# of doubles, bcast, alltoall, barrier; latency per call, the slowest rank's mean,
# median of repetitions) built with each one's mpicc and run on 2, 4 and 8 ranks of
# this host (4 and 8 ranks oversubscribe a 2-core machine: the table says so):
#   myrix     target/release/myrix mpiexec -n N
#   MPICH     mpiexec.mpich -n N
#   Open MPI  mpirun.openmpi -n N --allow-run-as-root --oversubscribe --mca btl self,vader
# The runs are interleaved as in bench/mpi_compare.sh: ROUNDS rounds (at least 3),
# each running every rank count with myrix, MPICH and Open MPI in turn (the order
# rotates every round); each figure is the median over the rounds of the programs'
# own medians, and the spread (max/min over the rounds) of myrix's and the best
# other's figures is printed so the noise of a shared machine shows. Writes the
# table to target/bench/mpi_coll-<date>.txt (and target/bench/mpi_coll.txt).
#
#   bash bench/mpi_coll.sh                       # 3 rounds, 8 B .. 1 MiB, 2 4 8 ranks
#   ROUNDS=5 NPS="2 4" SIZES=8,1024 bash bench/mpi_coll.sh
#   ONLY=myrix,ompi COLLARGS="-i 500 -r 3" bash bench/mpi_coll.sh
#   MYRIX_ENV="MYRIX_MPI_COLL=p2p" bash bench/mpi_coll.sh   # myrix's point-to-point algorithms
#   TESTS=gatherv,scatterv,allgatherv,alltoallv,iallreduce,ibcast NPS=2 bash bench/mpi_coll.sh
# NOBUILD=1: use the myrix binary and library as they are (no cargo build first).
# BASE=DIR: also run the same myrix program with the library in DIR (LD_LIBRARY_PATH;
# e.g. a copy of main's release build) as a fourth MPI, "base", interleaved with the
# others in every round: the table adds base's figure, base / the faster peer and
# myrix / base (a change timed against its base in one run).
# TESTS: coll.c's -t list (default allreduce,bcast,alltoall,barrier; also reduce, gather,
# scatter, allgather, the v-forms and the nonblocking iallreduce, ibcast, ibarrier,
# ireduce, iallgather, ialltoall). MYRIX: the myrix binary
# (default $CARGO_TARGET_DIR or target, release/myrix; built first).
set -uo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
-h | --help)
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
esac

ROUNDS=${ROUNDS:-3}
[ "$ROUNDS" -lt 3 ] && ROUNDS=3
SIZES=${SIZES:-8,32,128,512,2048,8192,32768,131072,524288,1048576}
NPS=${NPS:-2 4 8}
COLLARGS=${COLLARGS:--i 1000 -r 5}
BASE=${BASE:-}
ONLY=${ONLY:-myrix,mpich,ompi}
LIMIT=${LIMIT:-600}
TESTS=${TESTS:-allreduce,bcast,alltoall,barrier}
MYRIX_ENV=${MYRIX_ENV:-}

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MYRIX=${MYRIX:-${CARGO_TARGET_DIR:-$PWD/target}/release/myrix}
declare -A why
want() { [[ ",$ONLY," == *",$1,"* ]]; }
for name in myrix mpich ompi; do want $name || why[$name]="left out (ONLY=$ONLY)"; done
[ -z "$BASE" ] && why[base]="no BASE"
[ -n "$BASE" ] && [ ! -e "$BASE/libmpi_abi.so" ] && why[base]="no $BASE/libmpi_abi.so"

if want myrix && [ "${NOBUILD:-0}" != 1 ] && ! cargo build --release -q -p myrix-cli -p myrix-mpiapi; then
  why[myrix]="cargo build --release -p myrix-cli -p myrix-mpiapi failed"
fi
build() { # name compiler...
  local name=$1
  shift
  "$@" -O2 -o "$W/coll_$name" bench/mpi/coll.c 2>"$W/cc_$name.err" ||
    why[$name]="does not compile: $(head -1 "$W/cc_$name.err")"
}
[ -z "${why[myrix]:-}" ] && build myrix "$MYRIX" mpicc
[ -n "${why[myrix]:-}" ] && [ -z "${why[base]:-}" ] && why[base]="needs myrix's program"
[ -z "${why[mpich]:-}" ] && build mpich mpicc.mpich
[ -z "${why[ompi]:-}" ] && build ompi mpicc.openmpi

launch() { # name np args...
  local name=$1 np=$2
  shift 2
  case $name in
  myrix) env $MYRIX_ENV timeout "$LIMIT" "$MYRIX" mpiexec -n "$np" "$W/coll_myrix" "$@" ;;
  base)
    env $MYRIX_ENV LD_LIBRARY_PATH="$BASE" timeout "$LIMIT" "$MYRIX" mpiexec -n "$np" \
      "$W/coll_myrix" "$@"
    ;;
  mpich) timeout "$LIMIT" mpiexec.mpich -n "$np" "$W/coll_mpich" "$@" ;;
  ompi)
    timeout "$LIMIT" mpirun.openmpi -n "$np" --allow-run-as-root --oversubscribe \
      --mca btl self,vader "$W/coll_ompi" "$@"
    ;;
  esac
}

: >"$W/res" # lines: name np test size value
for r in $(seq "$ROUNDS"); do
  order=(myrix mpich ompi)
  [ -z "${why[base]:-}" ] && order=(myrix mpich base ompi)
  k=$(((r - 1) % ${#order[@]}))
  order=("${order[@]:$k}" "${order[@]:0:$k}")
  for np in $NPS; do
    for name in "${order[@]}"; do
      [ -n "${why[$name]:-}" ] && continue
      if out=$(launch $name "$np" -t "$TESTS" -s "$SIZES" $COLLARGS 2>>"$W/run_$name.err"); then
        echo "$out" | awk -v n=$name -v p="$np" '!/^#/ && NF >= 3 {print n, p, $1, $2, $3}' >>"$W/res"
      else
        echo "round $r: $name on $np ranks failed (status $?): $(tail -1 "$W/run_$name.err")" >&2
      fi
    done
  done
  echo "round $r of $ROUNDS done" >&2
done

med() { # name np test size -> median or n/a
  awk -v n="$1" -v p="$2" -v t="$3" -v s="$4" '$1 == n && $2 == p && $3 == t && $4 == s {print $5}' "$W/res" |
    sort -g | awk '{a[NR] = $1} END {
      if (NR == 0) print "n/a";
      else if (NR % 2) print a[(NR + 1) / 2];
      else printf "%.4g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
spread() { # name np test size -> max/min over the rounds
  awk -v n="$1" -v p="$2" -v t="$3" -v s="$4" '$1 == n && $2 == p && $3 == t && $4 == s {
    if (lo == "" || $5 < lo) lo = $5; if ($5 > hi) hi = $5 } END {
    if (lo == "" || lo + 0 == 0) print "n/a"; else printf "%.2f\n", hi / lo }' "$W/res"
}
div() { # a b -> a / b or n/a
  awk -v m="$1" -v b="$2" 'BEGIN { if (m == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.2f\n", m / b }'
}
table() { # test np
  local cores
  cores=$(nproc)
  echo "# $1, $2 ranks$([ "$2" -gt "$cores" ] && echo " (oversubscribed: $cores cores)"), us per call (ratio < 1: myrix faster)"
  local withbase=
  [ -z "${why[base]:-}" ] && withbase=1
  if [ -n "$withbase" ]; then
    printf "%9s %10s %10s %10s %10s %12s %11s %11s %9s %11s\n" size myrix base MPICH OpenMPI \
      myrix/best base/best myrix/base spread spread-best
  else
    printf "%9s %10s %10s %10s %12s %9s %11s\n" size myrix MPICH OpenMPI myrix/best spread spread-best
  fi
  local sizes=${SIZES//,/ }
  case $1 in barrier | ibarrier) sizes=0 ;; esac
  for s in $sizes; do
    local sz=$s
    case $1 in
    alltoall* | gather* | scatter* | allgather* | ialltoall | iallgather) sz=$((s / $2 * $2)) ;;
    allreduce | reduce | iallreduce | ireduce) sz=$((s / 8 * 8)) ;;
    esac
    m=$(med myrix "$2" "$1" "$sz")
    a=$(med mpich "$2" "$1" "$sz")
    b=$(med ompi "$2" "$1" "$sz")
    best=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a == "n/a") print b; else if (b == "n/a" || a + 0 < b + 0) print a; else print b }')
    bn=$([ "$best" = "$a" ] && echo mpich || echo ompi)
    ratio=$(div "$m" "$best")
    if [ -n "$withbase" ]; then
      local o
      o=$(med base "$2" "$1" "$sz")
      printf "%9s %10s %10s %10s %10s %12s %11s %11s %9s %11s\n" "$sz" "$m" "$o" "$a" "$b" "$ratio" \
        "$(div "$o" "$best")" "$(div "$m" "$o")" "$(spread myrix "$2" "$1" "$sz")" \
        "$(spread $bn "$2" "$1" "$sz")"
    else
      printf "%9s %10s %10s %10s %12s %9s %11s\n" "$sz" "$m" "$a" "$b" "$ratio" \
        "$(spread myrix "$2" "$1" "$sz")" "$(spread $bn "$2" "$1" "$sz")"
    fi
  done
}

mkdir -p target/bench
out=target/bench/mpi_coll-$(date +%Y%m%d-%H%M%S).txt
{
  echo "# bench/mpi_coll.sh: medians of $ROUNDS interleaved rounds; coll $COLLARGS${MYRIX_ENV:+; myrix with $MYRIX_ENV}${BASE:+; base: the library in $BASE}"
  echo "# $(uname -n), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo "# spread: max/min of the rounds' figures (myrix's, and the best other MPI's)"
  for name in myrix base mpich ompi; do
    [ -n "${why[$name]:-}" ] && [ "${why[$name]}" != "no BASE" ] && echo "# $name: n/a: ${why[$name]}"
  done
  for np in $NPS; do
    for t in ${TESTS//,/ }; do
      table $t "$np"
      echo
    done
  done
} | tee "$out"
{
  echo "# every run's figure: MPI ranks test size value"
  cat "$W/res"
} >>"$out"
cp "$out" target/bench/mpi_coll.txt
echo "written to $out" >&2
