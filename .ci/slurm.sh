#!/usr/bin/env bash
# A one-node Slurm in the foreground (no systemd), for the MPI launch tests
# (crates/cli/tests/mpi_launch.rs, `srun --mpi=pmi2`).
#
#   bash .ci/slurm.sh up     install slurm-wlm and munge if missing, write the config,
#                            start munged, slurmctld -D and slurmd -D, wait for an idle node
#   bash .ci/slurm.sh down   stop them by their pids
#
# Needs root. State goes to /run/myrix-slurm (pids, logs) and /var/spool/slurm*.
set -euo pipefail
STATE=/run/myrix-slurm
CONF=/etc/slurm/slurm.conf

log() { echo "slurm.sh: $*" >&2; }

up() {
  [ "$(id -u)" = 0 ] || { log "needs root"; return 1; }
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || ! command -v srun >/dev/null; then
    log "installing slurm-wlm and munge"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 || {
      DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1
    } || { log "cannot install slurm-wlm/munge"; return 1; }
  fi
  mkdir -p "$STATE"
  down quiet || true

  # munge: a key, its directories, the daemon as the munge user.
  install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
  install -d -o munge -g munge -m 0755 /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "munged is already running (not ours: left alone on down)"
  else
    su -s /bin/sh munge -c "/usr/sbin/munged --pid-file=/run/munge/munged.pid" \
      || { log "munged did not start"; return 1; }
    for _ in $(seq 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
    cp /run/munge/munged.pid "$STATE/munged.pid"
    munge -n | unmunge >/dev/null || { log "munge does not work"; return 1; }
  fi

  local host cpus
  host=$(hostname)
  cpus=$(nproc)
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd
  cat > "$CONF" <<CONF
# Written by myrix .ci/slurm.sh: one node, daemons in the foreground, no cgroups.
ClusterName=myrix
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$STATE/slurmctld-self.pid
SlurmdPidFile=$STATE/slurmd-self.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

  slurmctld -D -i >"$STATE/slurmctld.out" 2>&1 &
  echo $! > "$STATE/slurmctld.pid"
  sleep 1
  slurmd -D >"$STATE/slurmd.out" 2>&1 &
  echo $! > "$STATE/slurmd.pid"

  for _ in $(seq 60); do
    if sinfo -h -o '%t' 2>/dev/null | grep -q '^idle'; then
      log "up: $(sinfo -h -o '%P %D %t %N' | head -1)"
      return 0
    fi
    sleep 1
  done
  log "the node did not become idle; see $STATE/*.log"
  sinfo >&2 || true
  return 1
}

stop_pid() {
  local f=$1 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  stop_pid "$STATE/slurmd.pid"
  stop_pid "$STATE/slurmctld.pid"
  stop_pid "$STATE/munged.pid"
  [ "${1:-}" = quiet ] || log "down"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
