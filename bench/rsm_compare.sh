#!/usr/bin/env bash
# myrix RSM (shm controller) beside the machine's floor and the one-sided peers, in the
# same run, interleaved: 8-byte put + completion and the put-based ping-pong (one way).
#   - floor: bench/shm_floor.c, two processes on one shared mapping, atomic flags;
#   - Open MPI one-sided: bench/mpi_put.c (MPI_Put + MPI_Win_flush; lock_all);
#   - MPICH one-sided: the same source, put + flush only (its ping-pong by polling the
#     window does not progress on Debian's MPICH 4.0 and is skipped);
#   - OpenSHMEM (Open MPI's oshmem): bench/shmem_put.c (shmem_putmem + shmem_quiet).
# Prints each run's figures, then medians of RUNS runs (default 5) and myrix's ratios.
#   bash bench/rsm_compare.sh        # RUNS=3 LEN=64 bash bench/rsm_compare.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
LEN=${LEN:-8}
ITERS=${ITERS:-100000}

need=()
command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
command -v oshcc >/dev/null || need+=(openmpi-bin libopenmpi-dev)
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi
cargo build --release -q -p myrix-cli || exit 1
MYRIX=$PWD/target/release/myrix
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
gcc -O2 -o "$W/floor" bench/shm_floor.c
mpicc.openmpi -O2 -o "$W/put_ompi" bench/mpi_put.c
mpicc.mpich -O2 -o "$W/put_mpich" bench/mpi_put.c
oshcc -O2 -o "$W/shmem" bench/shmem_put.c 2>/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

median() { sort -g | awk '{a[NR]=$1} END {print (NR ? (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2) : "nan")}'; }
: > "$W/res"
for r in $(seq "$RUNS"); do
  f=$("$W/floor" "$ITERS")
  echo "floor pp $f" >> "$W/res"
  j=$("$MYRIX" bench rsm --start "$LEN" --end "$LEN" --iterations "$ITERS" --warmup $((ITERS / 10)) --format json)
  mp=$(echo "$j" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["pingpong_us"])')
  mu=$(echo "$j" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["put_us"])')
  echo "myrix pp $mp" >> "$W/res"; echo "myrix put $mu" >> "$W/res"
  read -r ou op < <(timeout 120 mpirun.openmpi -np 2 "$W/put_ompi" "$LEN" "$ITERS" 2>/dev/null)
  echo "ompi pp $op" >> "$W/res"; echo "ompi put $ou" >> "$W/res"
  read -r hu _ < <(timeout 120 mpiexec.mpich -n 2 "$W/put_mpich" "$LEN" $((ITERS / 100)) put 2>/dev/null)
  echo "mpich put $hu" >> "$W/res"
  if [ -x "$W/shmem" ]; then
    read -r su sp < <(timeout 120 oshrun -np 2 "$W/shmem" "$LEN" "$ITERS" 2>/dev/null)
    echo "shmem pp ${sp:-nan}" >> "$W/res"; echo "shmem put ${su:-nan}" >> "$W/res"
  fi
  echo "run $r: floor $f  myrix pp $mp put $mu  ompi pp $op put $ou  mpich put $hu  shmem pp ${sp:-nan} put ${su:-nan}"
done
m() { grep "^$1 $2 " "$W/res" | awk '{print $3}' | grep -v nan | median; }
echo "# $LEN B one-sided on shared memory, medians of $RUNS runs (us; one way for ping-pong)"
printf "%-22s %10s %10s\n" who pingpong put+complete
for w in floor myrix ompi shmem mpich; do printf "%-22s %10s %10s\n" "$w" "$(m $w pp)" "$(m $w put)"; done
python3 - "$(m myrix pp)" "$(m floor pp)" "$(m myrix put)" "$(m ompi put)" "$(m ompi pp)" <<'PY'
import sys
mp, fp, mu, ou, op = map(float, sys.argv[1:])
print(f"myrix ping-pong / floor        = {mp / fp:.2f}  (target <= 1.2)")
print(f"myrix put / Open MPI put+flush = {mu / ou:.2f}  (target <= 1.0)")
print(f"myrix ping-pong / Open MPI     = {mp / op:.2f}")
PY
