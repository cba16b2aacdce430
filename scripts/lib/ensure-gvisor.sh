# shellcheck shell=bash
# scripts/lib/ensure-gvisor.sh — meant to be sourced, not executed (after common.sh and
# ensure-docker.sh).
#
# Defines:
#   GVISOR_RUNTIME   the name under which Docker knows gVisor as configured here: `gvisor`.
#   ensure_gvisor    installs Debian's runsc, registers it with the running Docker engine as
#                    $GVISOR_RUNTIME (in /etc/docker/daemon.json, reloaded without a restart) and
#                    proves that a sandbox container starts under it with its network. Returns
#                    non-zero, with the reason on stderr, when any of that fails on this machine.
#
# The configuration (ADR 31):
# - runsc from Debian 13 (trixie), pinned to that one package: bookworm's build (2022) fails
#   `statx` as coreutils calls it (`ls` and `stat` answer EINVAL for every path) and has no
#   systrap platform.
# - `--platform=systrap`: no /dev/kvm needed (`kvm` spun a core without starting here), and about
#   two host tasks per sandbox process where `ptrace` takes ten.
# - `--network=host`: gVisor's own network stack refuses to run in the network namespace Docker
#   gives it ("cannot run with network enabled in root network namespace"). With `host`, the
#   Sentry makes the network calls itself, in the container's own namespace, so the bridge, the
#   egress firewall, the per-session DNS rules and previews work unchanged.

GVISOR_RUNTIME=gvisor
GVISOR_DAEMON_JSON=${GVISOR_DAEMON_JSON:-/etc/docker/daemon.json}
# The oldest runsc build that works here (its version is 0.0~YYYYMMDD).
GVISOR_MIN_BUILD=20240101

_gvisor_log() { printf 'ensure-gvisor: %s\n' "$*" >&2; }

_gvisor_registered() {
  "$DOCKER" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q "\"$GVISOR_RUNTIME\""
}

# Adds (or updates) the runtime in daemon.json, keeping everything else the operator put there.
_gvisor_register() {
  local runsc
  runsc=$(command -v runsc) || return 1
  mkdir -p "$(dirname "$GVISOR_DAEMON_JSON")"
  local rc=0
  node - "$GVISOR_DAEMON_JSON" "$GVISOR_RUNTIME" "$runsc" <<'JS' || rc=$?
const fs = require('fs');
const [file, name, path] = process.argv.slice(2);
let config = {};
try { config = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { if (e.code !== 'ENOENT') throw e; }
const wanted = { path, runtimeArgs: ['--platform=systrap', '--network=host'] };
config.runtimes = config.runtimes ?? {};
if (JSON.stringify(config.runtimes[name]) === JSON.stringify(wanted)) process.exit(10);
config.runtimes[name] = wanted;
fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(config, null, 2)}\n`);
fs.renameSync(`${file}.tmp`, file);
JS
  [[ $rc -eq 10 ]] && _gvisor_registered && return 0 # as wanted, and loaded
  [[ $rc -eq 0 || $rc -eq 10 ]] || return 1
  # dockerd rereads `runtimes` on SIGHUP: no restart, running containers are untouched.
  local pid
  pid=$(dockerd_pid) || { _gvisor_log "dockerd is not running here"; return 1; }
  as_root kill -HUP "$pid"
  wait_for 15 _gvisor_registered
}

# A sandbox-like container (no capability, uid 1000, read-only root, bridge network) must start,
# run Node and see an IPv4 address of its own within a minute.
_gvisor_probe() {
  local image=$1 name
  name="gvisor-probe-$$"
  if timeout 60 "$DOCKER" run --rm --name "$name" --runtime "$GVISOR_RUNTIME" --cap-drop ALL \
    --user 1000:1000 --read-only --security-opt no-new-privileges:true "$image" \
    node -e 'const a = Object.values(require("os").networkInterfaces()).flat();
      process.exit(a.some((i) => i.family === "IPv4" && !i.internal) ? 0 : 3)' >/dev/null 2>&1; then
    return 0
  fi
  # A half-started gVisor sandbox keeps a core busy: never leave one behind.
  "$DOCKER" rm -f "$name" >/dev/null 2>&1 || true
  return 1
}

# The build date of the installed runsc (0 when there is none).
_gvisor_build() {
  local version
  version=$(runsc --version 2>/dev/null | sed -n 's/^runsc version 0\.0~\([0-9]\{8\}\).*/\1/p')
  echo "${version:-0}"
}

# Debian 13's runsc, and nothing else from Debian 13: its source and a pin that keeps every
# other package where it is. apt checks the release's signature as for any other source.
_gvisor_install() {
  local list=/etc/apt/sources.list.d/sandbox-runsc-trixie.list
  as_root tee "$list" >/dev/null <<'LIST'
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
LIST
  as_root tee /etc/apt/preferences.d/sandbox-runsc-trixie >/dev/null <<'PIN'
Package: *
Pin: release n=trixie
Pin-Priority: 1

Package: runsc
Pin: release n=trixie
Pin-Priority: 990
PIN
  as_root apt-get update -qq -o Dir::Etc::sourcelist="$list" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0 >/dev/null || return 1
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    runsc >/dev/null
}

ensure_gvisor() { # image to probe with
  local image=$1
  if (($(_gvisor_build) < GVISOR_MIN_BUILD)); then
    _gvisor_log "installing runsc from Debian 13 (trixie)"
    _gvisor_install || { _gvisor_log "Debian's runsc package could not be installed"; return 1; }
    (($(_gvisor_build) >= GVISOR_MIN_BUILD)) || {
      _gvisor_log "runsc $(_gvisor_build) is older than $GVISOR_MIN_BUILD"
      return 1
    }
  fi
  _gvisor_register || { _gvisor_log "could not register runsc with the Docker engine"; return 1; }
  _gvisor_probe "$image" || {
    _gvisor_log "a sandbox container did not start under gVisor on this machine"
    return 1
  }
}
