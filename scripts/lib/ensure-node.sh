# The Node.js the services, the tests and the sandboxes run on: Node 24 LTS (ADR 56). Source it.
# shellcheck shell=bash
#
# A host whose `node` is already 24 uses its own. Any other (Debian 12's 18, nodesource's 20,
# which reached its end of life in April 2026) gets the pinned release below, once: the npm
# registry's `node-linux-<arch>` package (nodejs.org's build, repackaged), fetched with the
# host's npm, its sha512 checked against the pin, unpacked under the user's cache directory
# (SANDBOX_CACHE_DIR) and put first on PATH for the script that sources this.

NODE_MAJOR=24
NODE_PIN=24.22.3
declare -A NODE_PIN_SHA512=(
  [x64]=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==
  [arm64]=sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==
)

ensure_node() {
  local have
  have=$(node -v 2>/dev/null || true)
  [ "${have%%.*}" = "v$NODE_MAJOR" ] && return 0
  local arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) die "no Node.js $NODE_PIN is pinned for $(uname -m): install Node.js $NODE_MAJOR" ;;
  esac
  local dir="${SANDBOX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sandbox-service}/node-v$NODE_PIN-$arch"
  if [ "$("$dir/bin/node" -v 2>/dev/null)" != "v$NODE_PIN" ]; then
    fetch_node "$arch" "$dir"
  fi
  export PATH="$dir/bin:$PATH"
}

# Fetches the pinned release for $1 (x64, arm64) into $2, whole or not at all.
fetch_node() {
  local arch=$1 dir=$2 tmp tgz sum
  command -v npm >/dev/null || die "npm is needed once, to fetch Node.js $NODE_PIN"
  log "fetching Node.js $NODE_PIN (npm package node-linux-$arch)"
  mkdir -p "$(dirname "$dir")"
  tmp=$(mktemp -d "$(dirname "$dir")/.fetching.XXXXXX") # beside it: the last move is a rename
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$NODE_PIN" >/dev/null 2>&1) \
    || { rm -rf "$tmp"; die "npm pack node-linux-$arch@$NODE_PIN failed"; }
  tgz=$tmp/node-linux-$arch-$NODE_PIN.tgz
  sum=$(node -e "process.stdout.write('sha512-' + require('crypto').createHash('sha512')
    .update(require('fs').readFileSync(process.argv[1])).digest('base64'))" "$tgz")
  if [ "$sum" != "${NODE_PIN_SHA512[$arch]}" ]; then
    rm -rf "$tmp"
    die "node-linux-$arch@$NODE_PIN does not match its pinned sha512"
  fi
  tar -xzf "$tgz" -C "$tmp" || { rm -rf "$tmp"; die "could not unpack $tgz"; }
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
  rm -rf "$tmp"
  [ "$("$dir/bin/node" -v)" = "v$NODE_PIN" ] || die "the fetched Node.js does not run here"
}
