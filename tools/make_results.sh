#!/usr/bin/env bash
# Regenerates docs/RESULTS.md and its images (docs/results/) from runs made
# now, at the checked-out commit, on this machine; every figure in it comes
# from these runs, each section with the command that made it:
#   1. the main job (compare's defaults: the MLP at 1, 2 and 4 workers,
#      every registered strategy, the measurement protocol, the cost
#      model's predictions from the baseline's compute; the PyTorch DDP row
#      where --torch_python imports torch);
#   2. event_loop_bench: Gloo's event-loop policies quiet, with compute
#      threads filling the cores, and beside busy processes;
#   3. collective_bench: ringside's Gloo collective against raw Gloo with
#      the same event-loop policy, paced and normal;
#   4. parity_bench: each component beside what a user would pick instead
#      (the PyTorch pairs say "not run" without torch);
#   5. validate_predictions: the cost model against runs on shaped links
#      drawn from a seed derived from the commit (needs root and network
#      namespaces; otherwise the section says why it is missing);
#   6. compare --preset=slow_link: the communication-efficient strategies
#      against the exact ones by time to the target loss on 0.1 and 1
#      Gbit/s links (TinyShakespeare from ../shared/data where it is, else
#      the built-in text; needs network namespaces too);
#   7. compare --preset=study_gpt2: the GPT-2 study's 4-GPU table, emulated
#      at scale 64 from the study's own setup and published V100 figures,
#      beside the study's own numbers (tools/study_table.py; shaped links);
#   8. validate_published: the cost model against published multi-GPU
#      results (experiments/validation/; no runs here, predictions only).
# It also writes the main job's n = 4 table into README.md between the
# "results:n4" markers and section 7's between "results:study", and section
# 6's into docs/COMPARE.md between "results:slow_link", so they quote this
# file.
#
#   tools/make_results.sh [--torch_python=$HOME/torchenv/bin/python]
#                         [--out=docs/RESULTS.md] [--quick]
#                         [--only=published|--only=study]
# --quick: fewer repeats, sizes and configurations (about 10 minutes on 2
# cores instead of about 40): for trying the script, not for the file.
# --only=published: section 8 alone (a minute), written in place between
# its markers in the existing file, which keeps the other sections and
# their commit; the section names its own commit and date. --only=study:
# section 7 alone the same way (about 7 minutes), and README.md's study
# table.
set -euo pipefail
cd "$(dirname "$0")/.."

torch_python=python3
out=docs/RESULTS.md
quick=false
only=""
for arg in "$@"; do
  case "$arg" in
    --torch_python=*) torch_python="${arg#*=}" ;;
    --out=*) out="${arg#*=}" ;;
    --quick) quick=true ;;
    --only=published) only=published ;;
    --only=study) only=study ;;
    *) echo "make_results: unknown argument '$arg' (--torch_python=, --out=, --quick, --only=published, --only=study)" >&2
       exit 2 ;;
  esac
done

tools/setup.sh
source tools/cpu_config.sh
mapfile -t cpu_config < <(ringside_cpu_config)
bazel build "${cpu_config[@]}" //experiments:predict
bin="$(bazel info "${cpu_config[@]}" bazel-bin 2>/dev/null)"
commit="$(git rev-parse --short HEAD)"
if ! git diff --quiet HEAD -- . ':!docs/RESULTS.md' ':!docs/results' ':!README.md' ':!docs/COMPARE.md'; then
  commit="$commit+uncommitted"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/doc"

# Section 8: validate_published.py's tables, with its command, commit and
# date, between its markers.
run_published() {
  python3 experiments/validation/validate_published.py \
    --predict="$bin/experiments/predict" --markdown_out="$work/published.md" \
    >/dev/null
}
published_section() {
  echo "<!-- section:published -->"
  echo "## 8. The cost model against published results"
  echo
  echo "\`python3 experiments/validation/validate_published.py\`"
  echo "(\`tools/validate_published.sh\`) at commit $commit on $(date -u '+%Y-%m-%d %H:%M UTC'):"
  echo "every published multi-GPU result in \`experiments/validation/\` (its"
  echo "source, hardware and printed numbers in its file), its fewest GPUs'"
  echo "step the only input taken from it, each larger count predicted by"
  echo "\`predict --cluster\` with the links priced from the built-in tables"
  echo "of published nccl-tests runs (\`experiments/cost/links/\`) scaled to"
  echo "the result's nominal rates. Nothing here ran on this machine: these"
  echo "are predictions against other people's measurements. Targets: median"
  echo "|error| <= 10%, every row within 20%, the faster of each measured"
  echo "pair predicted faster."
  echo
  cat "$work/published.md"
  echo "<!-- /section:published -->"
}

