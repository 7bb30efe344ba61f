#!/usr/bin/env bash
# Start-up of a job across two hosts: wall time of `hello -n 4` (two ranks in each of
# two network namespaces), started by `myrix mpiexec --hosts` (ssh to the second,
# PMI over TCP) and by MPICH's `mpiexec.hydra -hosts` (its own ssh launcher and
# hydra_pmi_proxy), interleaved; `myrix mpiexec --netns` (no ssh) alongside as the
# floor. Root only: makes namespaces ns-hosts-bench-a/b (clean veth, 10.82.0.0/24)
# and an sshd in b on port 22222 with throw-away keys, and removes them at the end.
#   bench/mpiexec_hosts.sh [ROUNDS]     (default 11; run under /work/contract/quiet)
# Prints each run and the median, min and max per launcher in milliseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=${1:-11}
M=${MYRIX:-target/debug/myrix}
[ -x "$M" ] || { echo "build myrix first ($M)" >&2; exit 1; }
M=$(realpath "$M")
A=ns-hosts-bench-a B=ns-hosts-bench-b NET=10.82.0
D=$(mktemp -d /tmp/mpiexec-hosts-bench.XXXXXX)
cleanup() {
  [ -f "$D/sshd.pid" ] && kill "$(cat "$D/sshd.pid")" 2>/dev/null || true
  MYRIX_NETNS_A=$A MYRIX_NETNS_B=$B bash "$ROOT/.ci/netns.sh" down
  rm -rf "$D"
}
trap cleanup EXIT
MYRIX_NETNS_A=$A MYRIX_NETNS_B=$B MYRIX_NETNS_VA=vhba MYRIX_NETNS_VB=vhbb MYRIX_NETNS_NET=$NET \
  MYRIX_NETNS_CLEAN=1 bash .ci/netns.sh up
ssh-keygen -q -t ed25519 -N '' -f "$D/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$D/user_key"
cp "$D/user_key.pub" "$D/authorized_keys"
cat >"$D/sshd_config" <<CONF
Port 22222
ListenAddress $NET.2
HostKey $D/host_key
PidFile $D/sshd.pid
AuthorizedKeysFile $D/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel ERROR
CONF
mkdir -p /run/sshd
ip netns exec $B /usr/sbin/sshd -f "$D/sshd_config"
SSH="ssh -F /dev/null -p 22222 -i $D/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
printf '#!/bin/sh\nexec %s "$@"\n' "$SSH" >"$D/ssh"
chmod +x "$D/ssh"
export MYRIX_SSH="$SSH"
unset LD_LIBRARY_PATH
"$M" mpicc -O1 -o "$D/hello" crates/mpiapi/tests/c/hello.c
cd "$D"
for _ in $(seq 50); do ip netns exec $A ./ssh -o BatchMode=yes $NET.2 true 2>/dev/null && break; sleep 0.2; done
t() {
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}
for _ in $(seq "$ROUNDS"); do
  echo "myrix-hosts $(t ip netns exec $A "$M" mpiexec --hosts $NET.1,$NET.2 -n 4 ./hello)"
  echo "hydra-hosts $(t ip netns exec $A mpiexec.hydra -launcher ssh -launcher-exec "$D/ssh" -hosts $NET.1,$NET.2 -n 4 ./hello)"
  echo "myrix-netns $(t "$M" mpiexec --netns $A,$B -n 4 ./hello)"
done | tee "$D/runs"
for k in myrix-hosts hydra-hosts myrix-netns; do
  grep "^$k " "$D/runs" | awk '{print $2}' | sort -n |
    awk -v k=$k '{a[NR]=$1} END {printf "%s median %d ms (min %d, max %d, %d runs)\n", k, a[int((NR+1)/2)], a[1], a[NR], NR}'
done
