#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A second host reached over real OpenSSH, in a scratch folder, for the tests of remote runs:
#
#   tests/remote/sshhost.sh start DIR [--netns]
#       DIR must be new or empty. Writes keys, DIR/sshd_config and DIR/ssh_config there, starts
#       sshd as the current user (root), waits until ssh gets in and prints the two lines
#         config=DIR/ssh_config
#         host=optlog-test-host
#       so that `ssh -F DIR/ssh_config optlog-test-host CMD` runs CMD on the host, with
#       XDG_DATA_HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME under DIR/host. The alias
#       optlog-unreachable-host in the same config names a host that never answers.
#       Without --netns sshd listens on 127.0.0.1 at a free port and the unreachable host is a
#       closed port there (refused at once). With --netns it runs in a network namespace of its
#       own behind a veth pair, which cut and restore can unplug; the unreachable host is then an
#       address on that link that nobody has (ssh gives up after its ConnectTimeout of 2 s).
#   tests/remote/sshhost.sh cut DIR      unplugs a --netns host: open connections stall, new ones
#                                        fail after about 3 s ("No route to host": ARP goes
#                                        unanswered). Exit 3 for a loopback host (kill the client).
#   tests/remote/sshhost.sh restore DIR  plugs it back in and waits until ssh gets in again
#   tests/remote/sshhost.sh stop DIR     kills sshd, its sessions and every process that still
#                                        names DIR (in its command line, or in its environment as
#                                        the host's commands do), except this script and its
#                                        callers; deletes the namespace. Fine to call twice, or
#                                        after a failed start. Leaves DIR itself to the test,
#                                        which must call stop before it deletes DIR (DIR/state
#                                        names the namespace).
#
# Needs Debian's openssh-server and openssh-client, and root with --netns. Exit 77 says why it
# cannot start here (the tests skip on 77), 2 a wrong command line, 1 anything else.
set -euo pipefail

me=$(basename "$0")
usage() {
  echo "usage: $0 start DIR [--netns] | cut DIR | restore DIR | stop DIR" >&2
  exit 2
}
die() {
  echo "$me: $*" >&2
  exit 1
}
skip() {
  echo "$me: cannot start here: $*" >&2
  exit 77
}

