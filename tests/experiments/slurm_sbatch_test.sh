#!/bin/bash
# Runs experiments/slurm/ringside.sbatch with the real ps_server and worker
# under a fake srun/scontrol (tests/experiments/fake_slurm: every node is
# this host): dps with 2 servers and 2 workers, ring with 2 workers, sps with
# the server on a node of its own, and a bad worker flag, after which the
# script must stop the servers and fail.
set -uo pipefail
R="$TEST_SRCDIR/ringside"
export PATH="$R/tests/experiments/fake_slurm:$PATH"
export RINGSIDE_BIN="$R" SLURM_JOB_NODELIST=fake SLURM_SUBMIT_DIR="$TEST_TMPDIR"
export SLURM_NTASKS=2 FAKE_HOSTS="localhost localhost"
export TRANSPORT_HOST_CMD="echo 127.0.0.1"
export PS_PORT=$((20000 + RANDOM % 20000)) MASTER_PORT=$((40000 + RANDOM % 20000))
failures=0

# run NAME EXPECTED_EXIT [VAR=value ...]: runs the script, checks its exit.
run() {
  local name=$1 want=$2; shift 2
  env "$@" timeout 120 "$R/experiments/slurm/ringside.sbatch" \
      >"$TEST_TMPDIR/$name.out" 2>"$TEST_TMPDIR/$name.err"
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL $name: exit $got, want $want"; cat "$TEST_TMPDIR/$name.err"
    failures=$((failures + 1)); return 1
  fi
  echo "ok $name (exit $got)"
}

# expect_count NAME PATTERN N: N lines of NAME's stdout match PATTERN.
expect_count() {
  local got
  got=$(grep -c -- "$2" "$TEST_TMPDIR/$1.out")
  if [[ $got != "$3" ]]; then
    echo "FAIL $1: $got lines match '$2', want $3"
    cat "$TEST_TMPDIR/$1.out" | grep -v '"step"'
    failures=$((failures + 1))
  fi
}

args="--steps=6 --warmup_steps=1 --mlp_widths=8,16,4"

run dps 0 STRATEGY=dps WORKER_ARGS="$args"
expect_count dps '"event":"final".*"rank_source":"slurm"' 2
expect_count dps '"event":"server_final".*"finished":true' 2

run ring 0 STRATEGY=ring WORKER_ARGS="$args"
expect_count ring '"event":"final".*"rank_source":"slurm"' 2
expect_count ring '"event":"listening"' 0

run sps_separate 0 STRATEGY=sps SEPARATE_SERVER_NODES=1 \
    FAKE_HOSTS="localhost localhost localhost" WORKER_ARGS="$args"
expect_count sps_separate '"event":"final".*"rank_source":"slurm"' 2
expect_count sps_separate '"event":"server_final".*"finished":true' 1

# Torchrun's variables in the job's environment must not win over SLURM's.
run env_cleared 0 STRATEGY=ring RANK=5 WORLD_SIZE=9 WORKER_ARGS="$args"
expect_count env_cleared '"event":"final".*"rank_source":"slurm"' 2

# Workers fail at once: the script stops the servers and exits non-zero
# well before --max_job_s.
run bad_flag 2 STRATEGY=dps WORKER_ARGS="--steps=-1" SERVER_ARGS="--max_job_s=600"

# More servers than nodes: refused before anything starts.
run too_many_servers 2 STRATEGY=dps SERVERS=3

if (( failures > 0 )); then echo "$failures failure(s)"; exit 1; fi
echo "all passed"