# Section 7: the study preset's run and tools/study_table.py's table, with
# its command, commit and date, between its markers.
study_cmd=(compare --preset=study_gpt2)
run_study() {
  study_cmd=(compare --preset=study_gpt2 "--repeats=$1")
  # DataParallel's host work, measured with PyTorch where it imports.
  local host=()
  if "$torch_python" experiments/bench/dataparallel_host_bench.py \
       --out="$work/dp_host.json" >/dev/null 2>&1; then
    host=("--host_terms=$work/dp_host.json")
  fi
  if "$bin/experiments/compare" --preset=study_gpt2 "--repeats=$1" \
       --noddp --out_dir="$work/study" >/dev/null 2>"$work/study.err"; then
    python3 tools/study_table.py "$work/study" "${host[@]}" >"$work/study.md"
  else
    { echo "(compare --preset=study_gpt2 failed; its last lines:)"; echo '```'
      tail -n 5 "$work/study.err"; echo '```'; } >"$work/study.md"
  fi
}
study_section() {
  echo "<!-- section:study -->"
  echo "## 7. The study's table, emulated"
  echo
  echo "\`${study_cmd[*]}\` at commit $commit on $(date -u '+%Y-%m-%d %H:%M UTC'):"
  echo "the study's own setup (\`../shared/study/SETUP.md\`): its 106 M-parameter"
  echo "GPT-2 (n_ctx 512, vocabulary 26679; 148 tensors) on 4 workers, each row"
  echo "at the batch the study ran it (SPS 1 × 512 tokens a GPU, DPS 2 × 512,"
  echo "the Apex rows and Horovod 4 × 512), its compute the model's FLOPs over a"
  echo "V100 at 30% of its peak (72.4 ms for 512 tokens in fp32, 36.4 ms for"
  echo "2048 in mixed precision), its links the X-Bus between the node's"
  echo "sockets (256 Gbit/s), every input with its source in"
  echo "\`experiments/presets/study_gpt2.flags\`, fixed before any run; emulated"
  echo "at scale 64 (every tensor and link 1/64, the compute kept). Beside it"
  echo "the study's own table (arXiv 2206.06356, 4 GPUs); targets: per-worker"
  echo "utilization within 10 points and the Totals within 0.4 for SPS and for"
  echo "DPS (ring). The whole report is compare's; this table is"
  echo "\`tools/study_table.py\`'s."
  echo
  cat "$work/study.md"
  echo "<!-- /section:study -->"
}

if [ "$only" = study ]; then
  echo "make_results: section 7 alone (the study_gpt2 preset, 3 repeats)" >&2
  bazel build "${cpu_config[@]}" //experiments:compare //worker:worker \
    //server:ps_server
  run_study 3
  study_section >"$work/section.md"
  python3 tools/between_markers.py "$out" section:study "$work/section.md" \
    --whole
  python3 tools/between_markers.py README.md results:study "$work/study.md"
  echo "make_results: wrote section 7 of $out and README.md's study table" >&2
  exit 0
fi

if [ "$only" = published ]; then
  echo "make_results: section 8 alone (validate_published)" >&2
  run_published
  published_section >"$work/section.md"
  python3 tools/between_markers.py "$out" section:published \
    "$work/section.md" --whole
  echo "make_results: wrote section 8 of $out" >&2
  exit 0
fi

bazel build "${cpu_config[@]}" //experiments:compare //experiments:launch \
  //worker:worker //server:ps_server //experiments/bench:event_loop_bench \
  //experiments/bench:collective_bench //experiments/bench:transport_bench \
  //experiments/bench:charlm_bench

if $quick; then
  repeats=1; elb_repeats=1; cb_max=4M; parity_rounds=1; vp_configs=1
  vp_real=1
else
  repeats=3; elb_repeats=5; cb_max=64M; parity_rounds=3; vp_configs=6
  vp_real=3
