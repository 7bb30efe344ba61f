#!/usr/bin/env bash
# Real MPI applications under myrix, MPICH and Open MPI, each built unchanged from the
# same source with each MPI's own compiler wrapper, run interleaved at several rank
# counts on this host, their output checked:
#   HPCG 3.1  (github.com/hpcg-benchmark/hpcg)  conjugate gradient, 3-D 27-point stencil;
#             figure: the GFLOP/s rating of its "Final Summary"; check: "result is VALID"
#   LULESH 2  (github.com/LLNL/LULESH)          shock hydrodynamics, cube rank counts
#             (1, 8, 27…); figure: FOM (zones/s); check: the final origin energy is the
#             same under every MPI and every rank count, and its symmetry error is small
#   NPB IS    (NAS Parallel Benchmarks 3.4, NPB3.4-MPI/IS) integer sort: bucket
#             exchange by MPI_Alltoall(v); figure: "Mop/s total"; check: "Verification
#             = SUCCESSFUL"; power-of-two rank counts only
# The sources are not part of myrix and this script fetches nothing: give the
# directories of copies you obtained yourself (a git clone, or a tarball):
#
#   bash bench/mpi_apps.sh --hpcg DIR [--lulesh DIR]
#   RANKS="1 2 4" ROUNDS=3 HPCG_N=32 HPCG_TIME=10 bash bench/mpi_apps.sh --hpcg DIR
#   LULESH_RANKS="1 8" LULESH_S=20 LULESH_I=100 bash bench/mpi_apps.sh --lulesh DIR
#   NPB_CLASS=A bash bench/mpi_apps.sh --npb DIR     # DIR: the NPB3.4-MPI directory
#   ONLY=myrix bash bench/mpi_apps.sh --hpcg DIR    # leave out MPIs (myrix, mpich, ompi)
#   bash bench/mpi_apps.sh --netns --hpcg DIR       # 2 ranks in two network namespaces
#
# HPCG runs with a local grid of HPCG_N³ per rank (weak scaling) for HPCG_TIME seconds
# (HPCG's own minimum for an official run is 1800 s: these are quick runs, and HPCG
# says so in its report). LULESH keeps the global problem fixed (strong scaling): each
# of p ranks gets LULESH_S/p^(1/3) elements per side.
# Ranks above the number of CPUs are oversubscribed; the table says how many CPUs.
# --netns: two ranks, one per namespace, started by MPICH's hydra for myrix and MPICH
# and by mpirun for Open MPI (bench/lib/netns_pair.sh); needs root.
# Each cell is the median over ROUNDS interleaved rounds (the order of the MPIs rotates
# every round). The table goes to target/bench/mpi_apps-<date>.txt.
set -uo pipefail
cd "$(dirname "$0")/.."

HPCG_SRC="" LULESH_SRC="" NPB_SRC="" MODE=shm
while [ $# -gt 0 ]; do
  case $1 in
  --hpcg) HPCG_SRC=$(realpath "${2:?--hpcg needs a directory}") && shift ;;
  --lulesh) LULESH_SRC=$(realpath "${2:?--lulesh needs a directory}") && shift ;;
  --npb) NPB_SRC=$(realpath "${2:?--npb needs a directory}") && shift ;;
  --netns) MODE=netns ;;
  -h | --help)
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "usage: bash bench/mpi_apps.sh [--netns] [--hpcg DIR] [--lulesh DIR] [--npb DIR]   (see --help)" >&2
    exit 2
    ;;
  esac
  shift
done
if [ -z "$HPCG_SRC$LULESH_SRC$NPB_SRC" ]; then
  echo "mpi_apps.sh: give --hpcg DIR, --lulesh DIR and/or --npb DIR (sources you obtained; see --help)" >&2
  exit 2
