# Keeps a service running: the supervisor behind ./scripts/up. Source it; do not run it.
# shellcheck shell=bash
#
#   supervise NAME LOG COMMAND...   (run it in the background: `supervise ... &`)
#
# Runs COMMAND with its output appended to LOG. When it exits, for whatever reason, the exit
# is logged (to stderr, and in LOG) and COMMAND starts again after a back-off: 1 s, doubling
# up to SUPERVISE_MAX_DELAY_S (30 s), back to 1 s once a start has lived
# SUPERVISE_HEALTHY_AFTER_S (60 s). A crash never stops the other services. SIGTERM to the
# supervisor stops COMMAND (SIGTERM, and SIGKILL after SUPERVISE_STOP_TIMEOUT_S) and ends it.

supervise() {
  set +e # a crash is what this handles: never the end of the supervisor (it runs in a subshell)
  local name=$1 log_file=$2
  shift 2
  local delay=1 max_delay=${SUPERVISE_MAX_DELAY_S:-30} healthy_after=${SUPERVISE_HEALTHY_AFTER_S:-60}
  local child="" started status stopping=0
  trap 'stopping=1; supervise_stop "$child"; exit 0' TERM INT
  while [ "$stopping" -eq 0 ]; do
    started=$SECONDS
    "$@" >>"$log_file" 2>&1 &
    child=$!
    wait "$child"
    status=$?
    child=""
    if [ $((SECONDS - started)) -ge "$healthy_after" ]; then delay=1; fi
    supervise_log "$name" "$log_file" "exited with status $status; restarting in ${delay}s"
    sleep "$delay" &
    child=$!
    wait "$child" || true
    child=""
    delay=$((delay * 2 > max_delay ? max_delay : delay * 2))
  done
}

supervise_log() { # name, log file, message
  local line
  line="[supervise] $(date -u +%Y-%m-%dT%H:%M:%SZ) $1 $3"
  printf '%s\n' "$line" >&2
  printf '%s\n' "$line" >>"$2"
}

supervise_stop() { # pid: TERM, then KILL if it has not ended in time
  local pid=$1 i
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < ${SUPERVISE_STOP_TIMEOUT_S:-10} * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}
