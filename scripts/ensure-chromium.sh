#!/usr/bin/env bash
# The console's browser tests drive Debian's Chromium (/usr/bin/chromium) with playwright-core.
# Install it when missing (root + apt), the way ensure-postgres.sh installs PostgreSQL; where it
# cannot be installed, say so and go on: those tests then skip, saying so in one line.
set -uo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Chromium from Debian's packages for the console's browser tests..."
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; then
    exit 0
  fi
fi
echo "Chromium not installed (run 'sudo apt-get install chromium'): the console's browser tests will skip" >&2
exit 0
