#!/usr/bin/env python3
"""Starts `PROGRAM... worker` as the harness does (runtime/worker.h: a SOCK_SEQPACKET socket on fd 3)
and goes through the worker protocol (runtime/worker_protocol.h) by hand: the worker confines itself
and says ready; with --cc, a kernel y = 2x compiled by that compiler is loaded (a memfd, dlopened
through /proc/self/fd), attached to a shared arena and run, and the parent reads y; then quit.
PROGRAM may start with an emulator:

  scripts/check-device-worker.py --cc "clang --target=aarch64-linux-gnu" \
      qemu-aarch64-static -L /usr/aarch64-linux-gnu build-aarch64-linux-gnu/ekb-device
  scripts/check-device-worker.py --cc clang build/ekb-device

Prints the worker's ready message (its sandbox report) and exits 0 when every step holds.
"""
import argparse
import json
import mmap
import os
import shlex
import socket
import struct
import subprocess
import sys
import tempfile

KERNEL = r"""
#include <stdint.h>
void ekb_main(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}
"""
N = 1000
PAGE = 4096


def run_kernel(parent: socket.socket, cc: str, scratch: str) -> None:
    source, artifact = os.path.join(scratch, "k.c"), os.path.join(scratch, "k.so")
    with open(source, "w") as f:
        f.write(KERNEL)
    subprocess.run(shlex.split(cc) + ["-O2", "-fPIC", "-shared", "-o", artifact, source], check=True)
    code = os.memfd_create("ekb-kernel")
    with open(artifact, "rb") as f:
        os.write(code, f.read())
    socket.send_fds(parent, [json.dumps({"op": "load", "slot": 0, "params": [N]}).encode()], [code])
    os.close(code)
    reply = json.loads(parent.recv(1 << 20))
    if not reply.get("ok"):
        raise RuntimeError(f"load: {reply}")
    # The arena: x in the first page (read-only to the kernel), a PROT_NONE gap, y in the third.
    arena = os.memfd_create("ekb-arena")
    os.ftruncate(arena, 3 * PAGE)
    view = mmap.mmap(arena, 3 * PAGE)
    view[0:4 * N] = struct.pack(f"{N}f", *range(N))
    attach = {"op": "attach", "size": 3 * PAGE, "regions": [[0, PAGE, False], [2 * PAGE, 3 * PAGE, True]],
              "slots": [{"slot": 0, "args": [[True, 0], [True, 2 * PAGE], [False, N]]}]}
    socket.send_fds(parent, [json.dumps(attach).encode()], [arena])
    os.close(arena)
    reply = json.loads(parent.recv(1 << 20))
    if not reply.get("ok"):
        raise RuntimeError(f"attach: {reply}")
    parent.send(json.dumps({"op": "run", "slot": 0, "flush": True, "scrub_bytes": 0}).encode())
    reply = json.loads(parent.recv(1 << 20))
    if not reply.get("ok"):
        raise RuntimeError(f"run: {reply}")
    y = struct.unpack(f"{N}f", view[2 * PAGE:2 * PAGE + 4 * N])
    if any(y[i] != 2.0 * i for i in range(N)):
        raise RuntimeError(f"wrong result: y[:4] = {y[:4]}")
    print(f"kernel: y = 2x correct for {N} elements, {reply['ns']} ns")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cc", help="also compile, load and run a kernel with this compiler command")
    parser.add_argument("program", nargs=argparse.REMAINDER, help="the worker's program, after its emulator if any")
    args = parser.parse_args()
    if not args.program:
        parser.error("no program")
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fd = child.fileno()
    with tempfile.TemporaryDirectory(prefix="ekb-device-check-") as scratch:
        command = args.program + ["worker", "--fd", "3", "--backend", "cpu", "--scratch", scratch,
                                  "--memory-limit", "0", "--parent-pid", str(os.getpid())]
        # fd 3 is the child's end (kept open across exec by pass_fds, made fd 3 before exec).
        worker = subprocess.Popen(command, pass_fds=(3, fd), preexec_fn=lambda: os.dup2(fd, 3))
        child.close()
        parent.settimeout(60)
        try:
            ready = parent.recv(1 << 20)
            if not ready:
                print(f"check-device-worker: the worker closed its socket, exit {worker.wait(60)}", file=sys.stderr)
                return 1
            ready = json.loads(ready)
            print(json.dumps(ready))
            if not ready.get("ready"):
                print("check-device-worker: the first message is not 'ready'", file=sys.stderr)
                return 1
            if args.cc:
                run_kernel(parent, args.cc, scratch)
            parent.send(json.dumps({"op": "quit"}).encode())
            code = worker.wait(60)
        except (OSError, ValueError, RuntimeError, subprocess.SubprocessError) as e:
            worker.kill()
            worker.wait()
            print(f"check-device-worker: {e}", file=sys.stderr)
            return 1
    if code != 0:
        print(f"check-device-worker: the worker exited {code} after quit", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
