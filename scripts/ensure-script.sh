#!/usr/bin/env bash
# The logging tests run the service under util-linux `script`, which gives it a terminal (Debian's
# bsdutils package). Install it when missing (root + apt), or say how.
set -euo pipefail
if command -v script >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing util-linux script (Debian's bsdutils) for the logging tests..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends bsdutils >/dev/null
  exit 0
fi
echo "util-linux script not found: run 'sudo apt-get install bsdutils'" >&2
exit 1
