# shellcheck shell=bash
# scripts/lib/ensure-userns.sh — meant to be sourced, not executed (after common.sh and
# ensure-docker.sh).
#
# Defines:
#   ensure_userns on|off   turns the Docker engine's user-namespace remapping (`userns-remap`,
#                          Docker's own `dockremap` ranges) on or off: writes it in
#                          /etc/docker/daemon.json and restarts dockerd, which reads it only at
#                          start (ADR 32). Returns non-zero, with the reason on stderr, when that
#                          cannot be done here; the engine is then left as it was.
#
# The restart stops every container of the engine, and a remapping engine keeps its images
# apart (in <data-root>/<uid>.<gid>): the sandbox image is built again after a switch. So the
# switch is refused while containers that are not the service's own run.

USERNS_DAEMON_JSON=${USERNS_DAEMON_JSON:-/etc/docker/daemon.json}

_userns_log() { printf 'ensure-userns: %s\n' "$*" >&2; }

_userns_active() {
  "$DOCKER" info --format '{{json .SecurityOptions}}' 2>/dev/null | grep -q 'name=userns'
}

# Sets (on) or removes (off) `userns-remap` in daemon.json, keeping everything else there.
_userns_write() { # on|off
  mkdir -p "$(dirname "$USERNS_DAEMON_JSON")"
  node - "$USERNS_DAEMON_JSON" "$1" <<'JS'
const fs = require('fs');
const [file, wanted] = process.argv.slice(2);
let config = {};
try { config = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { if (e.code !== 'ENOENT') throw e; }
if (wanted === 'on') config['userns-remap'] = 'default';
else delete config['userns-remap'];
fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(config, null, 2)}\n`);
fs.renameSync(`${file}.tmp`, file);
JS
}

# Running containers that are not the service's: neither a sandbox nor an installer of an agent
# (label <prefix>.managed=true) nor a gVisor probe. Fails when the engine cannot be asked.
_userns_foreign_containers() {
  local prefix=${SANDBOX_LABEL_PREFIX:-io.sandbox} running
  running=$("$DOCKER" ps --format '{{.Names}} {{.Labels}}') || return 1
  printf '%s\n' "$running" | grep -v -E "(^gvisor-probe-|(^| |,)${prefix//./\\.}\.managed=true)" \
    | grep -v '^$' || true
}

# The agent's default root, as older agents made it (0700): searchable by others, so that a
# remapped sandbox root can reach the workspaces below it (the agent checks every directory).
_userns_open_agent_root() {
  if [[ -d /var/lib/sandbox-agent ]]; then as_root chmod o+x /var/lib/sandbox-agent; fi
}

ensure_userns() { # on|off
  local wanted=$1 now=off
  [[ $wanted == on ]] && _userns_open_agent_root
  _userns_active && now=on
  [[ $now == "$wanted" ]] && return 0
  local foreign
  if ! foreign=$(_userns_foreign_containers); then
    _userns_log "not switching user-namespace remapping $wanted: the engine's containers cannot be listed"
    return 1
  fi
  if [[ -n $foreign ]]; then
    _userns_log "not switching user-namespace remapping $wanted: restarting dockerd would stop these containers:"
    printf '  %s\n' "$foreign" >&2
    return 1
  fi
  _userns_log "switching the Docker engine's user-namespace remapping $wanted (dockerd restarts)"
  local before=absent
  [[ -f $USERNS_DAEMON_JSON ]] && before=$(cat "$USERNS_DAEMON_JSON")
  _userns_write "$wanted" || return 1
  if restart_docker; then
    now=off
    _userns_active && now=on
    [[ $now == "$wanted" ]] && return 0
  fi
  # Never leave the machine without its engine: back to the settings it ran with.
  _userns_log "dockerd did not come back with user-namespace remapping $wanted; restoring $USERNS_DAEMON_JSON"
  if [[ $before == absent ]]; then rm -f "$USERNS_DAEMON_JSON"; else
    printf '%s\n' "$before" >"$USERNS_DAEMON_JSON"
  fi
  restart_docker || _userns_log "error: dockerd does not start again either"
  return 1
}
