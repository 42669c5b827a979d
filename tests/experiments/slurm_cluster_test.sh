#!/bin/bash
# experiments/slurm/ringside.sbatch under a real Slurm: the test configures
# and starts a one-node cluster of its own (munged, slurmctld, slurmd from
# Debian's munge and slurm-wlm packages, tools/setup.sh installs them) in a
# temporary folder with free ports, submits a 4-task ring job with
# `sbatch --wait`, and checks that all 4 ranks finish, that they took their
# ranks from Slurm, that the job printed the study-format utilization row,
# and that its eval loss is the oracle's (one worker on the 4 workers'
# global batch). Where Slurm or munge is missing, the test is not root or
# the daemons do not come up, it skips, naming why (a skipped case in
# test.xml, counted as skipped).
set -uo pipefail
R="$TEST_SRCDIR/ringside"
CASE=RingJobUnderRealSlurm

xml_escape() { sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g'; }
# write_xml INNER: the one test case, INNER its body (empty: passed).
write_xml() {
  [[ -n "${XML_OUTPUT_FILE:-}" ]] || return 0
  cat >"$XML_OUTPUT_FILE" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1"><testsuite name="SlurmClusterTest" tests="1">
<testcase name="$CASE" classname="SlurmClusterTest">$1</testcase>
</testsuite></testsuites>
EOF
}
skip() {
  echo "SKIPPED: $1"
  write_xml "<skipped message=\"$(echo "$1" | xml_escape)\"/>"
  exit 0
}
fail() {
  echo "FAIL: $1"
  write_xml "<failure message=\"$(echo "$1" | xml_escape)\"/>"
  exit 1
}

for tool in munged mungekey slurmctld slurmd sbatch sinfo scontrol; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "$tool is not installed (Debian: munge, slurmctld, slurmd, slurm-client; tools/setup.sh installs them)"
done
[[ $(id -u) == 0 ]] || skip "slurmd runs jobs as root here: the test must run as root"

# A short path: munge's socket path must fit a sockaddr_un.
T=$(mktemp -d /tmp/ringside-slurm.XXXXXX) || skip "no temporary folder"
cleanup() {
  for pid in "$T"/slurmd.pid "$T"/slurmctld.pid "$T"/munge/munged.pid; do
    [[ -f "$pid" ]] && kill "$(cat "$pid")" 2>/dev/null
  done
  sleep 1
  rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/state" "$T/spool" "$T/munge" && chmod 700 "$T/munge"
mungekey -c -k "$T/munge/munge.key" >/dev/null 2>&1 ||
  skip "mungekey could not make a key"
munged --key-file="$T/munge/munge.key" --socket="$T/munge/munge.sock" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
  --seed-file="$T/munge/seed" --force >/dev/null 2>&1 ||
  skip "munged did not start: $(tail -n 2 "$T/munge/munged.log" 2>/dev/null)"

host=$(hostname -s)
port=$((30000 + RANDOM % 20000))
cat >"$T/slurm.conf" <<EOF
ClusterName=ringside
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$host CPUs=4 State=UNKNOWN
PartitionName=ringside Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$T/slurm.conf"
slurmctld -f "$SLURM_CONF" >/dev/null 2>&1 ||
  skip "slurmctld did not start: $(tail -n 3 "$T/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" >/dev/null 2>&1 ||
  skip "slurmd did not start: $(tail -n 3 "$T/slurmd.log" 2>/dev/null)"
# Bounded: the node reports idle within 30 s.
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -o %T 2>/dev/null | head -n 1)
  [[ "$state" == idle ]] && break
  sleep 0.5
done
[[ "$state" == idle ]] ||
  skip "the node did not come up (sinfo: '${state}'; slurmd log: $(tail -n 2 "$T/slurmd.log" 2>/dev/null))"
echo "cluster up: node $host idle, slurmctld port $port"

# The job: ring on 4 tasks of the one node.
args="--steps=6 --warmup_steps=1 --mlp_widths=8,16,4 --batch_size=8"
(cd "$T" && RINGSIDE_BIN="$R" STRATEGY=ring TRANSPORT_HOST_CMD="echo 127.0.0.1" \
   MASTER_PORT=$((port + 2)) WORKER_ARGS="$args" \
   timeout 300 sbatch --wait --nodes=1 --ntasks=4 --ntasks-per-node=4 \
     --output="$T/job-%j.out" --export=ALL "$R/experiments/slurm/ringside.sbatch" \
     >"$T/sbatch.log" 2>&1)
rc=$?
out=$(ls "$T"/job-*.out 2>/dev/null | head -n 1)
[[ $rc == 0 ]] || fail "sbatch --wait exited $rc: $(tail -n 5 "$T/sbatch.log" "$out" 2>/dev/null)"
finals=$(grep -c '"event":"final".*"rank_source":"slurm"' "$out")
[[ $finals == 4 ]] || fail "$finals of 4 ranks finished with their rank from Slurm: $(tail -n 5 "$out")"
grep -q '^| Ring ' "$out" || fail "no study-format row in the job's output: $(tail -n 5 "$out")"
grep -A 3 'Parallel type' "$out"

# The oracle: one worker on the global batch (4 x 8) ends at the same loss.
job_loss=$(grep -o '"eval_loss":[^,}]*' "$out" | head -n 1 | cut -d: -f2)
ref_loss=$("$R/worker/worker" --rank=0 --world_size=1 --strategy=baseline \
             --steps=6 --warmup_steps=1 --mlp_widths=8,16,4 --batch_size=32 \
             2>/dev/null | grep -o '"eval_loss":[^,}]*' | tail -n 1 | cut -d: -f2)
python3 - "$job_loss" "$ref_loss" <<'EOF' || fail "eval loss $job_loss under Slurm, $ref_loss for one worker on the global batch"
import sys
job, ref = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs(job - ref) <= 1e-6 * abs(ref) else 1)
EOF
echo "ok: 4 ranks under Slurm, eval loss $job_loss (one worker on the global batch: $ref_loss)"
write_xml ""
exit 0
