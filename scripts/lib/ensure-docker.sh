# shellcheck shell=bash
# scripts/lib/ensure-docker.sh — meant to be sourced, not executed.
#
# Defines:
#   ensure_docker   make sure a working Docker daemon is reachable; installs
#                   docker.io (Debian) and starts dockerd in the background if
#                   needed. Returns non-zero with a clear message on failure.
#   restart_docker  stops dockerd (its containers with it) and starts it again,
#                   to load settings it reads only at start; waits until it answers.
#   dockerd_pid     prints the pid of the node's running dockerd (its pid file first).
#   DOCKER          the docker client to use (/usr/bin/docker when present).
#
# Safe to source from scripts running under `set -euo pipefail`; it does not
# change the caller's shell options.

: "${DOCKER:=}"
if [[ -z $DOCKER ]]; then
  if [[ -x /usr/bin/docker ]]; then DOCKER=/usr/bin/docker; else DOCKER=docker; fi
fi

ENSURE_DOCKER_LOG=${ENSURE_DOCKER_LOG:-/var/log/sandbox-dockerd.log}
# Present when systemd is the service manager (a test points it elsewhere).
SYSTEMD_RUN_DIR=${SYSTEMD_RUN_DIR:-/run/systemd/system}
ENSURE_DOCKER_TIMEOUT=${ENSURE_DOCKER_TIMEOUT:-60}

_ensure_docker_log() { printf 'ensure-docker: %s\n' "$*" >&2; }

# After an install: switch to /usr/bin/docker if the current client is missing.
_ensure_docker_client() {
  if ! command -v "$DOCKER" >/dev/null 2>&1 && [[ -x /usr/bin/docker ]]; then
    DOCKER=/usr/bin/docker
  fi
}

_ensure_docker_ok() {
  "$DOCKER" info >/dev/null 2>&1
}

