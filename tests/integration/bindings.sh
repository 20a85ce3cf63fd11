#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every std:: symbol that a binary of ours uses binds to the system's libstdc++, never to a copy
# that LibTorch's libraries export (a wheel's libtorch.so and libc10.so do: issue 70, where
# optlog's std::filesystem::remove_all ran the wheel's copy and jumped to address 0). The dynamic
# linker itself says where each symbol went: LD_DEBUG=bindings, every symbol at start
# (LD_BIND_NOW=1), for a command that loads LibTorch and does nothing else.
#   bindings.sh BINARY [ARGUMENTS...]
set -euo pipefail
binary=$(readlink -f "$1")
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
LD_DEBUG=bindings LD_BIND_NOW=1 LD_DEBUG_OUTPUT="$log" "$binary" "$@" >/dev/null
# "binding file /path/binary [0] to /path/library [0]: normal symbol `_ZN...' [GLIBCXX_3.4.26]"
ours=$(cat "$log".* | sed -n "s|.*binding file $binary \[0\] to \([^ ]*\) \[0\]: normal symbol \`\([^']*\)'.*|\2 \1|p" \
  | sort -u)
rm -f "$log".*
# Demangled, each line keeps its library last.
std=$(echo "$ours" | c++filt | grep -E '^((typeinfo|typeinfo name|vtable|VTT) for )?std::' || true)
[ -n "$std" ] || { echo "bindings.sh: no std:: symbol of $binary bound at all; the log's format changed?" >&2; exit 1; }
wrong=$(echo "$std" | grep -E ' [^ ]*/lib(torch|c10)[^/ ]*\.so[^/ ]*$' || true)
if [ -n "$wrong" ]; then
  echo "bindings.sh: std:: symbols of $binary bound into LibTorch's libraries, not libstdc++:" >&2
  echo "$wrong" >&2
  exit 1
fi
echo "bindings.sh: $(echo "$std" | wc -l) std:: symbols of $binary, none bound into libtorch or libc10;" \
  "$(echo "$std" | grep -c 'libstdc++') to libstdc++"
