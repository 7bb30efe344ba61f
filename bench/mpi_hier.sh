#!/usr/bin/env bash
# myrix MPI's collectives by levels (crates/mpiapi/src/coll_hier/) against the flat
# ones (MYRIX_MPI_COLL_HIER=0) on ranks in two network namespaces (two "nodes"),
# and the leaders' allreduce by Rabenseifner against their ordinary allreduce
# (MYRIX_MPI_HIER_RSA_MIN=1024m), alltoall by levels at every size against the flat
# one (VARIANTS="flat levels rsa_off a2a_all" by default; also rsa_all: the
# leaders' allreduce by Rabenseifner at every size; move_all: gather, scatter and
# allgather by levels at every size): bench/mpi/coll.c under `myrix mpiexec --netns A,B -n NP` (rank i in
# namespace i mod 2), ROUNDS rounds (at least 3) each running every variant in turn
# (the order rotates every round); each figure is the median over the rounds of the
# program's own medians, with the spread (min–max over the rounds); ratio: the
# variant's median over flat's. Needs root; makes namespaces NS_A and NS_B (default
# myrix-h<pid>a/b, a clean veth pair, no loss) and deletes them at the end.
#
#   bash bench/mpi_hier.sh
#   ROUNDS=5 NP=4 SIZES=8,65536 TESTS=allreduce,bcast bash bench/mpi_hier.sh
set -uo pipefail

cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
[ "$ROUNDS" -lt 3 ] && ROUNDS=3
NP=${NP:-4}
SIZES=${SIZES:-8,1024,65536,1048576}
TESTS=${TESTS:-allreduce,reduce,bcast,gather,scatter,allgather,alltoall,barrier}
COLLARGS=${COLLARGS:--i 200 -r 3}
NS_A=${NS_A:-myrix-h$$a}
NS_B=${NS_B:-myrix-h$$b}
VA=mh$$a VB=mh$$b
MYRIX=${MYRIX:-${CARGO_TARGET_DIR:-$PWD/target}/release/myrix}
W=$(mktemp -d)
cleanup() {
  ip netns del "$NS_A" 2>/dev/null
  ip netns del "$NS_B" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
ip netns add "$NS_A" && ip netns add "$NS_B" &&
  ip link add "$VA" type veth peer name "$VB" &&
  ip link set "$VA" netns "$NS_A" && ip link set "$VB" netns "$NS_B" &&
  ip -n "$NS_A" addr add 10.125.0.1/24 dev "$VA" && ip -n "$NS_B" addr add 10.125.0.2/24 dev "$VB" &&
  ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up &&
  ip -n "$NS_A" link set "$VA" up && ip -n "$NS_B" link set "$VB" up || exit 1
"$MYRIX" mpicc -O2 -o "$W/coll" bench/mpi/coll.c || exit 1
variants=(${VARIANTS:-flat levels rsa_off a2a_all})
envof() {
  case $1 in
  flat) echo MYRIX_MPI_COLL_HIER=0 ;;
  levels) echo MYRIX_MPI_COLL_HIER=1 ;;
  rsa_off) echo MYRIX_MPI_HIER_RSA_MIN=1024m ;;
  a2a_all) echo MYRIX_MPI_HIER_ALLTOALL_MAX=1024m ;;
  rsa_all) echo MYRIX_MPI_HIER_RSA_MIN=1 ;;
  move_all) echo MYRIX_MPI_HIER_MOVE_MAX=1024m ;;
  esac
}
testsof() {
  case $1 in
  rsa_off) echo allreduce ;;
  a2a_all) echo alltoall ;;
  rsa_all) echo allreduce ;;
  move_all) echo gather,scatter,allgather ;;
  *) echo "$TESTS" ;;
  esac
}
for r in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((${#variants[@]} - 1))); do
    v=${variants[$(((k + r) % ${#variants[@]}))]}
    env $(envof "$v") timeout 600 "$MYRIX" mpiexec --netns "$NS_A,$NS_B" -n "$NP" "$W/coll" \
      -t "$(testsof "$v")" -s "$SIZES" $COLLARGS >"$W/out" 2>"$W/err" ||
      echo "$v round $r failed: $(head -3 "$W/err")" >&2
    [ -n "${DEBUG:-}" ] && cat "$W/out" "$W/err" >&2
    grep -v "^#" "$W/out" | sed "s/^/$v $r /" >>"$W/all"
  done
done
echo "# $(date -u '+%F %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $NP ranks in 2 namespaces, coll $COLLARGS, $ROUNDS rounds"
echo "# test bytes variant median_us (min-max over rounds) ratio_to_flat"
awk '
function med(s, a, n, i, j, t) {
  n = split(s, a, " ")
  for (i = 1; i <= n; i++)
    for (j = i + 1; j <= n; j++)
      if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  lo = a[1]; hi = a[n]
  return a[int((n + 1) / 2)]
}
{ key = $3 " " $4; vals[key, $1] = vals[key, $1] " " $5; keys[key] = 1; seen[$1] = 1 }
END {
  for (key in keys) for (v in seen) if ((key, v) in vals) {
    f = ((key, "flat") in vals) ? med(vals[key, "flat"]) : 0
    m = med(vals[key, v])
    printf "%s %s %.1f (%.1f-%.1f) %s\n", key, v, m, lo, hi, (f > 0 ? sprintf("%.2f", m / f) : "-")
  }
}' "$W/all" | sort -k1,1 -k2,2n -k3,3