fi
[ -n "$HPCG_SRC" ] && [ ! -f "$HPCG_SRC/src/main.cpp" ] && {
  echo "mpi_apps.sh: $HPCG_SRC does not look like HPCG (no src/main.cpp)" >&2
  exit 2
}
[ -n "$LULESH_SRC" ] && [ ! -f "$LULESH_SRC/lulesh.cc" ] && {
  echo "mpi_apps.sh: $LULESH_SRC does not look like LULESH (no lulesh.cc)" >&2
  exit 2
}
[ -n "$NPB_SRC" ] && [ ! -f "$NPB_SRC/IS/is.c" ] && {
  echo "mpi_apps.sh: $NPB_SRC does not look like NPB3.4-MPI (no IS/is.c)" >&2
  exit 2
}
if [ $MODE = netns ] && [ "$(id -u)" != 0 ]; then
  echo "mpi_apps.sh: --netns needs root (network namespaces)" >&2
  exit 2
fi

ROUNDS=${ROUNDS:-3}
RANKS=${RANKS:-1 2 4}
LULESH_RANKS=${LULESH_RANKS:-1 8}
if [ $MODE = netns ]; then
  RANKS=2
  LULESH_RANKS=""
fi
HPCG_N=${HPCG_N:-32}
HPCG_TIME=${HPCG_TIME:-10}
LULESH_S=${LULESH_S:-20}
LULESH_I=${LULESH_I:-100}
NPB_CLASS=${NPB_CLASS:-A}
if ! [[ $NPB_CLASS =~ ^[SWABC]$ ]]; then
  echo "mpi_apps.sh: NPB_CLASS=$NPB_CLASS is not one of S W A B C" >&2
  exit 2
fi
ONLY=${ONLY:-myrix,mpich,ompi}
LIMIT=${LIMIT:-600}
for v in ROUNDS HPCG_N HPCG_TIME LULESH_S LULESH_I; do
  if ! [[ ${!v} =~ ^[0-9]+$ ]] || [ "${!v}" -lt 1 ] || [ "${!v}" -gt 100000 ]; then
    echo "mpi_apps.sh: $v=${!v} is not a number from 1 to 100000" >&2
    exit 2
  fi
done

need=()
command -v mpicxx.mpich >/dev/null || need+=(mpich libmpich-dev)
command -v mpicxx.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev)
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null ||
    echo "mpi_apps.sh: apt-get install ${need[*]} failed" >&2
fi

W=$(mktemp -d)
. bench/lib/netns_pair.sh
cleanup() {
  [ $MODE = netns ] && netns_pair_down
  rm -rf "$W"
}
trap cleanup EXIT
[ $MODE = netns ] && netns_pair_up "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MYRIX=${CARGO_TARGET_DIR:-$PWD/target}/release/myrix # cargo builds there
want() { [[ ",$ONLY," == *",$1,"* ]]; }
declare -A why

if want myrix && ! cargo build --release -q -p myrix-cli -p myrix-mpiapi; then
  why[myrix]="cargo build --release failed"
