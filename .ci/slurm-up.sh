#!/usr/bin/env bash
# Start a real single-node Slurm cluster on this machine, for the tests that submit through
# submitit (and for a contributor who wants to try `bench run --executor slurm` by hand).
#
#   sudo .ci/slurm-up.sh          # installs Debian's slurmctld, slurmd, slurm-client, munge
#   sinfo                         # one node, idle
#
# Idempotent: a second call finds the daemons running and only waits for the node. Needs root
# (the daemons run as root, munged as the munge user). Nothing here is specific to CI.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "error: run as root (the Slurm daemons need it)" >&2
  exit 2
fi

export DEBIAN_FRONTEND=noninteractive
need=()
for bin in slurmctld slurmd sinfo munged; do
  command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
fi

host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)

mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
conf=/etc/slurm/slurm.conf
cat >"$conf.new" <<EOF
# Written by .ci/slurm-up.sh: one node that is also the controller.
ClusterName=torch-knobs
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SchedulerType=sched/backfill
MpiDefault=none
KillWait=5
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
mv "$conf.new" "$conf"

# munge: a key (the Debian package makes one; older ones need it made), its run folder, the
# daemon as the munge user.
if [ ! -s /etc/munge/munge.key ]; then
  if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --force
  else
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
  fi
fi
chown munge:munge /etc/munge/munge.key /run/munge
chmod 400 /etc/munge/munge.key
if ! pgrep -x munged >/dev/null; then
  su -s /bin/sh munge -c /usr/sbin/munged
fi

pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd

for _ in $(seq 1 60); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1 || true)
  case "$state" in
    idle|mix|alloc) echo "slurm: node $host $state ($cpus CPUs)"; exit 0 ;;
    down*|drain*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true ;;
  esac
  sleep 1
done
echo "error: the Slurm node did not come up; see /var/log/slurm/" >&2
exit 1
