#!/usr/bin/env bash
# The users store suite runs against a real PostgreSQL server that the tests start themselves
# from Debian's binaries. Install them when missing (root + apt), or say how.
set -euo pipefail
if [ -n "${TEST_DATABASE_URL:-}" ] || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing PostgreSQL server binaries from Debian's packages for the users store tests..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  exit 0
fi
echo "PostgreSQL server binaries not found: run 'sudo apt-get install postgresql' (or set TEST_DATABASE_URL=postgres://...)" >&2
exit 1
