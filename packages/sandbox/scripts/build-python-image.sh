#!/usr/bin/env bash
# Builds a small local image for the container provider from this machine's Debian python3 (no
# registry needed): the interpreter, its standard library and the shared libraries it loads.
# Usage: build-python-image.sh [image-name]   (default localhost/ng-sandbox-python:latest)
set -euo pipefail
image=${1:-localhost/ng-sandbox-python:latest}
py=/usr/bin/python3
[[ -x $py ]] || { echo "needs Debian's python3 at $py (apt-get install python3)" >&2; exit 1; }
real=$(readlink -f "$py")
ver=$("$real" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Shared libraries of the interpreter and of its extension modules.
libs=$( { ldd "$real"; find "/usr/lib/python$ver/lib-dynload" -name '*.so' -exec ldd {} \; ; } 2>/dev/null | grep -o '/[^ ]*\.so[^ ]*' | sort -u)
files=("${real#/}" "usr/bin/python3" "usr/lib/python$ver" etc/passwd etc/group)
for l in $libs; do files+=("${l#/}"); done
tar -C / -chf "$work/rootfs.tar" --exclude='__pycache__' --exclude="usr/lib/python$ver/test" "${files[@]}"
podman import --change 'CMD ["/usr/bin/python3"]' "$work/rootfs.tar" "$image" >/dev/null
echo "built $image ($(du -h "$work/rootfs.tar" | cut -f1) tar)"
