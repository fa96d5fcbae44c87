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
  # ekb-device cross-built with clang --target (docs/DEVICES.md, scripts/build-device.sh): each
  # target's C and C++ libraries and binutils (Debian's gcc-cross layout, which clang finds), and
  # qemu-user to run its programs here
  libc6-dev-arm64-cross libgcc-12-dev-arm64-cross libstdc++-12-dev-arm64-cross binutils-aarch64-linux-gnu
  libc6-dev-riscv64-cross libgcc-12-dev-riscv64-cross libstdc++-12-dev-riscv64-cross binutils-riscv64-linux-gnu
  qemu-user-static
  # `ekb report --html`: D3 inlined into the page, and headless Chromium for its tests
  libjs-d3 chromium
  # A remote device (ekb eval --device NAME) is reached with ssh; tests/device start their own sshd
  # on loopback, the board an emulated aarch64 ekb-device
  openssh-client openssh-server
  # The shared results store (--db postgresql://..., docs/RESULTS.md): libpq for ekb, and the
  # server tests/results start on a private socket
  libpq-dev postgresql
  # Sharded runs on Slurm (ekb slurm, docs/SCALE_OUT.md): tests/cli start a single-node cluster
  slurm-wlm slurmctld slurmd slurm-client munge
  # The Kubernetes Indexed Job template's schema check (deploy/k8s, tests/deploy)
  python3-yaml python3-jsonschema
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

# The TVM compiler interface's Python environment (docs/TVM.md): a virtual environment at the
# repository root, .venv-tvm/ (git-ignored; every build tree of this checkout uses it), with the
# packages of python/requirements-tvm.txt. Created or completed only when a pinned package is missing.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv-tvm"
requirements="$root/python/requirements-tvm.txt"
if ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed" &&
   ! python3 -c 'import ensurepip' 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# pip's check of every pinned requirement against what is installed: no network when nothing is missing.
if ! "$venv/bin/python" - "$requirements" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, want = line.partition("==")
    try:
        have = version(name.strip())
    except PackageNotFoundError:
        sys.exit(1)
    if want and have != want.strip():
        sys.exit(1)
PY
then
  echo "install-deps: installing the TVM environment in $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
fi
