#!/usr/bin/env bash
# Issue 20's steadiness check: 1 MiB ping-pong over shared memory, RUNS runs (default
# 10) of myrix interleaved with Open MPI's, each run a fresh pair of processes, both
# libraries pinned one process per core (myrix with --cpu 0,1, Open MPI with its own
# --bind-to core). Before each myrix run a probe times a cache line bounced between the
# two CPUs: on a KVM guest the host sometimes runs the two vCPUs on cores that share no
# cache, and a large copy between them then takes twice as long (docs/results-mx.md).
# Prints every run, then the verdict lines:
#   myrix slowest / fastest          (target <= 1.5)
#   myrix slowest / Open MPI median  (target <= 1.0)
# and the same within each state of the probe, with the load average before and after.
#   bash bench/steady_1mib.sh            # RUNS=20 ITERS=300 bash bench/steady_1mib.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10}
ITERS=${ITERS:-300}
command -v mpicc.openmpi >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev >/dev/null
cargo build --release -q -p myrix-cli || exit 1
BIN=${CARGO_TARGET_DIR:-target}/release/myrix
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mpicc.openmpi -O2 -o "$W/pp" bench/mpi_pingpong.c || exit 1
cc -O2 -pthread -o "$W/probe" bench/c2c_probe.c || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$RUNS"); do
  c=$("$W/probe" 0 1 | awk '{print $2}')
  # Lengths above 64 KiB run a tenth of --iterations and --warmup: ITERS timed round trips.
  # The JSON is parsed after the run: a parser started beside it in a pipeline would
  # take a core from the pinned ping-pong while it measures.
  j=$("$BIN" bench pingpong --transport shm --start 1048576 --end 1048576 \
        --iterations $((ITERS * 10)) --warmup 100 --cpu 0,1 --format json)
  m=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])[0]["latency_us"])' "$j")
  o=$(mpirun.openmpi -np 2 --bind-to core "$W/pp" 1048576 "$ITERS" 10 | awk '{print $2}')
  echo "run $r: cache line between CPUs 0 and 1 $c ns, myrix $m us, Open MPI $o us"
  echo "$m $o $c" >> "$W/res"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$W/res" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
if any(x != x for r in rows for x in r):
    sys.exit("a run printed no figure")

def verdict(label, rows, pad="  "):
    m = [a for a, _, _ in rows]; o = [b for _, b, _ in rows]
    omed = statistics.median(o)
    r1, r2 = max(m) / min(m), max(m) / omed
    print(f"{label}: {len(rows)} runs")
    print(f"{pad}myrix 1 MiB one way: fastest {min(m):.1f} us, median {statistics.median(m):.1f} us, slowest {max(m):.1f} us")
    print(f"{pad}Open MPI 1 MiB one way: median {omed:.1f} us (fastest {min(o):.1f}, slowest {max(o):.1f})")
    print(f"{pad}myrix slowest / fastest         = {r1:.2f}  (target <= 1.5): {'PASS' if r1 <= 1.5 else 'FAIL'}")
    print(f"{pad}myrix slowest / Open MPI median = {r2:.2f}  (target <= 1.0): {'PASS' if r2 <= 1.0 else 'FAIL'}")

verdict("all runs", rows)
near = [r for r in rows if r[2] < 100]
far = [r for r in rows if r[2] >= 100]
if near and far:
    print("the host moved the vCPUs during the script; the same verdict per placement:")
    verdict("  cache line < 100 ns (cores sharing a cache)", near, "    ")
    verdict("  cache line >= 100 ns (cores sharing none)", far, "    ")
PY
