#!/bin/sh
# Fake ps_server speaking the launcher protocol (tests only).
# FAKE_SERVER_MODE: exit (default: listen, exit 0 after a moment),
#   hang (listen, then sleep until killed), fail (exit 3 before listening),
#   silent (never listen, sleep).
shard=0
for a in "$@"; do
  case "$a" in --shard=*) shard="${a#--shard=}" ;; esac
done
mode="${FAKE_SERVER_MODE:-exit}"
echo "fake server $shard: $*" >&2
case "$mode" in
  fail) echo "cannot bind port" >&2; exit 3 ;;
  silent) exec sleep 60 ;;
esac
echo "{\"event\":\"listening\",\"port\":$((40000 + shard)),\"shard\":$shard}"
if [ "$mode" = hang ]; then exec sleep 60; fi
sleep 0.2
exit 0
