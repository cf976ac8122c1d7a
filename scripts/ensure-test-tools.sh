#!/usr/bin/env bash
# What `npm test` needs beside Node, from Debian's packages: PostgreSQL's server binaries (the
# PostgreSQL suites start their own throwaway server), SoftHSM2 (the PKCS#11 signer tests),
# util-linux `script` (a terminal for the logging tests), curl and jq (the README test), and
# Chromium (the console's browser tests, which skip, saying so, where it cannot be had). What is
# missing is installed in one apt-get call when this runs as root; otherwise it is named, with the
# command that installs it.
set -uo pipefail
has_softhsm() {
  command -v softhsm2-util >/dev/null &&
    { compgen -G "/usr/lib/softhsm/libsofthsm2.so" >/dev/null || compgen -G "/usr/lib/*/softhsm/libsofthsm2.so" >/dev/null; }
}
needed=()
if [ -z "${TEST_DATABASE_URL:-}" ] && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  needed+=(postgresql)
fi
has_softhsm || needed+=(softhsm2)
command -v script >/dev/null || needed+=(bsdutils)
command -v curl >/dev/null || needed+=(curl)
command -v jq >/dev/null || needed+=(jq)
optional=()
[ -x /usr/bin/chromium ] || optional+=(chromium)
missing=("${needed[@]}" "${optional[@]}")
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing from Debian's packages for the tests: ${missing[*]}..."
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    exit 0
  fi
fi
if [ ${#optional[@]} -gt 0 ]; then
  echo "Chromium not installed (run 'sudo apt-get install chromium'): the console's browser tests will skip" >&2
fi
if [ ${#needed[@]} -gt 0 ]; then
  echo "Missing for the tests: run 'sudo apt-get install ${needed[*]}' (or set TEST_DATABASE_URL=postgres://... for PostgreSQL)" >&2
  exit 1
fi
exit 0
