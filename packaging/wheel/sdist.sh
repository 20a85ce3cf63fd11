#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# optlog's sdist, as pyproject.toml makes it, in OUTDIR, again only when the tree has changed:
#   packaging/wheel/sdist.sh PYTHON OUTDIR
# PYTHON has scikit-build-core and build (packaging/wheel/requirements.txt). The build runs this at
# every build (cmake/Packaging.cmake): what the sdist would hold is keyed by the commit, the
# uncommitted changes and the untracked files, so an unchanged tree costs a few git calls.
set -euo pipefail
[ $# -eq 2 ] || {
  echo "usage: packaging/wheel/sdist.sh PYTHON OUTDIR" >&2
  exit 2
}
python=$1 out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
key=$(cd "$here" && { git rev-parse HEAD && git diff HEAD && git ls-files --others --exclude-standard; } | sha256sum)
if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && ls "$out"/optlog-*.tar.gz >/dev/null 2>&1; then
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
"$python" -m build --sdist --no-isolation --outdir "$out" "$here" >"$out/build.log" 2>&1 || {
  cat "$out/build.log" >&2
  exit 1
}
echo "$key" >"$out/key"
