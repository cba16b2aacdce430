# Puts the project's Node.js first on PATH (ensure-node.sh), then installs pnpm (pinned in
# package.json) and the workspace's packages. Source it.
# shellcheck shell=bash
# shellcheck source=ensure-node.sh
source "$(dirname "${BASH_SOURCE[0]}")/ensure-node.sh"

ensure_node_deps() {
  local root=$1 want
  ensure_node
  want=$(node -p "require('$root/package.json').packageManager.split('@')[1]")
  if ! command -v pnpm >/dev/null || [ "$(pnpm --version 2>/dev/null)" != "$want" ]; then
    log "installing pnpm $want"
    npm install -g --silent "pnpm@$want" >/dev/null 2>&1 || die "npm install -g pnpm@$want failed"
  fi
  # Fast when node_modules is already in step with the lockfile.
  (cd "$root" && pnpm install --frozen-lockfile --prefer-offline --reporter=silent) \
    || die "pnpm install failed"
}
