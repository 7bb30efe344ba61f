#!/usr/bin/env bash
# myrix MX beside MPICH and Open MPI (shared memory) and beside bare spin-polled UDP and
# raw-Ethernet ping-pongs (two network namespaces joined by a veth pair), all in the
# same run.
# Prints medians of RUNS runs (default 5) and myrix's ratios. Needs root (namespaces)
# and installs the Debian packages it needs.
#
#   bash bench/compare.sh            # RUNS=3 bash bench/compare.sh for a quicker look
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}

need=()
command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
command -v mpicc.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev)
command -v gcc >/dev/null || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
fi

cargo build --release -q -p myrix-cli
MYRIX=$PWD/target/release/myrix
W=$(mktemp -d)
cleanup() {
  ip netns del myrix-ca 2>/dev/null || true
  ip netns del myrix-cb 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
mpicc.mpich -O2 -o "$W/pp_mpich" bench/mpi_pingpong.c
mpicc.openmpi -O2 -o "$W/pp_ompi" bench/mpi_pingpong.c
gcc -O2 -o "$W/udp_pp" bench/udp_pingpong.c
gcc -O2 -o "$W/eth_pp" bench/eth_pingpong.c

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
iters() { if [ "$1" -gt 65536 ]; then echo 200; elif [ "$1" -gt 4096 ]; then echo 2000; else echo 20000; fi; }
myrix_lat() { # transport len [client prefix...]
  local it; it=$(iters "$2")
  [ "$2" -gt 65536 ] && it=$((it * 10))  # myrix runs a tenth above 64 KiB
  "$MYRIX" bench pingpong --transport "$1" --start "$2" --end "$2" --iterations "$it" \
    --warmup $((it / 10)) --cpu 0,1 --format json |
    sed 's/.*"latency_us":\([0-9.e+-]*\).*/\1/'
}

echo "# shared memory, one-way latency (us), median of $RUNS runs; ratio = peer / myrix (>1: myrix faster)"
printf "%9s %10s %10s %10s %12s %12s\n" length myrix MPICH OpenMPI MPICH/myrix OMPI/myrix
for len in 8 1024 65536 1048576; do
  it=$(iters $len)
  m=$(for _ in $(seq "$RUNS"); do myrix_lat shm $len; done | median)
  a=$(for _ in $(seq "$RUNS"); do
    mpirun.mpich -n 2 -bind-to core "$W/pp_mpich" $len $it $((it / 10)) | awk '{print $2}'
  done | median)
  b=$(for _ in $(seq "$RUNS"); do
    mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 --bind-to core \
      --mca btl self,vader "$W/pp_ompi" $len $it $((it / 10)) 2>/dev/null | awk '{print $2}'
  done | median)
  awk -v l=$len -v m="$m" -v a="$a" -v b="$b" \
    'BEGIN {printf "%9d %10.3f %10.3f %10.3f %12.2f %12.2f\n", l, m, a, b, a/m, b/m}'
done
echo "# (bandwidth at 1 MiB = 1 MiB / one-way latency of the same runs)"

# Two clean namespaces (no impairment) for the UDP comparison.
ip netns add myrix-ca
ip netns add myrix-cb
ip link add myrix-cva type veth peer name myrix-cvb
ip link set myrix-cva netns myrix-ca
ip link set myrix-cvb netns myrix-cb
ip -n myrix-ca addr add 10.78.0.1/24 dev myrix-cva
ip -n myrix-cb addr add 10.78.0.2/24 dev myrix-cvb
for ns in myrix-ca myrix-cb; do ip -n $ns link set lo up; done
ip -n myrix-ca link set myrix-cva up
ip -n myrix-cb link set myrix-cvb up

echo "# UDP between two namespaces, 8 B one-way latency (us), median of $RUNS runs"
c=$(for i in $(seq "$RUNS"); do
  ip netns exec myrix-ca taskset -c 0 "$W/udp_pp" -s 10.78.0.1 $((7100 + i)) &
  sleep 0.2
  ip netns exec myrix-cb taskset -c 1 "$W/udp_pp" -c 10.78.0.1 $((7100 + i)) 8 50000 | awk '{print $2}'
  wait
done | median)
m=$(for _ in $(seq "$RUNS"); do
  out=$W/srv.out
  ip netns exec myrix-ca "$MYRIX" bench pingpong --server --transport udp \
    --listen 10.78.0.1:0 --cpu 0,1 >"$out" &
  for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
  ip netns exec myrix-cb "$MYRIX" bench pingpong --client "$(head -1 "$out")" \
    --transport udp --start 8 --end 8 --iterations 50000 --warmup 5000 --cpu 0,1 \
    --format json | sed 's/.*"latency_us":\([0-9.e+-]*\).*/\1/'
  wait
done | median)
awk -v c="$c" -v m="$m" 'BEGIN {printf "bare C UDP %.3f  myrix MX/UDP %.3f  myrix/bare %.2f (target <= 1.3)\n", c, m, m/c}'

echo "# raw Ethernet (EtherType 0x86DF, AF_PACKET) between the same namespaces, 8 B one-way latency (us), median of $RUNS runs"
mac=$(ip netns exec myrix-ca cat /sys/class/net/myrix-cva/address)
c=$(for i in $(seq "$RUNS"); do
  # The client's last frame stops the server; the timeout only guards against its loss.
  timeout 60 ip netns exec myrix-ca taskset -c 0 "$W/eth_pp" -s myrix-cva &
  sleep 0.2
  ip netns exec myrix-cb taskset -c 1 "$W/eth_pp" -c myrix-cvb "$mac" 8 50000 | awk '{print $2}'
  wait
done | median)
m=$(for _ in $(seq "$RUNS"); do
  out=$W/srv.out
  ip netns exec myrix-ca "$MYRIX" bench pingpong --server --transport eth \
    --interface myrix-cva --cpu 0,1 >"$out" &
  for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
  ip netns exec myrix-cb "$MYRIX" bench pingpong --client "$(head -1 "$out")" \
    --transport eth --interface myrix-cvb --start 8 --end 8 --iterations 50000 \
    --warmup 5000 --cpu 0,1 --format json | sed 's/.*"latency_us":\([0-9.e+-]*\).*/\1/'
  wait
done | median)
awk -v c="$c" -v m="$m" 'BEGIN {printf "bare C raw Ethernet %.3f  myrix MX/eth %.3f  myrix/bare %.2f\n", c, m, m/c}'
