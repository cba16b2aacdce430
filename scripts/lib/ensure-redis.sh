# Installs and starts a local Redis from Debian's packages. Source it; `ensure_redis` prints
# the REDIS_URL.
# shellcheck shell=bash

REDIS_PORT=${REDIS_PORT:-6379}

# Everything but the URL goes to stderr: callers capture stdout.
ensure_redis() {
  start_redis >&2 || return 1
  echo "redis://127.0.0.1:$REDIS_PORT"
}

start_redis() {
  apt_install redis-server
  if ! redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
    log "starting Redis on port $REDIS_PORT"
    as_root redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes \
      --save '' --appendonly no --logfile /var/log/sandbox-redis.log >/dev/null
    wait_for 20 sh -c "redis-cli -p $REDIS_PORT ping | grep -q PONG" || die "Redis did not start"
  fi
}
