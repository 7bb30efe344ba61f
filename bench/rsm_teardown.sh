#!/usr/bin/env bash
# How long a 2-rank MPI job across two lossy namespaces takes, with and without the RSM
# bye (docs/rsm.md "Leaving: the bye"): the two endings interleaved run by run in one
# build, whole-job wall time. Usage (as root, namespaces first):
#   MYRIX_NETNS_A=ns-teardown-a MYRIX_NETNS_B=ns-teardown-b MYRIX_NETNS_VA=td-va \
#     MYRIX_NETNS_VB=td-vb MYRIX_NETNS_NET=10.79.7 bash .ci/netns.sh up
#   myrix mpicc -O1 crates/mpiapi/tests/c/rma.c -o /tmp/rma
#   MYRIX=target/debug/myrix bash bench/rsm_teardown.sh /tmp/rma 15
# and `.ci/netns.sh down` with the same names after.
prog=$1; n=${2:-10}
M=${MYRIX:-target/debug/myrix}
NS=${NS:-ns-teardown-a,ns-teardown-b}
out=$(mktemp)
for i in $(seq 1 "$n"); do
  for bye in 0 1; do
    s=$(date +%s%N)
    MYRIX_RSM_BYE=$bye timeout 120 "$M" mpiexec --netns "$NS" -n 2 "$prog" >"$out" 2>&1
    rc=$?
    e=$(date +%s%N)
    echo "$prog bye=$bye run=$i rc=$rc ok=$(grep -c ' ok ' "$out") ms=$(( (e - s) / 1000000 ))"
  done
done
rm -f "$out"
