#!/bin/sh
# A command hook that records what the agent gives it and answers as a test chose:
#   recording-hook.sh DIR EVENT
# appends its stdin as one line to DIR/EVENT.jsonl, prints DIR/EVENT.N.answer (the Nth call) or
# DIR/EVENT.answer, sleeps DIR/EVENT.sleep seconds, and exits with DIR/EVENT.exit (default 0).
dir=$1
event=$2
count=$(($(cat "$dir/$event.count" 2>/dev/null || echo 0) + 1))
echo "$count" >"$dir/$event.count"
{ tr -d '\n'; echo; } >>"$dir/$event.jsonl"
for answer in "$dir/$event.$count.answer" "$dir/$event.answer"; do
  if [ -f "$answer" ]; then
    cat "$answer"
    break
  fi
done
if [ -f "$dir/$event.sleep" ]; then sleep "$(cat "$dir/$event.sleep")"; fi
exit "$(cat "$dir/$event.exit" 2>/dev/null || echo 0)"
