#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only those that are missing.
# Everything the project uses comes from here: nothing is installed by hand.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  clang libclang-rt-14-dev          # the cpu backend's compiler, and libFuzzer for the parser fuzz target
  libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libxxhash-dev
  libsqlite3-dev libsqlitecpp-dev libcurl4-openssl-dev
  libssl-dev                        # HMAC-SHA256 of the workspace check ledger
  libcpp-httplib-dev                # the loopback LLM server in tests/llm
  libgtest-dev libgmock-dev
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
  libopenblas-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
