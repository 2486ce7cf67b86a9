#!/usr/bin/env bash
# Installs what Tessera needs to build and test on Debian 12.
set -euo pipefail
PKGS=(build-essential cmake pkg-config
      libprotobuf-c-dev protobuf-c-compiler
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
      libdnnl-dev libcunit1-dev libpcre2-dev
      libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev
      python3 python3-onnx python3-numpy python3-jsonschema
      python3-dev python3-pytest python3-setuptools python3-venv
      clang)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