fi
cxx() { # mpi -> the C++ wrapper command
  case $1 in
  myrix) echo "$MYRIX mpicxx" ;;
  mpich) echo mpicxx.mpich ;;
  ompi) echo mpicxx.openmpi ;;
  esac
}
cc() { # mpi -> the C wrapper command
  case $1 in
  myrix) echo "$MYRIX mpicc" ;;
  mpich) echo mpicc.mpich ;;
  ompi) echo mpicc.openmpi ;;
  esac
}
for m in myrix mpich ompi; do
  want $m || continue
  [ -n "${why[$m]:-}" ] && continue
  if [ -n "$HPCG_SRC" ] && ! $(cxx $m) -O3 -DHPCG_NO_OPENMP -I"$HPCG_SRC/src" \
    "$HPCG_SRC"/src/*.cpp -o "$W/hpcg_$m" 2>"$W/cc_$m.err"; then
    why[$m]="HPCG does not compile: $(grep -m1 error "$W/cc_$m.err")"
  fi
  if [ -n "$LULESH_SRC" ] && ! $(cxx $m) -O3 -DUSE_MPI=1 -DUSE_OMP=0 -I"$LULESH_SRC" \
    "$LULESH_SRC"/lulesh{,-comm,-viz,-util,-init}.cc -o "$W/lulesh_$m" 2>"$W/cc_$m.err"; then
    why[$m]="LULESH does not compile: $(grep -m1 error "$W/cc_$m.err")"
  fi
  if [ -n "$NPB_SRC" ]; then # NPB's own make, in a copy, with this MPI's wrapper
    cp -r "$NPB_SRC" "$W/npb_$m" && mkdir -p "$W/npb_$m/bin" &&
      printf 'MPICC = %s\nCLINK = $(MPICC)\nCFLAGS = -O3\nCLINKFLAGS = $(CFLAGS)\nCC = gcc\nBINDIR = ../bin\nRAND = randi8\n' \
        "$(cc $m)" >"$W/npb_$m/config/make.def"
    if ! make -C "$W/npb_$m" IS CLASS="$NPB_CLASS" >"$W/cc_$m.err" 2>&1; then
      why[$m]="NPB IS does not compile: $(grep -m1 -i error "$W/cc_$m.err")"
    fi
  fi
done

launch() { # mpi ranks program args...
  local m=$1 n=$2
  shift 2
  if [ $MODE = netns ]; then
    netns_pair_launch "$m" "$@"
    return
  fi
  case $m in
  myrix) timeout "$LIMIT" "$MYRIX" mpiexec -n "$n" "$@" ;;
  mpich) timeout "$LIMIT" mpiexec.mpich -n "$n" "$@" ;;
  ompi) timeout "$LIMIT" mpirun.openmpi -n "$n" --oversubscribe --mca btl self,vader "$@" ;;
  esac
}

: >"$W/res" # lines: app mpi ranks figure
bad=0
hpcg() { # mpi ranks
  local d="$W/run_hpcg_$1_$2"
  rm -rf "$d" && mkdir -p "$d" && cd "$d" || return 1
  printf 'HPCG benchmark input file\nmyrix bench/mpi_apps.sh\n%s %s %s\n%s\n' \
    "$HPCG_N" "$HPCG_N" "$HPCG_N" "$HPCG_TIME" >hpcg.dat
  launch "$1" "$2" "$W/hpcg_$1" >out.txt 2>&1
  local st=$? f
  f=$(grep -h "Final Summary::HPCG result is VALID with a GFLOP/s rating of=" HPCG-Benchmark*.txt 2>/dev/null |
    sed 's/.*=//')
  cd - >/dev/null || return 1
  if [ $st != 0 ] || [ -z "$f" ]; then
    echo "hpcg $1 -n $2: failed or not VALID (status $st): $(tail -3 "$d/out.txt" | tr '\n' ' ')" >&2
    bad=1
    return
  fi
  echo "hpcg $1 $2 $f" >>"$W/res"
}
lulesh() { # mpi ranks
  local s out
  s=$(awk -v n="$LULESH_S" -v p="$2" 'BEGIN { c = int(p ^ (1 / 3) + 0.5); if (c ^ 3 != p) exit 1;
    print int(n / c) }') || {
    echo "lulesh: $2 ranks is not a cube" >&2
    return
  }
  if ! out=$(launch "$1" "$2" "$W/lulesh_$1" -s "$s" -i "$LULESH_I" 2>&1); then
    echo "lulesh $1 -n $2 failed: $(echo "$out" | tail -3 | tr '\n' ' ')" >&2
    bad=1
    return
  fi
  local e fom diff
  e=$(echo "$out" | awk '/Final Origin Energy/ {print $NF}')
  fom=$(echo "$out" | awk '/^FOM/ {print $3}')
  diff=$(echo "$out" | awk '/MaxRelDiff/ {print $NF}')
  echo "lulesh $1 $2 $fom" >>"$W/res"
  echo "lulesh $1 $2 energy=$e maxreldiff=$diff" >>"$W/check"
}
npb_is() { # mpi ranks
  local out f
  out=$(launch "$1" "$2" "$W/npb_$1/bin/is.$NPB_CLASS.x" 2>&1)
  local st=$?
  f=$(echo "$out" | awk '/Mop\/s total/ {print $NF}')
  if [ $st != 0 ] || ! echo "$out" | grep -q "Verification *= *SUCCESSFUL"; then
    echo "npb is $1 -n $2: failed or not verified (status $st): $(echo "$out" | tail -3 | tr '\n' ' ')" >&2
    bad=1
    return
  fi
  echo "npb_is $1 $2 $f" >>"$W/res"
}

for r in $(seq "$ROUNDS"); do
  order=(myrix mpich ompi)
  k=$(((r - 1) % 3))
  order=("${order[@]:$k}" "${order[@]:0:$k}")
  for m in "${order[@]}"; do
    want $m && [ -z "${why[$m]:-}" ] || continue
    if [ -n "$HPCG_SRC" ]; then for n in $RANKS; do hpcg $m "$n"; done; fi
    if [ -n "$LULESH_SRC" ]; then for n in $LULESH_RANKS; do lulesh $m "$n"; done; fi
    if [ -n "$NPB_SRC" ]; then for n in $RANKS; do npb_is $m "$n"; done; fi
  done
  echo "round $r of $ROUNDS done" >&2
done

# LULESH's answer must not depend on the MPI or the rank count.
if [ -s "$W/check" ]; then
  energies=$(sed 's/.*energy=\([^ ]*\).*/\1/' "$W/check" | sort -u)
  if [ "$(echo "$energies" | wc -l)" != 1 ]; then
    echo "LULESH final origin energies differ: $(echo $energies)" >&2
    bad=1
  fi
