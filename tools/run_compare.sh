#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs what a
# user of ringside comes for, in about 6 minutes on 2 cores:
#   1. the GPT-2 study's 4-GPU table, emulated from the study's own setup
#      (compare --preset=study_gpt2, into out/study/), beside the study's
#      numbers with the cost model's reading (tools/study_table.py, printed
#      and written to out/study/study_table.md);
#   2. every strategy of the default sweep with real compute on the MLP at
#      n = 1 up to the machine's cores (at most 4: more workers than cores
#      measure the scheduler), into out/.
# Any flag runs compare with those flags alone instead (--full: the whole
# sweep at 1, 2 and 4 workers, whatever the cores), e.g. --workers=2,4
# --steps=60, --preset=comm_bound, --results_md=docs/RESULTS.md; after --:
# worker flags. Outputs: docs/COMPARE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
source tools/cpu_config.sh
mapfile -t cpu_config < <(ringside_cpu_config)
compare() { bazel run "${cpu_config[@]}" //experiments:compare -- "$@"; }

if [ "$#" -gt 0 ]; then
  if [ "$1" = --full ]; then
    shift
    exec bazel run "${cpu_config[@]}" //experiments:compare -- \
      --workers=1,2,4 "$@"
  fi
  exec bazel run "${cpu_config[@]}" //experiments:compare -- "$@"
fi

cores="$(nproc)"
workers=1
for n in 2 4; do
  if [ "$n" -le "$cores" ]; then workers="$workers,$n"; fi
done
echo "run_compare: 1/2 the study's table (compare --preset=study_gpt2)" >&2
compare --preset=study_gpt2 --out_dir="$PWD/out/study" >/dev/null
python3 tools/study_table.py out/study | tee out/study/study_table.md
echo >&2
echo "run_compare: 2/2 the strategies with real compute at n = $workers" \
     "(the machine's $cores cores; --full: 1, 2 and 4)" >&2
compare --workers="$workers" --out_dir="$PWD/out"
