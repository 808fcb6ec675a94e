#!/usr/bin/env bash
# Installs what building, testing and benchmarking need, when it is missing.
# Debian 12 packages only; as root it runs apt-get, otherwise it names the
# packages to install and fails.
set -euo pipefail

# clang and libclang-rt-14-dev (libFuzzer and clang's sanitizer runtimes) build the fuzz targets;
# git, expect, strace, util-linux (script, unshare, setpriv) and python3-venv are real tools the
# livability tests drive inside the sandbox (tests/livability);
# scdoc builds the man pages; openssh-server and openssh-client run the remote provider's tests
# (a throwaway sshd on 127.0.0.1) and its benchmark.
# libevent-dev (the event loop of the allow-list's proxy and DNS stub, src/network/) and
# libhttp-parser-dev (the proxy's request-head grammar) are linked into the library (src/network/
# reads its few DNS fields itself: libldns' static archive would pull OpenSSL into dsh-sandbox);
# dnsmasq-base is the logging upstream resolver the network tests start on loopback; curl and
# openssl are their proxy-aware client and the maker of their TLS server's certificate.
packages=(build-essential meson ninja-build pkg-config libjansson-dev libcmocka-dev
          libseccomp-dev bubblewrap hyperfine python3 python3-venv clang libclang-rt-14-dev scdoc
          openssh-server openssh-client git expect strace util-linux
          libevent-dev libhttp-parser-dev dnsmasq-base curl openssl)
# node and npm run the MCP tests' client (tests/mcp, installed by ensure-npm-deps.sh).  Asked for
# only when missing: a host may have them from elsewhere (NodeSource's nodejs carries npm).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-deps: missing packages: ${missing[*]}" >&2
  echo "ensure-deps: install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "ensure-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