fi
vp_strategies=sps,dps,ring,fusion,zero2

echo "make_results: 1/8 the main job" >&2
main_cmd=(compare "--torch_python=$torch_python" "--repeats=$repeats")
"$bin/experiments/compare" "--torch_python=$torch_python" \
  "--repeats=$repeats" --out_dir="$work/main" \
  --results_md="$work/doc/main.md" >/dev/null

echo "make_results: 2/8 event_loop_bench" >&2
elb_cmd=(event_loop_bench "--repeats=$elb_repeats")
"$bin/experiments/bench/event_loop_bench" "--repeats=$elb_repeats" \
  >"$work/event_loop.md"

echo "make_results: 3/8 collective_bench" >&2
for loop in paced normal; do
  "$bin/experiments/bench/collective_bench" --backends=ours,gloo \
    --min_bytes=4K "--max_bytes=$cb_max" --step_factor=16 --iters=50 \
    "--gloo_event_loop=$loop" >"$work/collective_$loop.txt"
done

echo "make_results: 4/8 parity_bench" >&2
python3 experiments/bench/parity_bench.py --bin_dir="$bin" \
  "--torch_python=$torch_python" "--rounds=$parity_rounds" \
  >"$work/parity.md"

echo "make_results: 5/8 validate_predictions" >&2
python3 experiments/bench/validate_predictions.py --bin_dir="$bin" \
  "--configs=$vp_configs" "--real_configs=$vp_real" \
  "--strategies=$vp_strategies" \
  >"$work/validate.md" || echo "(validate_predictions exited $?)" >>"$work/validate.md"

echo "make_results: 6/8 the slow_link preset" >&2
text_args=()
text_name="the built-in synthetic text"
if [ -f ../shared/data/tinyshakespeare.txt ]; then
  text_args=(-- "--text=$(cd ../shared/data && pwd)/tinyshakespeare.txt")
  text_name="TinyShakespeare"
fi
slow_steps=80
$quick && slow_steps=20
slow_cmd=(compare --preset=slow_link "--steps=$slow_steps" "--repeats=$repeats")
if "$bin/experiments/compare" --preset=slow_link "--steps=$slow_steps" \
     "--repeats=$repeats" --noddp --out_dir="$work/slow" "${text_args[@]}" \
     >/dev/null 2>"$work/slow.err"; then
  python3 tools/slow_link_summary.py "$work/slow" >"$work/slow.md"
else
  { echo "(compare --preset=slow_link failed; its last lines:)"; echo '```'
    tail -n 5 "$work/slow.err"; echo '```'; } >"$work/slow.md"
fi

echo "make_results: 7/8 the study_gpt2 preset" >&2
run_study "$repeats"

echo "make_results: 8/8 validate_published" >&2
run_published

