#!/usr/bin/env bash
# Startup time and memory per rank against job size, myrix beside MPICH and Open MPI:
# bench/mpi/startup.c built with each MPI's mpicc, run under each one's launcher on this
# host at RANKS ranks (more ranks than CPUs are oversubscribed), ROUNDS interleaved
# rounds (the order rotates), medians. Columns (see startup.c): the slowest rank's
# MPI_Init in ms; the median rank's resident memory (VmRSS, KiB; shared pages it
# touched count) after MPI_Init and after every rank talked to every other; the time
# from the first rank entering MPI_Init to the last one done talking to all (ms); and
# the launcher's whole run, start to exit (ms).
#
#   bash bench/mpi_startup.sh
#   RANKS="1 2 4 8 16 32" ROUNDS=5 ONLY=myrix,ompi bash bench/mpi_startup.sh
set -uo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
-h | --help)
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
  ;;
"") ;;
*)
  echo "usage: bash bench/mpi_startup.sh   (RANKS, ROUNDS, ONLY in the environment)" >&2
  exit 2
  ;;
esac
RANKS=${RANKS:-1 2 4 8 16}
ROUNDS=${ROUNDS:-3}
ONLY=${ONLY:-myrix,mpich,ompi}
LIMIT=${LIMIT:-300}
for n in $RANKS $ROUNDS; do
  if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 256 ]; then
    echo "mpi_startup.sh: '$n' in RANKS/ROUNDS is not a number from 1 to 256" >&2
    exit 2
  fi
done
need=()
command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
command -v mpicc.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev)
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null ||
    echo "mpi_startup.sh: apt-get install ${need[*]} failed" >&2
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MYRIX=$PWD/target/release/myrix
want() { [[ ",$ONLY," == *",$1,"* ]]; }
declare -A why
if want myrix && ! cargo build --release -q -p myrix-cli -p myrix-mpiapi; then
  why[myrix]="cargo build --release failed"
fi
for m in myrix mpich ompi; do
  want $m || { why[$m]="left out (ONLY=$ONLY)"; continue; }
  [ -n "${why[$m]:-}" ] && continue
  case $m in
  myrix) cc=("$MYRIX" mpicc) ;;
  mpich) cc=(mpicc.mpich) ;;
  ompi) cc=(mpicc.openmpi) ;;
  esac
  "${cc[@]}" -O2 -o "$W/startup_$m" bench/mpi/startup.c 2>"$W/cc.err" ||
    why[$m]="does not compile: $(head -1 "$W/cc.err")"
done
launch() { # mpi n
  case $1 in
  myrix) timeout "$LIMIT" "$MYRIX" mpiexec -n "$2" "$W/startup_$1" -q ;;
  mpich) timeout "$LIMIT" mpiexec.mpich -n "$2" "$W/startup_$1" -q ;;
  ompi) timeout "$LIMIT" mpirun.openmpi -n "$2" --oversubscribe --mca btl self,vader "$W/startup_$1" -q ;;
  esac
}
: >"$W/res" # mpi n init rss0 rss1 rss2 rss2max allpairs wall
for r in $(seq "$ROUNDS"); do
  order=(myrix mpich ompi)
  k=$(((r - 1) % 3))
  order=("${order[@]:$k}" "${order[@]:0:$k}")
  for m in "${order[@]}"; do
    [ -n "${why[$m]:-}" ] && continue
    for n in $RANKS; do
      t0=$(date +%s%N)
      if out=$(launch $m "$n" 2>>"$W/err_$m"); then
        t1=$(date +%s%N)
        echo "$out" | awk -v m=$m -v w=$(((t1 - t0) / 1000000)) 'NF == 7 {print m, $0, w}' >>"$W/res"
      else
        echo "round $r: $m -n $n failed: $(tail -1 "$W/err_$m")" >&2
      fi
    done
  done
  echo "round $r of $ROUNDS done" >&2
done
med() { # mpi n column
  awk -v m="$1" -v n="$2" -v c="$3" '$1 == m && $2 == n {print $c}' "$W/res" | sort -g |
    awk '{v[NR] = $1} END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2];
      else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
mkdir -p target/bench
out=target/bench/mpi_startup-$(date +%Y%m%d-%H%M%S).txt
{
  echo "# bench/mpi_startup.sh: medians of $ROUNDS interleaved rounds on one host"
  echo "# $(uname -n), $(nproc) CPUs (more ranks than CPUs: oversubscribed), load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  for m in myrix mpich ompi; do [ -n "${why[$m]:-}" ] && echo "# $m: n/a: ${why[$m]}"; done
  printf "%-6s %5s %9s %10s %12s %10s %10s\n" MPI ranks init_ms rss_init_KiB rss_allpairs_KiB allpairs_ms launch_ms
  for m in myrix mpich ompi; do
    [ -n "${why[$m]:-}" ] && continue
    for n in $RANKS; do
      printf "%-6s %5s %9s %10s %12s %10s %10s\n" $m "$n" "$(med $m "$n" 3)" "$(med $m "$n" 4)" \
        "$(med $m "$n" 6)" "$(med $m "$n" 8)" "$(med $m "$n" 9)"
    done
  done
} | tee "$out"
echo "written to $out" >&2
