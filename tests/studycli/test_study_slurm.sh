#!/usr/bin/env bash
# llcprobe study --slurm against a real single-node Slurm that this test
# starts and stops itself: munged with a fresh key, slurmctld and slurmd
# from a generated slurm.conf (this host the only node, its CPUs,
# proctrack/linuxproc, task/none, select/cons_tres, random unprivileged
# ports, state, spool, logs and pid files in the test's temporary
# directory, SlurmUser=root). The profiling runs as a job array (one
# failing task), the study as a dependent job; a rerun submits only what is
# missing. Skips (77) with the reason when the Slurm or munge programs are
# missing or the test is not root (the daemons run as root).
. "$(dirname "$0")/../cli_lib.sh"
for p in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$p" >/dev/null || PATH=$PATH:/usr/sbin
  command -v "$p" >/dev/null || { echo "SKIP: $p not installed (Debian: apt-get install slurmctld slurmd slurm-client munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: the test runs slurmctld, slurmd and munged as root"; exit 77; }

d=$tmp/slurm
mkdir -p "$d"/{munge,state,spool,log,run}
chmod 700 "$d/munge"
head -c 1024 /dev/urandom >"$d/munge/munge.key"
chmod 400 "$d/munge/munge.key"
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
cat >"$d/slurm.conf" <<CONF
ClusterName=llcprobetest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=300
KillWait=5
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
CONF
export SLURM_CONF=$d/slurm.conf
# Stop what this test started, by the pids the daemons wrote.
down() {
  for f in slurmd slurmctld munged; do
    [ -s "$d/run/$f.pid" ] && kill "$(cat "$d/run/$f.pid")" 2>/dev/null
  done
  sleep 1
  rm -rf "$tmp"
}
trap down EXIT
munged --key-file="$d/munge/munge.key" --socket="$d/munge/munge.socket" --pid-file="$d/run/munged.pid" \
  --log-file="$d/log/munged.log" --seed-file="$d/munge/seed" -f
check_rc "munged started" 0 $?
slurmctld -f "$d/slurm.conf" && slurmd -f "$d/slurm.conf"
check_rc "slurmctld and slurmd started" 0 $?
for _ in $(seq 60); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 0.5
done
check "the node is idle" 'sinfo -h -o %t | grep -q idle'

cd "$tmp" || exit 1
S=(--backend sim --preset intel8 --instructions 1e6)
items=("${S[@]}" --workload uniform:size=2M ';;' "${S[@]}" --workload zipf:size=16M,alpha=1 ';;'
       "${S[@]}" --workload stream:size=64M ';;' "${S[@]}" --workload bogus:size=1M)
timeout 120 "$bin" study -k 2 -o s --slurm --partition test --sbatch-args "--time=10" -- "${items[@]}" >out 2>err
check_rc "study --slurm" 0 $?
check "4 tasks and a dependent study job submitted" 'grep -q "submitted 4 profiling tasks as job [0-9]* and the study as job [0-9]*" err'
check "the failed task is named with its log" 'grep -q "bogus: Slurm task [0-9]*_3 failed; log s/slurm/task-3.log" err && grep -q bogus s/slurm/task-3.log'
check "the study's output is printed" 'grep -q "^best " out'
jcheck "the study job studied the 3 profiles and reports the failure" s/study.json \
  'd["programs_n"]==3 and len(d["failed"])==1 and "bogus" in d["failed"][0]'
timeout 120 "$bin" study -k 2 -o s --slurm -- "${items[@]}" >out2 2>err2
check_rc "rerun --slurm" 0 $?
check "the rerun submits only the missing profile" 'grep -q "submitted 1 profiling task as job" err2'
"$bin" study -k 2 -o s --partition test -- "${items[@]}" 2>/dev/null
check_rc "usage: --partition without --slurm" 2 $?
exit $fail