action=${1:-}
dir=${2:-}
netns=false
case $action in
  start)
    [[ $# -eq 2 || ($# -eq 3 && ${3:-} == --netns) ]] || usage
    if [[ $# -eq 3 ]]; then netns=true; fi
    ;;
  cut | restore | stop) [[ $# -eq 2 ]] || usage ;;
  *) usage ;;
esac
[[ -n $dir ]] || usage

host=optlog-test-host
unreachable=optlog-unreachable-host

# One value of DIR/state, which start writes before it creates anything, so stop finds it all.
state() {
  sed -n "s/^$1=//p" "$dir/state" 2>/dev/null | tail -n 1
}

# Succeeds once ssh gets in, or fails after about $1 seconds with ssh's last words on stderr.
wait_ssh() {
  local deadline=$((SECONDS + $1))
  until ssh -F "$dir/ssh_config" -o ConnectTimeout=2 "$host" true </dev/null 2>"$dir/ssh_probe.err"; do
    if ((SECONDS >= deadline)); then
      echo "$me: ssh did not get into $host within $1 s:" >&2
      cat "$dir/ssh_probe.err" >&2
      return 1
    fi
    sleep 0.2
  done
}

# A zombie waits for its parent (the test, maybe) and is no longer ours to kill.
alive() {
  local stat
  stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ $stat != Z* ]]
}

stop_all() {
  [[ -d $dir ]] || return 0
  local ns laptop_if subnet pid ppid proc victims=() callers=" "
  ns=$(state netns)
  laptop_if=$(state laptop_if)
  subnet=$(state subnet)

  # Never this script or whoever called it, whatever their command lines say.
  pid=$$
  while [[ -n $pid && $pid -gt 1 ]]; do
    callers+="$pid "
    pid=$(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ') || break
  done

  # Everything in the namespace, detached or not.
  if [[ -n $ns && -e /run/netns/$ns ]]; then
    while read -r pid; do victims+=("$pid"); done < <(ip netns pids "$ns" 2>/dev/null || true)
  fi
  # The listener (its title keeps -f DIR/sshd_config), the test's ssh clients (-F DIR/ssh_config)
  # and the host's commands, which SetEnv marked with DIR/host/data.
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    if grep -qzxF "XDG_DATA_HOME=$dir/host/data" "$proc/environ" 2>/dev/null ||
      grep -qzF "$dir/" "$proc/cmdline" 2>/dev/null || grep -qzxF "$dir" "$proc/cmdline" 2>/dev/null; then
      victims+=("$pid")
    fi
  done
  # Their children: the listener's per-connection sshd retitles itself "sshd: root@notty".
  local tree grown=true
  tree=$(ps -e -o pid=,ppid=)
  while $grown; do
    grown=false
    while read -r pid ppid; do
      if [[ " ${victims[*]} " == *" $ppid "* && " ${victims[*]} " != *" $pid "* ]]; then
        victims+=("$pid")
        grown=true
      fi
    done <<<"$tree"
  done
  local kept=()
  for pid in "${victims[@]}"; do
    if [[ $callers != *" $pid "* ]]; then kept+=("$pid"); fi
  done

  if ((${#kept[@]})); then
    kill -TERM "${kept[@]}" 2>/dev/null || true
    local left
    for _ in $(seq 30); do
      left=()
      for pid in "${kept[@]}"; do if alive "$pid"; then left+=("$pid"); fi; done
      ((${#left[@]})) || break
      sleep 0.1
    done
    if ((${#left[@]})); then kill -KILL "${left[@]}" 2>/dev/null || true; fi
  fi
  rm -f "$dir/sshd.pid"

  # Deleting one end of a veth pair deletes both; the namespace goes once nothing is left in it.
  if [[ -n $laptop_if ]] && ip link show "$laptop_if" >/dev/null 2>&1; then ip link del "$laptop_if" || true; fi
  if [[ -n $ns && -e /run/netns/$ns ]]; then ip netns del "$ns" || true; fi
  if [[ -n $subnet ]] && [[ -n $(ip route show "$subnet" 2>/dev/null) ]]; then
    ip route del unreachable "$subnet" metric 4242 2>/dev/null || true
  fi
}

# A loopback port where nothing listens at the moment, below Linux's ephemeral range (32768-),
# so that outgoing connections do not take it meanwhile.
closed_port() {
  local port
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 12000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

write_configs() {
  local addr=$1 port=$2 dead_addr=$3 dead_port=$4 user
  user=$(id -un)
  cat >"$dir/sshd_config" <<EOF
# Written by tests/remote/sshhost.sh: the test host's sshd, which runs as root and lets in only
# the key in authorized_keys. Nothing here reads /etc/ssh.
Port $port
ListenAddress $addr
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
# DIR may sit in a folder others can write (/tmp).
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
UsePAM no
AllowUsers $user
Subsystem sftp /usr/lib/openssh/sftp-server
# A client that vanished (cut) is dropped after about 6 s, as a real server would.
ClientAliveInterval 2
ClientAliveCountMax 3
# What optlog writes on the host stays in DIR; OPTLOG_SSHHOST_SETENV adds the test's own variables
# (OPTLOG_PROBE_UNTUNED=0: the host's first run starts at once, untuned, as the suite's runs do).
SetEnv XDG_DATA_HOME=$dir/host/data XDG_CACHE_HOME=$dir/host/cache XDG_CONFIG_HOME=$dir/host/config ${OPTLOG_SSHHOST_SETENV:-}
EOF
  local endpoint="[$addr]:$port"
  if [[ $port == 22 ]]; then endpoint=$addr; fi
  echo "$endpoint $(cut -d ' ' -f 1,2 "$dir/host_key.pub")" >"$dir/known_hosts"
  # Both aliases share everything but where they point, so the unreachable one fails only for that.
  cat >"$dir/ssh_config" <<EOF
# Written by tests/remote/sshhost.sh, for ssh -F (which then reads neither /etc/ssh nor ~/.ssh).
Host $host
  HostName $addr
  Port $port
  ConnectTimeout 5
Host $unreachable
  HostName $dead_addr
  Port $dead_port
  ConnectTimeout 2
Host *
  User $user
  IdentityFile $dir/user_key
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  LogLevel ERROR
EOF
}

# Starts sshd through "$@" (empty, or ip netns exec NAME). Fails if the port was taken; dies on
# anything else.
launch_sshd() {
  rm -f "$dir/sshd.pid"
  : >"$dir/sshd.log"
  "$@" /usr/sbin/sshd -f "$dir/sshd_config" -E "$dir/sshd.log" || die "sshd did not start"
  # sshd forks away before it binds; the pid file comes once it listens.
  for _ in $(seq 50); do
    if [[ -s $dir/sshd.pid ]]; then return 0; fi
    if grep -q 'Cannot bind any address' "$dir/sshd.log"; then return 1; fi
    if grep -q fatal "$dir/sshd.log"; then die "sshd failed"; fi
    sleep 0.1
  done
  die "sshd wrote no pid file within 5 s"
}

on_start_exit() {
  local rc=$?
  if ((rc == 0)); then return; fi
  if [[ -s $dir/sshd.log ]]; then
    echo "$me: the end of $dir/sshd.log:" >&2
    tail -n 5 "$dir/sshd.log" >&2
  fi
  stop_all || true
  exit "$rc"
}

start() {
  local tool
  for tool in /usr/sbin/sshd ssh ssh-keygen; do
    command -v "$tool" >/dev/null || skip "$tool is missing (apt-get install openssh-server openssh-client)"
  done
  if $netns; then
    [[ $(id -u) == 0 ]] || skip "--netns needs root"
    command -v ip >/dev/null || skip "ip is missing (apt-get install iproute2)"
  fi
  if [[ -e $dir && ! -d $dir ]] || [[ -d $dir && -n $(ls -A "$dir") ]]; then
    die "$dir exists and is not an empty folder"
  fi
  # DIR goes unquoted into both configs, where spaces split words and % starts a token.
  local safe='^[A-Za-z0-9._/+-]+$'
  [[ $dir =~ $safe ]] || die "DIR may hold only letters, digits and ._/+- : $dir"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd -P)
  [[ $dir =~ $safe ]] || die "DIR may hold only letters, digits and ._/+- : $dir"
  mkdir -p "$dir/host/data" "$dir/host/cache" "$dir/host/config"
  # sshd's privilege separation folder, which Debian makes only when the service starts.
  mkdir -p /run/sshd
  trap on_start_exit EXIT

  ssh-keygen -q -t ed25519 -N '' -C "$host" -f "$dir/host_key"
  ssh-keygen -q -t ed25519 -N '' -C "optlog-test-user" -f "$dir/user_key"
  cp "$dir/user_key.pub" "$dir/authorized_keys"

  if $netns; then
    local hash ns laptop_if host_if index base subnet laptop_addr host_addr
    hash=$(printf %s "$dir" | sha256sum | cut -c 1-8)
    ns=optlog-$hash
    # Interface names: at most 15 characters.
    laptop_if=ol$hash-l
    host_if=ol$hash-h
    [[ ! -e /run/netns/$ns ]] || die "namespace $ns exists already (a run in $dir not stopped?)"
    # A /29 of 10.213.0.0/16 picked from the hash, so parallel tests take different ones: .1 is
    # the laptop, .2 the host and .3 nobody (the unreachable host, whose ARP goes unanswered).
    index=$((16#${hash:0:4} % 8192))
    for _ in $(seq 64); do
      base=10.213.$((index / 32)).$((index % 32 * 8))
      [[ -n $(ip route show "$base/29") ]] || break
      index=$(((index + 1) % 8192))
    done
    subnet=$base/29
    laptop_addr=${base%.*}.$((${base##*.} + 1))
    host_addr=${base%.*}.$((${base##*.} + 2))
    printf '%s\n' mode=netns "netns=$ns" "laptop_if=$laptop_if" "host_if=$host_if" "subnet=$subnet" \
      "laptop_addr=$laptop_addr" "host_addr=$host_addr" >"$dir/state"
    ip netns add "$ns" 2>"$dir/netns.err" || skip "ip netns add failed: $(cat "$dir/netns.err")"
    # Without this, a laptop side taken down (ip link set down deletes its routes) would send the
    # host's packets to the default route, off this machine; with it they fail here.
    ip route add unreachable "$subnet" metric 4242
    ip link add "$laptop_if" type veth peer name "$host_if" netns "$ns"
    ip addr add "$laptop_addr/29" dev "$laptop_if"
    ip link set "$laptop_if" up
    ip -n "$ns" addr add "$host_addr/29" dev "$host_if"
    ip -n "$ns" link set "$host_if" up
    ip -n "$ns" link set lo up
    write_configs "$host_addr" 22 "${base%.*}.$((${base##*.} + 3))" 22
    /usr/sbin/sshd -t -f "$dir/sshd_config" || die "sshd rejects $dir/sshd_config"
    launch_sshd ip netns exec "$ns" || die "port 22 is taken in namespace $ns"
  else
    echo mode=loopback >"$dir/state"
    local port dead_port
    dead_port=$(closed_port) || die "found no closed loopback port"
    for _ in $(seq 20); do
      port=$(closed_port) || die "found no free loopback port"
      [[ $port != "$dead_port" ]] || continue
      write_configs 127.0.0.1 "$port" 127.0.0.1 "$dead_port"
      /usr/sbin/sshd -t -f "$dir/sshd_config" || die "sshd rejects $dir/sshd_config"
      if launch_sshd; then break; fi
      port=
    done
    [[ -n $port ]] || die "every loopback port tried was taken"
  fi

  wait_ssh 10
  trap - EXIT
  echo "config=$dir/ssh_config"
  echo "host=$host"
}

if [[ $action == start ]]; then
  start
  exit 0
fi

[[ -d $dir ]] || {
  if [[ $action == stop ]]; then exit 0; fi
  die "$dir: no such folder"
}
dir=$(cd "$dir" && pwd -P)

case $action in
  stop) stop_all ;;
  cut | restore)
    [[ $(state mode) == netns ]] || {
      echo "$me: only a host started with --netns can be cut or restored (kill the ssh client instead)" >&2
      exit 3
    }
    ns=$(state netns)
    host_if=$(state host_if)
    laptop_if=$(state laptop_if)
    [[ -e /run/netns/$ns ]] || die "namespace $ns is gone (stopped?)"
    if [[ $action == cut ]]; then
      # The host's end goes down, so the laptop's loses its carrier, as with a pulled cable: its
      # route stays and packets vanish in the wire. Taking the laptop's end down instead would
      # delete that route, and new connections would fail at once with "No route to host".
      ip -n "$ns" link set "$host_if" down
    else
      ip -n "$ns" link set "$host_if" up
      ip link set "$laptop_if" up
      ip -n "$ns" addr replace "$(state host_addr)/29" dev "$host_if"
      ip addr replace "$(state laptop_addr)/29" dev "$laptop_if"
      wait_ssh 10
    fi
    ;;
esac
