#!/bin/sh
# Stand-in for a Python with PyTorch (tests only). `-c CODE` answers
# compare's import probe; `SCRIPT FLAGS...` plays the DDP peer
# (experiments/ddp_peer.py): it checks that --data_dir holds an export
# (unless --torch_model names a model of the user's), rank
# 0 announces a rendezvous port, and every rank prints one final record
# echoing the script and its flags.
if [ "$1" = "-c" ]; then
  echo '{"torch": "0.0-standin", "distributed": true}'
  exit 0
fi
script="$1"; shift
rank=0; world=1; data=""; own=""
for a in "$@"; do
  case "$a" in
    --rank=*) rank="${a#--rank=}" ;;
    --world_size=*) world="${a#--world_size=}" ;;
    --data_dir=*) data="${a#--data_dir=}" ;;
    --torch_model=*) own="${a#--torch_model=}" ;;
  esac
done
if [ -z "$own" ] && [ ! -f "$data/meta.json" ]; then
  echo "stand-in peer: no export in '$data'" >&2
  exit 2
fi
[ "$rank" = 0 ] && echo '{"event":"rendezvous","master_port":29999}'
echo "{\"event\":\"final\",\"rank\":$rank,\"strategy\":\"ddp\",\"world_size\":$world,\"script\":\"$script\",\"args\":\"$*\",\"eval_loss\":0.5,\"measured_steps\":4,\"compute_s\":0.04,\"wall_s\":0.06,\"model_bytes\":4000000,\"num_tensors\":8,\"utilization\":0.9,\"throughput\":$((150 * world)),\"emulated\":false}"
exit 0
