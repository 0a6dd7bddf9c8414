#!/usr/bin/env bash
# The whole test suite from a fresh clone of this repository's HEAD, in a new temporary folder, with
# its own empty HOME, TMPDIR, XDG_CACHE_HOME, UV_CACHE_DIR and cloudtrain caches: nothing this machine
# holds (a run folder, a cache, an environment built before, a file under /tmp) can help it pass. uv
# still downloads from the package index.
#
#   tools/fresh_clone_test.sh                  # make test in the clone (lint, then the whole suite)
#   tools/fresh_clone_test.sh -k readme -x     # with arguments: the environments, then pytest with them (no lint)
#   KEEP=1 tools/fresh_clone_test.sh ...       # keep the folder afterwards (it is removed when the run passes)
#
# Only what is committed is tested (git clone of HEAD): commit first. The folder is made under
# $FRESH_ROOT (default /tmp); it prints where, the commit, the wall time and the result.
set -euo pipefail

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse HEAD)
root=$(mktemp -d "${FRESH_ROOT:-/tmp}/cloudtrain-fresh.XXXXXX")
mkdir -p "$root/home" "$root/tmp" "$root/cache/uv"
git clone --quiet --no-hardlinks "$repo" "$root/repo"
git -C "$root/repo" checkout --quiet --detach "$commit"

# A PATH of the system's own folders, plus the folder of the uv this machine runs ($UV, else the one on PATH:
# a tool, not a cache; without one, make bootstraps it from the package index into the clone's .tools/).
path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if uv=${UV:-$(command -v uv 2>/dev/null)} && [ -x "$uv" ] || { [ -x "$repo/.tools/bin/uv" ] && uv="$repo/.tools/bin/uv"; }; then
    path="$(dirname "$uv"):$path"
fi
# How this machine reaches the package index (proxies, its certificate authorities, the index's address):
# settings of the network, not caches, so they pass; every other variable of this shell stays out.
network=()
for name in HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY http_proxy https_proxy no_proxy all_proxy \
    SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE PIP_CERT PIP_INDEX_URL PIP_EXTRA_INDEX_URL \
    UV_INDEX_URL UV_EXTRA_INDEX_URL UV_DEFAULT_INDEX UV_INDEX UV_NATIVE_TLS UV_SYSTEM_CERTS UV_HTTP_TIMEOUT; do
    if [ -n "${!name:-}" ]; then network+=("$name=${!name}"); fi
done

# The Kubernetes test cluster's binaries, built from Go modules (~15 min of 2 cores): a tool like uv, not a cache of
# results, so the clone uses this machine's build (tools/k8s/versions.sh; make test builds it when it is missing).
k8s_cache="${CLOUDTRAIN_K8S_CACHE:-$HOME/.cache/cloudtrain-k8s}"
network+=("CLOUDTRAIN_K8S_CACHE=$k8s_cache")
# This machine's interpreters in pyenv's folder (the older Pythons an old image's TensorFlow installs on, the
# clouds' Python 3.10 for tests/compat): tools, not caches, found through ~/.pyenv, which the new HOME hides.
pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}"
if [ -d "$pyenv_root/versions" ]; then network+=("PYENV_ROOT=$pyenv_root"); fi

if [ "$#" -gt 0 ]; then
    run=(bash -c 'make --no-print-directory .venv/.synced .venv-sm-toolkit/.synced &&
        "$(command -v uv || echo .tools/bin/uv)" run --frozen --all-extras pytest "$@"' pytest "$@")
else
    run=(make --no-print-directory test)
fi

echo "fresh clone of $commit in $root/repo (HOME, TMPDIR, XDG_CACHE_HOME, UV_CACHE_DIR under $root)"
start=$(date +%s)
status=0
(
    cd "$root/repo"
    env -i \
        PATH="$path" \
        HOME="$root/home" \
        TMPDIR="$root/tmp" \
        XDG_CACHE_HOME="$root/cache" \
        UV_CACHE_DIR="$root/cache/uv" \
        LANG=C.UTF-8 \
        TERM="${TERM:-dumb}" \
        "${network[@]}" \
        "${run[@]}"
) || status=$?
echo "fresh clone of $commit: $([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)") in $(( $(date +%s) - start )) s"
if [ "$status" -eq 0 ] && [ -z "${KEEP:-}" ]; then
    rm -rf "$root"
else
    echo "kept: $root"
fi
exit "$status"
