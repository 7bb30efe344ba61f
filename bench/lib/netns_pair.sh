# Two network namespaces as two hosts, for the bench scripts (source it; needs root):
# $NSP_A 10.79.0.1 and $NSP_B 10.79.0.2, joined by a clean veth pair named myrixv0
# on both sides (no loss injected: .ci/netns.sh shows how). Launchers start the remote
# rank through ssh; netns_pair_up writes an ssh stand-in, $NSSSH, that runs the command
# in the other namespace, each namespace under its own host name (unshare --uts) so no
# MPI takes them for one node:
#   MPICH     mpiexec.mpich -launcher ssh -launcher-exec $NSSSH -iface myrixv0
#             -hosts 10.79.0.1,10.79.0.2 -n 2, UCX over TCP (UCX_TLS=tcp,self)
#   Open MPI  mpirun.openmpi -n 2 --host 10.79.0.1,10.79.0.2 --mca plm_rsh_agent $NSSSH
#             --mca btl self,tcp --mca pml ob1 --bind-to none (btl and oob on myrixv0;
#             without --bind-to none both "nodes" bind their rank to core 0 of this one
#             machine, and every message waits out a scheduler slice: 4 ms)
#   myrix     the myrix-built program under the same hydra command (the library speaks
#             PMI-1 to hydra)
# The launchers run in $NSP_A. The names are the sourcing script's own (its process id:
# mxpa<pid>, mxpb<pid>; the veth ends are created as mxpxa<pid>/mxpxb<pid>), so two runs
# at once, or CI's namespaces, never collide; NSP_A and NSP_B in the environment
# override them. NSP_MTU=N sets the veth's MTU on both ends (default: the kernel's 1500).
NSP_A=${NSP_A:-mxpa$$}
NSP_B=${NSP_B:-mxpb$$}

netns_pair_down() {
  ip netns del "$NSP_A" 2>/dev/null
  ip netns del "$NSP_B" 2>/dev/null
  return 0
}

netns_pair_up() { # workdir
  NSSSH=$1/nsssh
  netns_pair_down
  local xa=mxpxa$$ xb=mxpxb$$
  ip netns add "$NSP_A" && ip netns add "$NSP_B" &&
    ip link add "$xa" type veth peer name "$xb" &&
    ip link set "$xa" netns "$NSP_A" && ip link set "$xb" netns "$NSP_B" || return 1
  local x
  for x in "$NSP_A $xa 10.79.0.1" "$NSP_B $xb 10.79.0.2"; do
    set -- $x
    ip -n "$1" link set "$2" name myrixv0 && ip -n "$1" addr add "$3/24" dev myrixv0 &&
      ip -n "$1" link set lo up && ip -n "$1" link set myrixv0 up || return 1
    if [ -n "${NSP_MTU:-}" ]; then ip -n "$1" link set myrixv0 mtu "$NSP_MTU" || return 1; fi
  done
  {
    echo '#!/bin/bash'
    echo "NSP_A=$NSP_A NSP_B=$NSP_B"
    cat <<'SSH'
while [ $# -gt 0 ]; do
  case $1 in
  -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
  -*) shift ;;
  *) break ;;
  esac
done
host=$1
shift
case $host in
10.79.0.1) ns=$NSP_A ;;
10.79.0.2) ns=$NSP_B ;;
*) echo "nsssh: unknown host $host" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $ns; $*"
SSH
  } >"$NSSSH"
  chmod +x "$NSSSH"
}

netns_pair_launch() { # mpi (myrix|mpich|ompi) program args... ; LIMIT seconds
  local m=$1
  shift
  # NSP_CHRT=N: the launcher, and so every rank, under `chrt -f N` (SCHED_FIFO).
  local in_a=(timeout "${LIMIT:-300}" ${NSP_CHRT:+chrt -f $NSP_CHRT} ip netns exec "$NSP_A" unshare --uts /bin/sh -c
    "hostname $NSP_A; exec \"\$@\"" sh)
  case $m in
  myrix | mpich)
    "${in_a[@]}" mpiexec.mpich -launcher ssh -launcher-exec "$NSSSH" -iface myrixv0 \
      -hosts 10.79.0.1,10.79.0.2 -n 2 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES myrixv0 "$@"
    ;;
  ompi)
    "${in_a[@]}" mpirun.openmpi -n 2 --host 10.79.0.1,10.79.0.2 --allow-run-as-root \
      --mca plm_rsh_agent "$NSSSH" --mca btl self,tcp --mca pml ob1 --bind-to none \
      --mca btl_tcp_if_include myrixv0 --mca oob_tcp_if_include myrixv0 "$@"
    ;;
  esac
}