fi

med() { # app mpi ranks
  awk -v a="$1" -v m="$2" -v n="$3" '$1 == a && $2 == m && $3 == n {print $4}' "$W/res" |
    sort -g | awk '{v[NR] = $1} END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2];
      else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {
  if (a == "n/a" || b == "n/a" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b }'; }
table() { # app ranks-list title
  echo "# $3"
  printf "%6s %10s %10s %10s %14s %12s\n" ranks myrix MPICH OpenMPI myrix/OpenMPI myrix/MPICH
  for n in $2; do
    local a b c
    a=$(med "$1" myrix "$n")
    b=$(med "$1" mpich "$n")
    c=$(med "$1" ompi "$n")
    printf "%6s %10s %10s %10s %14s %12s\n" "$n" "$a" "$b" "$c" "$(ratio "$a" "$c")" "$(ratio "$a" "$b")"
  done
}
mkdir -p target/bench
out=target/bench/mpi_apps$([ $MODE = netns ] && echo -netns)-$(date +%Y%m%d-%H%M%S).txt
{
  echo "# bench/mpi_apps.sh$([ $MODE = netns ] && echo " --netns"): medians of $ROUNDS interleaved rounds; ratio > 1: myrix faster"
  echo "# $(uname -n), $(nproc) CPUs (more ranks than CPUs: oversubscribed), load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  for m in myrix mpich ompi; do
    [ -n "${why[$m]:-}" ] && echo "# $m: n/a: ${why[$m]}"
  done
  if [ -n "$HPCG_SRC" ]; then
    table hpcg "$RANKS" "HPCG GFLOP/s, ${HPCG_N}^3 per rank, ${HPCG_TIME} s ($([ $MODE = netns ] && echo 'one rank per namespace' || echo 'one host'))"
  fi
  if [ -n "$LULESH_SRC" ] && [ -n "$LULESH_RANKS" ]; then
    echo
    table lulesh "$LULESH_RANKS" "LULESH FOM, zones/s, ${LULESH_S}^3 elements in all, $LULESH_I iterations"
    echo "# LULESH final origin energy under every MPI and rank count: $(sed 's/.*energy=\([^ ]*\).*/\1/' "$W/check" | sort -u | tr '\n' ' ')"
  fi
  if [ -n "$NPB_SRC" ]; then
    echo
    table npb_is "$RANKS" "NPB IS class $NPB_CLASS, Mop/s total (every run verified)"
  fi
} | tee "$out"
echo "written to $out" >&2
exit $bad