# The pid of the running (root) dockerd, from /proc: needs neither procps nor sysvinit-utils
# (both may be absent on a minimal system). A user's rootless dockerd is not it.
# The engine this node's scripts start writes /var/run/docker.pid (dockerd's default): that
# names it even when another root process is named dockerd (a second engine for research).
# Without the file (an engine started otherwise), the first root process named dockerd.
DOCKERD_PIDFILE=${DOCKERD_PIDFILE:-/var/run/docker.pid}
dockerd_pid() {
  local comm f uid pid
  if { read -r pid <"$DOCKERD_PIDFILE"; } 2>/dev/null && [[ $pid =~ ^[0-9]+$ ]] &&
    { read -r comm <"/proc/$pid/comm"; } 2>/dev/null && [[ $comm == dockerd ]]; then
    echo "$pid"
    return 0
  fi
  for f in /proc/[0-9]*/comm; do
    { read -r comm <"$f"; } 2>/dev/null || continue
    [[ $comm == dockerd ]] || continue
    uid=$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' "${f%/comm}/status" 2>/dev/null) || continue
    if [[ $uid == 0 ]]; then
      f=${f#/proc/}
      echo "${f%/comm}"
      return 0
    fi
  done
  return 1
}

_ensure_docker_dockerd_running() {
  dockerd_pid >/dev/null
}

_ensure_docker_systemd() {
  [[ -d $SYSTEMD_RUN_DIR ]] && command -v systemctl >/dev/null 2>&1
}

# `systemctl start|restart docker`. systemd refuses a unit that failed to start too often in a
# short time (docker.service: 3 times in 60 s), and its own restarts of a dockerd that dies at
# start count: a start after such failures (a setting rolled back, say) clears that count first.
_ensure_docker_systemctl() { # start|restart
  systemctl reset-failed docker >/dev/null 2>&1 || true
  systemctl "$1" docker >/dev/null 2>&1
}

_ensure_docker_install() {
  if [[ $(id -u) -ne 0 ]]; then
    _ensure_docker_log "error: docker is not installed and installing it needs root (re-run as root)"
    return 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    _ensure_docker_log "error: docker is not installed and apt-get is unavailable; install Docker manually"
    return 1
  fi
  _ensure_docker_log "installing docker.io and iptables with apt-get"
  # Third-party sources may be broken; only a failed install is fatal.
  apt-get update || _ensure_docker_log "warning: apt-get update reported errors; trying the install anyway"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends docker.io iptables; then
    _ensure_docker_log "error: apt-get install docker.io iptables failed"
    return 1
  fi
  _ensure_docker_client
}

_ensure_docker_start() {
  # Prefer the service manager when there is one (apt may already have started it).
  if _ensure_docker_systemd; then
    _ensure_docker_log "starting docker with systemctl"
    _ensure_docker_systemctl start || true
    _ensure_docker_dockerd_running && return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then
    _ensure_docker_log "error: dockerd is not running and starting it needs root"
    return 1
  fi
  _ensure_docker_log "starting dockerd in the background (log: $ENSURE_DOCKER_LOG)"
  mkdir -p "$(dirname "$ENSURE_DOCKER_LOG")"
  # setsid: own session, so it outlives the calling script and its terminal.
  setsid nohup dockerd >"$ENSURE_DOCKER_LOG" 2>&1 </dev/null &
  disown 2>/dev/null || true
}

restart_docker() {
  if _ensure_docker_systemd && systemctl is-active --quiet docker 2>/dev/null; then
    _ensure_docker_log "restarting docker with systemctl"
    _ensure_docker_systemctl restart || return 1
  else
    local pid i
    if pid=$(dockerd_pid); then
      _ensure_docker_log "stopping dockerd ($pid)"
      kill -TERM "$pid" || return 1
      for ((i = 0; i < 120; i++)); do
        [[ -d /proc/$pid ]] || break
        sleep 0.5
      done
      if [[ -d /proc/$pid ]]; then
        _ensure_docker_log "error: dockerd ($pid) did not stop within a minute"
        return 1
      fi
    fi
  fi
  ensure_docker
}

# The default bridge's interface (docker0) is made by dockerd at start only: an engine that
# runs without it (removed by hand, or by a second engine started with "bridge": "none")
# starts no container on the default network, and gVisor's probe uses it. Restarting brings it
# back (and stops the containers: only ever for an engine already broken this way).
_ensure_docker_default_bridge() {
  local name
  name=$("$DOCKER" network inspect bridge \
    -f '{{index .Options "com.docker.network.bridge.name"}}' 2>/dev/null) || return 0
  [[ -z $name || -e /sys/class/net/$name ]] && return 0
  # Once: an engine that does not make it again is left as it is.
  [[ -n ${_ENSURE_DOCKER_BRIDGE_RESTART:-} ]] && return 0
  _ensure_docker_log "the default bridge's interface $name is missing: restarting dockerd"
  _ENSURE_DOCKER_BRIDGE_RESTART=1 restart_docker
}

ensure_docker() {
  if _ensure_docker_ok; then
    _ensure_docker_default_bridge
    return
  fi

  # dockerd lives in /usr/sbin, which is not always on a non-root PATH.
  case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH="$PATH:/usr/sbin:/sbin" ;; esac
  if ! command -v dockerd >/dev/null 2>&1; then
    _ensure_docker_install || return 1
  fi

  if ! _ensure_docker_dockerd_running; then
    _ensure_docker_start || return 1
  else
    _ensure_docker_log "dockerd is running; waiting for it to answer"
  fi

  local i
  for ((i = 0; i < ENSURE_DOCKER_TIMEOUT; i++)); do
    if _ensure_docker_ok; then
      _ensure_docker_log "docker is ready"
      return 0
    fi
    sleep 1
  done

  _ensure_docker_log "error: docker did not become ready within ${ENSURE_DOCKER_TIMEOUT}s"
  if [[ -r $ENSURE_DOCKER_LOG ]]; then
    _ensure_docker_log "last lines of $ENSURE_DOCKER_LOG:"
    tail -n 20 "$ENSURE_DOCKER_LOG" >&2 || true
  fi
  "$DOCKER" info 2>&1 | tail -n 5 >&2 || true
  return 1
}
