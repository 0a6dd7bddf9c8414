#!/usr/bin/env bash
# The test cluster's pod images, made offline into the cache: a pause image (busybox-static) and a Debian
# bookworm rootfs with Python (debootstrap). Skips what is already there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/versions.sh"
images="$K8S_CACHE/images"
mkdir -p "$images"
if [ ! -f "$images/pause.tar" ]; then
  root="$(mktemp -d)"
  mkdir -p "$root/bin"
  cp /bin/busybox "$root/bin/busybox"
  ln -s busybox "$root/bin/sh"
  ln -s busybox "$root/bin/sleep"
  python3 "$here/oci_image.py" "$root" registry.k8s.io/pause:3.10 "$images/pause.tar.tmp" --cmd /bin/sleep infinity
  mv "$images/pause.tar.tmp" "$images/pause.tar"
  rm -rf "$root"
fi
if [ ! -f "$images/debian-python.tar" ]; then
  start=$(date +%s)
  root="$(mktemp -d)"
  nice -n 19 debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" \
    http://deb.debian.org/debian >"$images/debootstrap.log" 2>&1
  rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
  python3 "$here/oci_image.py" "$root" cloudtrain.local/debian-python:bookworm "$images/debian-python.tar.tmp"
  mv "$images/debian-python.tar.tmp" "$images/debian-python.tar"
  rm -rf "$root"
  echo "made debian-python in $(( $(date +%s) - start )) s"
fi
ls -la "$images"
