#!/usr/bin/env bash
# Where a large MPI message's wall time goes across two namespaces (issue 23, "netbw"):
# records the 1 MiB ping-pong of myrix (bench/mpi/pingpong.c, `-s SIZE -i ITERS -w 2
# -r 1`) with `perf record -a` on the kernel's tracepoints (system calls that send and
# receive, context switches) and splits each rank's time in its MPI calls into:
# sending system calls, receiving ones that found data, receiving ones that found
# nothing (EAGAIN: polling), yields and sleeps, time off the CPU (preempted or asleep),
# and the rest (user space: the library's work). Prints also the datagrams and batches
# sent per message. Tracepoints cost a little per event: the totals are a breakdown,
# not a time to quote. Needs root and perf; builds nothing (LIB as bench/netbw.sh).
#   bash bench/netbw_trace.sh
#   ENVS="MYRIX_MPI_NET_ACK_IDLE_US=0" NET=eth bash bench/netbw_trace.sh
set -uo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || {
  echo "netbw_trace.sh: needs root (network namespaces, perf -a)" >&2
  exit 2
}
SIZE=${SIZE:-1048576}
ITERS=${ITERS:-50}
NET=${NET:-udp}
ENVS=${ENVS:-}
LIMIT=${LIMIT:-60}
LIB=${LIB:-${CARGO_TARGET_DIR:-$PWD/target}/release}
[ -f "$LIB/libmpi_abi.so" ] || {
  echo "netbw_trace.sh: no $LIB/libmpi_abi.so (cargo build --release -p myrix-mpiapi)" >&2
  exit 2
}
W=$(mktemp -d)
. bench/lib/netns_pair.sh
trap 'netns_pair_down; rm -rf "$W"' EXIT
# A name of its own, so the analysis finds the ranks' threads among the machine's.
cc -O2 -o "$W/nbwtrace" bench/mpi/pingpong.c -Icrates/mpiapi/include -L"$LIB" \
  -Wl,-rpath,"$LIB" -lmpi_abi || exit 1
netns_pair_up "$W" || exit 1
echo "# bench/netbw_trace.sh: $SIZE B ping-pong over $NET, $ITERS round trips; lib $LIB${ENVS:+, $ENVS}"
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
ev=(-e sched:sched_switch)
for s in sendmsg sendto recvmsg recvfrom sched_yield clock_nanosleep sendmmsg; do
  ev+=(-e "syscalls:sys_enter_$s" -e "syscalls:sys_exit_$s")
done
perf record -q -a -o "$W/perf.data" "${ev[@]}" -- \
  env MYRIX_MPI_NET="$NET" $ENVS bash -c '. bench/lib/netns_pair.sh; NSSSH='"$W"'/nsssh
    NSP_A='"$NSP_A"' NSP_B='"$NSP_B"' netns_pair_launch myrix "$@"' sh \
  "$W/nbwtrace" -s "$SIZE" -i "$ITERS" -w 2 -r 1 | grep -v '^#'
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
perf script -i "$W/perf.data" -F comm,tid,time,event,trace 2>/dev/null |
  python3 bench/netbw_trace.py "$((2 * (ITERS + 2)))"
