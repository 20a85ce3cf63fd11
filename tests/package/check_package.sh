#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages, checked as a user would meet them: `optlog` and `optlog-engine`, built by
# CPack from the install rules, their control fields and file lists; `optlog` alone unpacked into
# a scratch root (dpkg -x), where no binary links LibTorch and `optlog run` says what to install;
# both unpacked into another, the installed optlog run against the installed presets; and the
# validators (desktop-file-validate, appstreamcli, lintian).
# Usage: check_package.sh BUILD_DIR
set -euo pipefail
build=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -B "$scratch/out" >/dev/null
deb=$(ls "$scratch"/out/optlog_*.deb)
engine_deb=$(ls "$scratch"/out/optlog-engine_*.deb)
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes), $(basename "$engine_deb") ($(stat -c %s "$engine_deb") bytes)"

field() { dpkg-deb -f "$deb" "$1"; }
engine_field() { dpkg-deb -f "$engine_deb" "$1"; }
[ "$(field Package)" = optlog ] || fail "Package is '$(field Package)'"
[ "$(engine_field Package)" = optlog-engine ] || fail "the engine's Package is '$(engine_field Package)'"
[[ "$(field Version)" =~ ^[0-9]+\.[0-9]+\.[0-9]+(\+git[0-9a-f]+)?$ ]] || fail "Version '$(field Version)'"
[ "$(engine_field Version)" = "$(field Version)" ] || fail "the engine's Version is '$(engine_field Version)'"
for dependency in libqt6widgets6 libsqlite3-0; do
  field Depends | grep -q "$dependency" || fail "Depends lacks $dependency: $(field Depends)"
done
for library in libtorch libc10 libdnnl libopenblas; do
  field Depends | grep -q "$library" && fail "optlog depends on $library: $(field Depends)"
done
for dependency in libopenblas0-pthread libtorch1.13 "optlog (= $(field Version))"; do
  engine_field Depends | grep -qF "$dependency" || fail "optlog-engine's Depends lacks $dependency: $(engine_field Depends)"
done
[ -n "$(field Maintainer)" ] && [ -n "$(field Description)" ] || fail "no Maintainer or Description"
[ -n "$(engine_field Description)" ] || fail "optlog-engine has no Description"
[ "$(dpkg-deb -c "$engine_deb" | awk '{print $6}' | grep -v '/$' | grep -v '^./usr/share/doc/optlog-engine/')" \
  = ./usr/libexec/optlog/optlog-engine ] || fail "optlog-engine holds more than the engine: $(dpkg-deb -c "$engine_deb")"

# `optlog` alone, as a laptop installs it: no binary links LibTorch, and training says what to install.
laptop="$scratch/laptop"
dpkg -x "$deb" "$laptop"
for binary in "$laptop"/usr/bin/*; do
  linked=$(ldd "$binary")
  grep -qE 'libtorch|libc10|libdnnl|libopenblas' <<<"$linked" && fail "$binary links LibTorch: $linked"
done
set +e
refusal=$(cd "$scratch" && "$laptop/usr/bin/optlog" run --preset smoke --db laptop.sqlite 2>&1)
code=$?
set -e
[ "$code" = 2 ] && grep -q "install the package optlog-engine" <<<"$refusal" \
  || fail "optlog alone: run exited $code: $refusal"
[ -e "$scratch/laptop.sqlite" ] && fail "optlog alone: the refused run made its study"
echo "optlog alone: no binary links LibTorch; optlog run says: $refusal"

files=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in usr/bin/optlog usr/bin/optlog-workbench usr/share/optlog/presets/smoke.toml \
         usr/share/optlog/studies/default.toml usr/share/man/man1/optlog.1.gz usr/share/man/man1/optlog-workbench.1.gz \
         usr/share/applications/io.github.optlog.Workbench.desktop \
         usr/share/metainfo/io.github.optlog.Workbench.metainfo.xml \
         usr/share/mime/packages/io.github.optlog.Workbench.xml \
         usr/share/icons/hicolor/scalable/apps/io.github.optlog.Workbench.svg \
         usr/share/icons/hicolor/256x256/apps/io.github.optlog.Workbench.png \
         usr/share/doc/optlog/copyright usr/share/doc/optlog/changelog.gz \
         usr/lib/python3/dist-packages/optlog/__init__.py usr/share/optlog/examples/pytorch/train.py \
         usr/share/optlog/examples/torchscript/script_model.py usr/share/optlog/examples/torchscript/moe.py; do
  grep -qx "./$f" <<<"$files" || fail "the package lacks /$f"
done
# The sdist `optlog host setup` builds on a host, where packaging/setup.sh gave the build its tools.
if grep -q '^OPTLOG_SDIST_PYTHON:FILEPATH=.' "$build/CMakeCache.txt"; then
  grep -qx './usr/share/optlog/python/optlog-[0-9.]*\.tar\.gz' <<<"$files" ||
    fail "the package lacks the sdist in /usr/share/optlog/python"
fi

root="$scratch/root"
dpkg -x "$deb" "$root"
dpkg -x "$engine_deb" "$root"
"$root/usr/bin/optlog" --version | grep -q "^optlog $(field Version | sed 's/+git.*//') " || fail "--version"
# The installed binary reads the installed presets: one only the scratch root has must work.
sed 's/^name = .*/name = "installed-preset"/' "$root/usr/share/optlog/presets/smoke.toml" \
  > "$root/usr/share/optlog/presets/pkgtest.toml"
cd "$scratch"
"$root/usr/bin/optlog" run --preset smoke --set data.corpus=generated --db installed.sqlite 2>/dev/null \
  || fail "the installed optlog run --preset smoke"
"$root/usr/bin/optlog" run --preset pkgtest --set data.corpus=generated --db installed.sqlite 2>/dev/null \
  || fail "a preset installed beside the binary was not found"
"$root/usr/bin/optlog" runs installed.sqlite | grep -q "installed-preset .*completed" || fail "the runs are not there"
echo "the installed optlog trained smoke and an installed preset into installed.sqlite"
# The installed Python module, on Debian's python3, records through the installed `optlog record`.
PATH="$root/usr/bin:$PATH" PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c '
import optlog
with optlog.Run("installed.sqlite", name="recorded", config={"lr": 0.001}, steps=2) as run:
    for step in range(2):
        run.step(step, 5.0 - step, tokens=64 * (step + 1))
' || fail "the installed Python module"
"$root/usr/bin/optlog" runs installed.sqlite | grep -q "recorded .*completed .*\[recorded\]" \
  || fail "the installed Python module's run is not there"
echo "the installed Python module recorded a run through the installed optlog record"

if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$root/usr/share/applications/io.github.optlog.Workbench.desktop" | grep -v "hint:" \
    && fail "desktop-file-validate" || true
else
  echo "skipped desktop-file-validate: not installed (desktop-file-utils)"
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.optlog.Workbench.metainfo.xml" >/dev/null \
    || fail "appstreamcli validate"
else
  echo "skipped appstreamcli validate: not installed (appstream)"
fi
if command -v lintian >/dev/null; then
  for package in "$deb" "$engine_deb"; do
    report=$(lintian --tag-display-limit 0 "$package" 2>/dev/null || true)
    grep -q "^E:" <<<"$report" && fail "lintian $(basename "$package"): $report"
    echo "lintian $(basename "$package"): $(grep -c "^W:" <<<"$report" || true) warnings"
  done
else
  echo "skipped lintian: not installed"
fi
echo "package ok"
