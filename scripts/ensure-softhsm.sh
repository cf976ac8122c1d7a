#!/usr/bin/env bash
# The PKCS#11 signer tests make throwaway tokens in SoftHSM2, Debian's software token. Install it
# when missing (root + apt), or say how. The tests find libsofthsm2.so and softhsm2-util themselves.
set -euo pipefail
has_module() {
  compgen -G "/usr/lib/softhsm/libsofthsm2.so" >/dev/null || compgen -G "/usr/lib/*/softhsm/libsofthsm2.so" >/dev/null
}
if command -v softhsm2-util >/dev/null && has_module; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing SoftHSM2 from Debian's packages for the PKCS#11 signer tests..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends softhsm2 >/dev/null
  exit 0
fi
echo "SoftHSM2 not found: run 'sudo apt-get install softhsm2'" >&2
exit 1
