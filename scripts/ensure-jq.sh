#!/usr/bin/env bash
# The README test (test/readme.test.ts) runs the README's curl examples, which read answers with jq.
# Install curl and jq from Debian's packages when missing (root + apt), or say how.
set -euo pipefail
if command -v jq >/dev/null && command -v curl >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing jq and curl from Debian's packages for the README test..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends jq curl >/dev/null
  exit 0
fi
echo "jq or curl not found: run 'sudo apt-get install jq curl'" >&2
exit 1
