#!/bin/sh
# Fake worker speaking the launcher protocol (tests only): one step record
# and one final record that echoes the flags it got.
# FAKE_WORKER_FAIL_RANK=r: rank r prints "boom" to stderr and exits 2.
# FAKE_WORKER_NO_FINAL=1: exit 0 without a final record.
# --model=synthetic: the final record says "emulated":true.
# --export_batches=DIR: writes DIR/meta.json and exits (the DDP row's data);
# with FAKE_WORKER_EXPORTS=FILE it also appends DIR to FILE.
# FAKE_WORKER_OPT_IN=1: also lists ring_topk outside the default sweep
# ("default_sweep":false).
# FAKE_WORKER_ASYNC=1: also lists async_ps (study flag --staleness=2) and
# hierarchical; their final records carry a variant as the real ones do
# ("τ=<--staleness>", "<hosts>×<--local_size or world>").
# FAKE_WORKER_EVAL=1 with --eval_every=E > 0: eval records after step t when
# (t + 1) % E == 0 and after the last, samples (t + 1)·world·32,
# train_wall_s 0.1·(t + 1), loss 1 + 2/(t + 1) for the baseline and
# 1 + 1/(t + 1) for the others on rank 0 (9 on the other ranks).
# --seed=K: every eval loss 0.1·(K − 1) higher, the final record's
# eval_loss 0.5 + 0.125·(K − 1).
# --count_gpus: {"cuda_devices":FAKE_WORKER_GPUS} (default 2; 0 with a
# "why"). FAKE_WORKER_NCCL=1: also lists ring, on device buffers
# ("gpu_per_rank":true, as the baseline is).
# FAKE_WORKER_COUNTER=FILE: rank 0's wall_s is 0.08, 0.12, 0.16, 0.08, ...
# over its successive runs (a line appended to FILE per run).
rank=0; world=1; servers=""; strategy=""; steps=0; emulated=false
staleness=0; local_size=0; eval_every=0; device=cpu; seed=1
for a in "$@"; do
  case "$a" in
    --count_gpus)
      if [ "${FAKE_WORKER_GPUS:-2}" = 0 ]; then
        echo '{"cuda_devices":0,"why":"no GPU here (a test)"}'
      else
        echo "{\"cuda_devices\":${FAKE_WORKER_GPUS:-2}}"
      fi
      exit 0 ;;
    --list_strategies)
      echo '{"name":"baseline","servers":"none","display_name":"Baseline","study_order":0,"modelled_as":"baseline","gpu_per_rank":true}'
      echo '{"name":"sps","servers":"one","display_name":"SPS","study_order":1,"modelled_as":"sps","options":["chunk_kb"]}'
      echo '{"name":"dps","servers":"sharded","display_name":"DPS","study_order":2,"modelled_as":"dps","options":["chunk_kb"],"cuda_runs":false,"cuda":"not supported (a test)"}'
      [ -n "$FAKE_WORKER_ASYNC" ] && echo '{"name":"async_ps","servers":"sharded","display_name":"Async PS","study_order":5,"options":["staleness","chunk_kb"],"study_flags":["--staleness=2"],"variant_options":["staleness"]}'
      [ -n "$FAKE_WORKER_NCCL" ] && echo '{"name":"ring","servers":"none","display_name":"Ring","study_order":3,"modelled_as":"ring","gpu_per_rank":true}'
      [ -n "$FAKE_WORKER_OPT_IN" ] && echo '{"name":"ring_topk","servers":"none","display_name":"Ring Top-k","study_order":15,"default_sweep":false}'
      [ -n "$FAKE_WORKER_ASYNC" ] && echo '{"name":"hierarchical","servers":"none","display_name":"Hierarchical","study_order":6,"options":["local_size"],"variant_options":["local_size"]}'
      exit 0 ;;
    --export_batches=*)
      mkdir -p "${a#--export_batches=}" &&
        echo '{"format":"ringside-batches-1"}' > "${a#--export_batches=}/meta.json"
      [ -n "$FAKE_WORKER_EXPORTS" ] && echo "${a#--export_batches=}" >> "$FAKE_WORKER_EXPORTS"
      echo "{\"event\":\"exported\"}"
      exit 0 ;;
    --rank=*) rank="${a#--rank=}" ;;
    --world_size=*) world="${a#--world_size=}" ;;
    --servers=*) servers="${a#--servers=}" ;;
    --strategy=*) strategy="${a#--strategy=}" ;;
    --steps=*) steps="${a#--steps=}" ;;
    --model=synthetic) emulated=true ;;
    --staleness=*) staleness="${a#--staleness=}" ;;
    --local_size=*) local_size="${a#--local_size=}" ;;
    --eval_every=*) eval_every="${a#--eval_every=}" ;;
    --device=*) device="${a#--device=}" ;;
    --seed=*) seed="${a#--seed=}" ;;
  esac
done
echo "fake worker $rank/$world: $*" >&2
echo "a line that is not JSON"
if [ "$rank" = "${FAKE_WORKER_FAIL_RANK:-none}" ]; then
  echo "boom on rank $rank" >&2
  exit 2
fi
echo "{\"event\":\"step\",\"step\":0,\"loss\":1.5}"
if [ -n "$FAKE_WORKER_EVAL" ] && [ "$eval_every" -gt 0 ]; then
  awk -v steps="$steps" -v every="$eval_every" -v world="$world" \
      -v rank="$rank" -v base="$([ "$strategy" = baseline ] && echo 2 || echo 1)" \
      -v seed="$seed" \
      'BEGIN { for (t = 0; t < steps; ++t) {
        if ((t + 1) % every != 0 && t != steps - 1) continue
        loss = rank == 0 ? 1 + base / (t + 1) + 0.1 * (seed - 1) : 9
        printf "{\"event\":\"eval\",\"rank\":%d,\"step\":%d,\"samples\":%d,\"train_wall_s\":%g,\"loss\":%g}\n", rank, t, (t + 1) * world * 32, 0.1 * (t + 1), loss
      } }'
fi
[ -n "$FAKE_WORKER_NO_FINAL" ] && exit 0
variant=""
[ "$strategy" = async_ps ] && variant=",\"variant\":\"τ=$staleness\""
if [ "$strategy" = hierarchical ]; then
  [ "$local_size" -gt 0 ] 2>/dev/null || local_size=$world
  variant=",\"variant\":\"$((world / local_size))×$local_size\""
fi
wall=0.08
if [ -n "$FAKE_WORKER_COUNTER" ] && [ "$rank" = 0 ]; then
  count=$(cat "$FAKE_WORKER_COUNTER" 2>/dev/null | wc -l)
  echo run >> "$FAKE_WORKER_COUNTER"
  wall=$(awk -v c="$count" 'BEGIN { print 0.08 + 0.04 * (c % 3) }')
fi
echo "{\"event\":\"final\",\"rank\":$rank,\"strategy\":\"$strategy\",\"world_size\":$world,\"servers\":\"$servers\",\"steps\":$steps,\"args\":\"$*\",\"eval_loss\":$(awk -v s="$seed" 'BEGIN { print 0.5 + 0.125 * (s - 1) }'),\"measured_steps\":4,\"compute_s\":0.04,\"wall_s\":$wall,\"model_bytes\":4000000,\"num_tensors\":8,\"utilization\":0.$((8 - rank)),\"throughput\":$((100 * world)),\"emulated\":$emulated,\"device\":\"$device\"$variant}"
exit 0
