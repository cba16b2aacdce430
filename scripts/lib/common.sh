# Shared helpers for the project's scripts. Source it; do not run it.
# shellcheck shell=bash

log() { printf '[%s] %s\n' "${SCRIPT_NAME:-sandbox}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root for: $*"
  fi
}

APT_UPDATED=""
# Installs Debian packages that are missing. Third-party apt sources that cannot be reached
# must not stop the install, so a failing `apt-get update` is only a warning.
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  if [ -z "$APT_UPDATED" ]; then
    as_root apt-get update -qq >/dev/null 2>&1 || log "warning: apt-get update reported errors"
    APT_UPDATED=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
}

# Host tools the agent runs besides Docker's: zstd compresses deep-sleep archives (ADR 17);
# xfsprogs makes the copy-on-write store that session disks live in (forks, ADR 43); tar,
# setpriv, fsfreeze and mkfs.ext4 come with every Debian system.
ensure_agent_tools() {
  apt_install zstd xfsprogs
}

# Waits up to $1 seconds for the command in the remaining arguments to succeed.
wait_for() {
  local seconds=$1; shift
  local i
  for ((i = 0; i < seconds * 4; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  return 1
}
