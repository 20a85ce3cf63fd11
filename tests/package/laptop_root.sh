#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The `optlog` package alone on a clean Debian 12 root, as a laptop installs it: debootstrap's
# minbase, then `apt-get install --no-install-recommends ./optlog_*.deb` (the package and what it
# depends on), and what that adds to the root (du before and after; apt's lists and downloaded
# packages left out), with the largest packages it brought; then OpenSSH's client, which it
# recommends (apt's default installs recommended packages, Mesa's drivers among them: not measured).
# Then, in that root: no binary links LibTorch, `optlog run` says what to install and writes
# nothing, a study is listed, compared and reported as PDF, the workbench starts under Xvfb, and a
# run goes to a host over SSH (tests/remote/sshhost.sh: the build's optlog with its engine, on the
# loopback) and is followed into a study there until it completes.
# Usage (root; downloads about 250 MB from deb.debian.org):
#   tests/package/laptop_root.sh BUILD_DIR      after packaging/setup.sh package
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null || fail "needs debootstrap (apt-get install debootstrap)"
deb=$(ls "$build"/optlog_*.deb) || fail "no $build/optlog_*.deb: run packaging/setup.sh package"

root=$(mktemp -d /var/tmp/optlog-laptop.XXXXXX)
hostdir=$(mktemp -d /var/tmp/optlog-laptop-host.XXXXXX)
mounts=()
cleanup() {
  "$here/tests/remote/sshhost.sh" stop "$hostdir" >/dev/null 2>&1 || true
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" 2>/dev/null || true; done
  rm -rf "$root" "$hostdir"
}
trap cleanup EXIT
in_root() { chroot "$root" env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 XDG_DATA_HOME=/root/data "$@"; }
# du of the root in KiB, without what apt keeps for itself.
installed_kib() {
  in_root apt-get clean
  du -sxk --exclude="$root/var/cache/apt" --exclude="$root/var/lib/apt/lists" "$root" | cut -f1
}

debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
in_root apt-get update -q >/dev/null
before=$(installed_kib)
cp "$deb" "$root/tmp/"
in_root dpkg-query -W -f='${Package}\n' | sort >"$root/tmp/before.txt"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" \
  >"$root/tmp/apt.log"
after=$(installed_kib)
in_root dpkg -s libtorch1.13 >/dev/null 2>&1 && fail "installing optlog brought LibTorch"
in_root dpkg-query -W -f='${Package}\n' | sort >"$root/tmp/after.txt"
added=$(comm -13 "$root/tmp/before.txt" "$root/tmp/after.txt")
echo "minbase root: $((before / 1024)) MiB; $(basename "$deb") with the $(wc -l <<<"$added") packages it depends on:" \
  "$(((after - before) / 1024)) MiB more"
echo "the largest (Installed-Size, MiB):" $(for p in $added; do
  in_root dpkg-query -W -f='${Installed-Size} ${Package}\n' "$p"; done | sort -rn | head -8 |
  awk '{printf "%s %.1f,", $2, $1 / 1024}')
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-client \
  >>"$root/tmp/apt.log"
echo "OpenSSH's client, which optlog recommends for runs on hosts: $((($(installed_kib) - after) / 1024)) MiB more"

for binary in "$root"/usr/bin/optlog "$root"/usr/bin/optlog-workbench; do
  linked=$(in_root ldd "${binary#"$root"}")
  grep -qE 'libtorch|libc10|libdnnl|libopenblas' <<<"$linked" && fail "$binary links LibTorch: $linked"
done
echo "ldd: optlog and optlog-workbench link no libtorch, libc10, libdnnl or libopenblas"

set +e
said=$(in_root sh -c 'cd /tmp && optlog run --preset smoke --db /tmp/new.sqlite' 2>&1)
code=$?
set -e
[ "$code" = 2 ] && grep -q "install the package optlog-engine" <<<"$said" || fail "optlog run exited $code: $said"
[ -e "$root/tmp/new.sqlite" ] && fail "the refused run made its study"
echo "optlog run (exit 2): $said"

# A study the build's engine trained, read there.
"$build/app/optlog" run --preset smoke --set data.corpus=generated --set train.steps=20 \
  --db "$root/tmp/study.sqlite" >/dev/null 2>&1 || fail "the build's optlog did not train the study"
in_root optlog runs /tmp/study.sqlite | grep -q completed || fail "optlog runs"
in_root optlog compare /tmp/study.sqlite >/dev/null || fail "optlog compare"
in_root optlog report /tmp/study.sqlite --format pdf -o /tmp/report.pdf >/dev/null 2>&1 || fail "optlog report"
echo "optlog runs, compare, and report: $(stat -c %s "$root/tmp/report.pdf") bytes of PDF"

# The workbench under Xvfb (installed after the measurement: not the package's): still up after 10 s.
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q xvfb xauth >/dev/null
in_root sh -c 'xvfb-run -a optlog-workbench /tmp/study.sqlite >/tmp/workbench.log 2>&1 & echo $! >/tmp/workbench.pid'
sleep 10
pgrep -f "optlog-workbench /tmp/study.sqlite" >/dev/null || fail "the workbench ended: $(cat "$root/tmp/workbench.log")"
pkill -f "optlog-workbench /tmp/study.sqlite" || true
echo "the workbench started under Xvfb and was still up after 10 s"

# A run on a host (the build's optlog, with its engine), followed from the root.
"$here/tests/remote/sshhost.sh" start "$hostdir" >/dev/null
mkdir -p "$root$hostdir" && mount --bind "$hostdir" "$root$hostdir" && mounts+=("$root$hostdir")
remote() { in_root env OPTLOG_SSH_CONFIG="$hostdir/ssh_config" XDG_CONFIG_HOME=/root/config optlog "$@"; }
remote host check optlog-test-host --optlog "$build/app/optlog" >/dev/null || fail "optlog host check"
remote run --host optlog-test-host --preset smoke --set data.corpus=generated --set train.steps=30 \
  --db /tmp/followed.sqlite >/dev/null 2>&1 || fail "optlog run --host"
in_root optlog runs /tmp/followed.sqlite | grep -q completed || fail "the followed run is not completed here"
echo "a run trained on the host and was followed into /tmp/followed.sqlite until it completed"
echo "laptop root ok"
