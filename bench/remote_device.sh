#!/usr/bin/env bash
# The cost of a remote device (docs/DEVICES.md) per candidate: the same candidates evaluated with
# the worker here and through `ekb eval --device` over OpenSSH on loopback (a throwaway sshd
# started here; the device's agent is this build's ekb-device, so only the transport differs).
# N workloads spread evenly over the suite's micro workloads (default 30), the native default
# lowering against itself; each configuration run twice (cold: compile and reference caches and
# the device's artifacts filled; warm: measured). Printed per configuration: the median and the
# quartiles of each candidate's check time (worker start, loads, correctness trials) and time
# (the timing loop), and the wall time per candidate.
# Usage: bench/remote_device.sh [N] [build dir]     (needs /usr/sbin/sshd, ssh, ssh-keygen)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-30}"
build="${2:-build}"
ekb="$build/ekb"
device="$(cd "$build" && pwd)/ekb-device"
work=$(mktemp -d)
sshd_pid=""
trap '[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null; rm -rf "$work"' EXIT
export EKB_CACHE_DIR="$work/cache"

port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/user_key"
cp "$work/user_key.pub" "$work/authorized_keys"
echo "[127.0.0.1]:$port $(cat "$work/host_key.pub")" > "$work/known_hosts"
cat > "$work/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
LogLevel ERROR
EOF
/usr/sbin/sshd -D -e -f "$work/sshd_config" 2> "$work/sshd.log" &
sshd_pid=$!
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
cat > "$work/devices.toml" <<EOF
[devices.loopback]
host = "127.0.0.1"
port = $port
user = "$(id -un)"
identity = "$work/user_key"
ssh_options = ["UserKnownHostsFile=$work/known_hosts", "GlobalKnownHostsFile=/dev/null", "StrictHostKeyChecking=yes"]
command = "$device --cache $work/device-cache"
EOF

mapfile -t names < <("$ekb" list --size micro --json | python3 -c "
import json, sys
ws = [w['name'] for w in json.load(sys.stdin)]
n = min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
echo "== ${#names[@]} micro workloads, native vs itself; warm runs (after a cold one each)"

for timing in --no-timing ""; do
  for where in local ssh; do
    args=()
    [ "$where" = ssh ] && args=(--devices "$work/devices.toml" --device loopback)
    tag="$where${timing:+-notiming}"
    for pass in cold warm; do
      start=$(date +%s.%N)
      "$ekb" eval -s native $timing "${args[@]}" --db "$work/$tag.db" --run "$tag-$pass" --json "$work/$tag-$pass.json" \
        "${names[@]}" > "$work/$tag-$pass.log" 2>&1 || { cat "$work/$tag-$pass.log"; exit 1; }
      end=$(date +%s.%N)
    done
    python3 - "$work/$tag-warm.json" "$tag" "$start" "$end" <<'PY'
import json, sys, statistics as st
rs = json.load(open(sys.argv[1]))["results"]
wall = float(sys.argv[4]) - float(sys.argv[3])
def q(k):
    x = sorted(r["cost"][k] for r in rs if r.get("cost"))
    if len(x) < 2: return "-"
    qs = st.quantiles(x, n=4)
    return f"{st.median(x)*1e3:7.1f} ms [{qs[0]*1e3:.1f}, {qs[2]*1e3:.1f}]"
print(f"{sys.argv[2]:>14}: {len(rs)} candidates, correct {sum(r['correct'] for r in rs)}, wall {wall:6.2f} s "
      f"({wall/len(rs)*1e3:6.1f} ms each); per candidate, median [p25, p75]: check {q('check_s')}, time {q('time_s')}")
PY
  done
done