# The assembled file: a header, then each section with its command.
{
  echo "# ringside results"
  echo
  echo "<!-- Written by tools/make_results.sh; do not edit by hand: run it again. -->"
  echo "Every figure below was measured by \`tools/make_results.sh$( [ "$torch_python" != python3 ] && echo " --torch_python=…")$($quick && echo " --quick")\`"
  echo "at commit $commit on $(date -u '+%Y-%m-%d %H:%M UTC'), on this machine:"
  echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')),"
  echo "$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM, $(uname -sr)."
  echo "The sections are, in order: the main job, Gloo's event-loop policies,"
  echo "ringside's collective against raw Gloo, parity with what a user"
  echo "would pick instead, the cost model's predictions out of sample, and"
  echo "the communication-efficient strategies by time to a target loss,"
  echo "the GPT-2 study's table, emulated, and the cost model against"
  echo "published multi-GPU results."
  echo
  echo "## 1. The main job"
  echo
  echo "\`${main_cmd[*]}\` (\`tools/run_compare.sh --full\`: the whole"
  echo "sweep at 1, 2 and 4 workers)."
  echo
  # compare's report, its title dropped, its headings one level down.
  sed -e '1{/^# /d}' -e 's/^## /### /' "$work/doc/main.md"
  echo
  echo "## 2. Gloo's event loop: paced, idle, normal"
  echo
  echo "\`${elb_cmd[*]}\`: ring at n = 2 on the MLP. quiet: nothing else"
  echo "runs; threads: every worker's compute threads alone fill the cores;"
  echo "busy: as many outside busy processes as cores. The default is paced."
  echo
  tail -n +2 "$work/event_loop.md"
  echo
  echo "## 3. ringside's Gloo collective against raw Gloo, on equal terms"
  echo
  echo "\`collective_bench --backends=ours,gloo --min_bytes=4K --max_bytes=$cb_max"
  echo "--step_factor=16 --iters=50 --gloo_event_loop=paced\` (then \`=normal\`):"
  echo "both backends' event loops scheduled alike; ours/gloo < 1: ours is faster."
  for loop in paced normal; do
    echo
    echo "Event loops $loop:"
    echo
    echo '```'
    sed -n '/^# time per size/,$p' "$work/collective_$loop.txt"
    echo '```'
  done
  echo
  echo "## 4. Parity with what users would pick instead"
  echo
  echo "\`python3 experiments/bench/parity_bench.py --rounds=$parity_rounds\`"
  echo "(\`tools/parity_bench.sh\`)."
  echo
  cat "$work/parity.md"
  echo
  echo "## 5. The cost model out of sample"
  echo
  echo "\`python3 experiments/bench/validate_predictions.py --configs=$vp_configs --real_configs=$vp_real"
  echo "--strategies=$vp_strategies\` (\`tools/validate_predictions.sh\`): the"
  echo "seed is derived from the commit and printed below; the draws are not"
  echo "chosen, and a miss stays in the table. Targets: median |error| <= 10%,"
  echo "p90 <= 20%, the fastest strategy agreeing in >= 80% of configurations."
  echo
  sed -e 's/^## Predictions out of sample/Predictions out of sample/' \
    -e 's/^### /#### /' -e 's/^## /### /' "$work/validate.md"
  echo
  echo "## 6. Communicating less, judged by time to a target loss"
  echo
  echo "\`${slow_cmd[*]} -- --text=…\` on $text_name: the character"
  echo "transformer at n = 2 (Adam, lr 0.003, the preset's worker flags: the"
  echo "exact strategies' learning rate for every row, as the papers of"
  echo "PowerSGD, EF-SignSGD and DiLoCo keep it; each method at its"
  echo "registry's setting, in its row's name: PowerSGD at rank 4 after 8"
  echo "exact steps) on shaped 0.1 and 1 Gbit/s links, three seeds (the"
  echo "preset's --seeds=3: initial parameters and data order). Time to"
  echo "target: training seconds until rank 0's validation loss first reached"
  echo "the target every exact run of every seed reached, the median over the"
  echo "seeds; vs Ring > 1: sooner than ring on that link; \"never\": not"
  echo "within the run for most seeds. Val loss: the median over the seeds;"
  echo "gap to exact: per seed, the row's final loss less the exact rows'"
  echo "mean, its median and range. Each link's whole report (the traffic per"
  echo "worker, the loss curves, the seeds table) is compare's; this table is"
  echo "\`tools/slow_link_summary.py\`'s."
  echo
  cat "$work/slow.md"
  echo
  study_section
  echo
  published_section
} >"$work/doc/RESULTS.md"

# The images: compare copied its plots beside main.md, into results/.
out_dir="$(dirname "$out")"
rm -rf "$out_dir/results"
if [ -d "$work/doc/results" ]; then cp -r "$work/doc/results" "$out_dir/results"; fi
cp "$work/doc/RESULTS.md" "$out"

# README.md: the main job's n = 4 utilization table and section 7's
# table; docs/COMPARE.md: section 6's; each between its markers.
python3 - "$work/doc/main.md" "$work/n4.md" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^## Utilization, n = 4 workers\n\n(.*?)\n\n", text, re.S | re.M)
if not m:
    sys.exit("make_results: no n = 4 table in the main job's report")
open(sys.argv[2], "w").write("```\n" + m.group(1).strip() + "\n```\n")
EOF
python3 tools/between_markers.py README.md results:n4 "$work/n4.md"
python3 tools/between_markers.py README.md results:study "$work/study.md"
python3 tools/between_markers.py docs/COMPARE.md results:slow_link "$work/slow.md"
echo "make_results: wrote $out, $out_dir/results/, README.md's n = 4 and study tables and docs/COMPARE.md's slow_link table" >&2
