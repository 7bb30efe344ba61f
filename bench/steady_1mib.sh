#!/usr/bin/env bash
# Issue 20's steadiness check: 1 MiB ping-pong over shared memory, RUNS runs (default
# 10) of myrix interleaved with Open MPI's, each run a fresh pair of processes. Prints
# every run's one-way latency, then myrix's slowest/fastest ratio (target <= 1.5) and
# myrix's slowest run against Open MPI's median (target <= 1.0).
#   bash bench/steady_1mib.sh            # RUNS=20 bash bench/steady_1mib.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10}
ITERS=${ITERS:-300}
command -v mpicc.openmpi >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev >/dev/null
cargo build --release -q -p myrix-cli || exit 1
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mpicc.openmpi -O2 -o "$W/pp" bench/mpi_pingpong.c
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for r in $(seq "$RUNS"); do
  m=$(target/release/myrix bench pingpong --transport shm --start 1048576 --end 1048576 \
        --iterations $((ITERS * 10)) --warmup 100 --format json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["latency_us"])')
  o=$(mpirun.openmpi -np 2 "$W/pp" 1048576 "$ITERS" 10 | awk '{print $2}')
  echo "run $r: myrix $m us, Open MPI $o us"
  echo "$m $o" >> "$W/res"
done
python3 - "$W/res" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
m = [a for a, _ in rows]; o = [b for _, b in rows]
print(f"myrix 1 MiB one way: fastest {min(m):.1f} us, slowest {max(m):.1f} us, median {statistics.median(m):.1f} us")
print(f"Open MPI 1 MiB one way: median {statistics.median(o):.1f} us (fastest {min(o):.1f}, slowest {max(o):.1f})")
print(f"myrix slowest / fastest        = {max(m) / min(m):.2f}  (target <= 1.5)")
print(f"myrix slowest / Open MPI median = {max(m) / statistics.median(o):.2f}  (target <= 1.0)")
PY
