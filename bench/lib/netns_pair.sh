# Two network namespaces as two hosts, for the bench scripts (source it; needs root):
# myrix-ma 10.79.0.1 and myrix-mb 10.79.0.2, joined by a clean veth pair named myrixv0
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
# The launchers run in myrix-ma.

netns_pair_down() {
  ip netns del myrix-ma 2>/dev/null
  ip netns del myrix-mb 2>/dev/null
  return 0
}

netns_pair_up() { # workdir
  NSSSH=$1/nsssh
  netns_pair_down
  ip netns add myrix-ma && ip netns add myrix-mb &&
    ip link add myrix-xa type veth peer name myrix-xb &&
    ip link set myrix-xa netns myrix-ma && ip link set myrix-xb netns myrix-mb || return 1
  local x
  for x in "myrix-ma myrix-xa 10.79.0.1" "myrix-mb myrix-xb 10.79.0.2"; do
    set -- $x
    ip -n "$1" link set "$2" name myrixv0 && ip -n "$1" addr add "$3/24" dev myrixv0 &&
      ip -n "$1" link set lo up && ip -n "$1" link set myrixv0 up || return 1
  done
  cat >"$NSSSH" <<'SSH'
#!/bin/bash
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
10.79.0.1) ns=myrix-ma ;;
10.79.0.2) ns=myrix-mb ;;
*) echo "nsssh: unknown host $host" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $ns; $*"
SSH
  chmod +x "$NSSSH"
}

netns_pair_launch() { # mpi (myrix|mpich|ompi) program args... ; LIMIT seconds
  local m=$1
  shift
  local in_a=(timeout "${LIMIT:-300}" ip netns exec myrix-ma unshare --uts /bin/sh -c
    'hostname myrix-ma; exec "$@"' sh)
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
