#!/usr/bin/env python3
"""What NVIDIA's two compilers make of the same scheduled kernels: a side-by-side of the PTX and
of ptxas's resource use, per kernel, for the cuda and the opencl backends (issue #5: OpenCL within
1.5x of CUDA). The cuda side is `ekb emit --backend cuda --schedule F` compiled by nvcc with the
backend's own flags (-O3, -arch) to PTX; the opencl side is the program binary NVIDIA's OpenCL
compiler returned to `ekb eval` (its PTX), read from ekb's compile cache. ptxas then assembles both
for the same architecture and says registers, spills and shared memory.

Usage: gpu_device_code.py EKB CACHE_DIR ARCH SCHEDULES_DIR WORKLOAD...   (ARCH: sm_90)
Prints one block per workload; exits 0 even when a side is missing (it says which).
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile


def cbor_decode(data, pos=0):
    """The subset of CBOR that nlohmann::json::to_cbor writes (definite lengths). Returns (value, end)."""
    head = data[pos]
    major, info = head >> 5, head & 31
    pos += 1
    if info < 24:
        arg = info
    elif info in (24, 25, 26, 27):
        n = 1 << (info - 24)
        arg = int.from_bytes(data[pos:pos + n], "big")
        pos += n
    else:
        raise ValueError(f"CBOR: indefinite or reserved length at byte {pos - 1}")
    if major == 0:
        return arg, pos
    if major == 1:
        return -1 - arg, pos
    if major == 2:
        return bytes(data[pos:pos + arg]), pos + arg
    if major == 3:
        return data[pos:pos + arg].decode("utf-8", "replace"), pos + arg
    if major == 4:
        items = []
        for _ in range(arg):
            v, pos = cbor_decode(data, pos)
            items.append(v)
        return items, pos
    if major == 5:
        d = {}
        for _ in range(arg):
            k, pos = cbor_decode(data, pos)
            d[k], pos = cbor_decode(data, pos)
        return d, pos
    if major == 7:
        return {20: False, 21: True, 22: None}.get(info, arg), pos
    raise ValueError(f"CBOR: major type {major} not expected")


def opencl_programs(cache_dir):
    """workload name -> [(form and build options, PTX text)] for every cached NVIDIA OpenCL program (a cache
    kept between runs may hold several: other options, other schedules)."""
    found = collections.defaultdict(list)
    for path in glob.glob(os.path.join(cache_dir, "opencl", "*.clprog")):
        try:
            art, _ = cbor_decode(open(path, "rb").read())
        except (ValueError, IndexError):
            continue
        binary = art.get("binary", b"")
        if not binary.lstrip().startswith(b"//"):  # PTX is text; other platforms give ELF or none
            continue
        m = re.match(r"/\*\s*(\S+/\S+?):", art.get("source", ""))
        if m:
            form = "sched" if "the schedule's kernel" in art["source"] else "default"
            found[m.group(1)].append((f"{form} {art.get('build_options', '')}",
                                      binary.rstrip(b"\0").decode("utf-8", "replace")))
    return found


# Instruction classes worth comparing between the two compilers.
CLASSES = [
    ("fma.f32", r"^\s*fma\.rn\.f32"),
    ("mul.f32", r"^\s*mul(\.rn)?\.f32"),
    ("add.f32", r"^\s*(add|sub)(\.rn)?\.f32"),
    ("ld.shared", r"^\s*ld\.shared"),
    ("st.shared", r"^\s*st\.shared"),
    ("ld.global", r"^\s*ld\.global"),
    ("ld.global.nc", r"^\s*ld\.global\.nc"),
    ("st.global", r"^\s*st\.global"),
    ("local (spill)", r"^\s*(ld|st)\.local"),
    ("int64 arith", r"^\s*(mul|mad|add|sub|shl|shr)(\.lo|\.wide)?\.[su]64"),
    ("shfl", r"^\s*shfl"),
    ("bar", r"^\s*bar"),
]


def split_kernels(ptx):
    """kernel name -> its body text (from `.entry NAME(` to the next `.entry` or the end)."""
    parts = re.split(r"^\s*\.(?:visible\s+)?\.?entry\s+", ptx, flags=re.M)
    kernels = {}
    for part in parts[1:]:
        name = re.match(r"([A-Za-z_$][\w$]*)", part).group(1)
        kernels[name] = part
    return kernels


def plain_name(kernel):
    """ekb_kernel_0 for nvcc's mangled _Z12ekb_kernel_0PKfS0_... (OpenCL kernels are not mangled)."""
    m = re.match(r"_Z(\d+)", kernel)
    return kernel[m.end():m.end() + int(m.group(1))] if m else kernel


def count_classes(body):
    lines = body.splitlines()
    return {label: sum(1 for ln in lines if re.match(rx, ln)) for label, rx in CLASSES}


def ptxas_usage(ptx_path, arch):
    """kernel name -> 'R regs, S B spill, M B smem' from ptxas -v."""
    r = subprocess.run(["ptxas", f"-arch={arch}", "-v", ptx_path, "-o", os.devnull],
                       capture_output=True, text=True)
    usage, current = {}, None
    for line in (r.stdout + r.stderr).splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            usage[current] = {}
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current:
            usage[current]["spill"] = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            usage[current]["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            usage[current]["smem"] = int(s.group(1)) if s else 0
    if r.returncode != 0:
        usage["!error"] = (r.stderr or r.stdout).strip().splitlines()[-1:]
    return usage


def schedule_file(sched_dir, workload):
    pattern, name = workload.split("/", 1)
    for f in (os.path.join(sched_dir, pattern, name + ".ekb"), os.path.join(sched_dir, pattern, "all.ekb")):
        if os.path.isfile(f):
            return f
    return None


def cuda_ptx(ekb, workload, sched, arch, tmp):
    cu = os.path.join(tmp, workload.replace("/", "__") + ".cu")
    src = subprocess.run([ekb, "emit", workload, "--backend", "cuda", "--schedule", sched],
                         capture_output=True, text=True)
    if src.returncode != 0:
        return None, "ekb emit failed: " + src.stderr.strip()[-200:]
    open(cu, "w").write(src.stdout)
    ptx = cu[:-3] + ".cuda.ptx"
    # The cuda backend's flags (runtime/cuda_backend.cpp), to PTX instead of a shared library.
    r = subprocess.run(["nvcc", "-O3", f"-arch={arch}", "-std=c++17", "-include", "cuda_fp16.h",
                        "-include", "cuda_bf16.h", "-ptx", cu, "-o", ptx], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "nvcc -ptx failed: " + r.stderr.strip()[-200:]
    return ptx, None


def main():
    if len(sys.argv) < 6:
        print(__doc__)
        return 2
    ekb, cache_dir, arch, sched_dir = sys.argv[1:5]
    workloads = sys.argv[5:]
    programs = opencl_programs(cache_dir)
    tmp = tempfile.mkdtemp()
    cols = [label for label, _ in CLASSES]
    for w in workloads:
        sched = schedule_file(sched_dir, w)
        if not sched:
            continue
        print(f"  {w}")
        sides = {}
        path, why = cuda_ptx(ekb, w, sched, arch, tmp)
        if path:
            sides["cuda sched"] = (path, open(path).read())
        else:
            print(f"    cuda: {why}")
        for k, (options, text) in enumerate(programs.get(w, [])):
            path = os.path.join(tmp, w.replace("/", "__") + f".opencl{k}.ptx")
            open(path, "w").write(text)
            sides[f"ocl {options}"[:33] + (f" #{k}" if len(programs[w]) > 1 else "")] = (path, text)
        if w not in programs:
            print("    opencl: no NVIDIA program for it in the compile cache (the opencl table run did not reach it)")
        print("    " + f"{'kernel':<14}{'side':<38}{'regs':>5}{'spill B':>8}{'smem B':>7}" +
              "".join(f"{c:>{max(len(c), 5) + 1}}" for c in cols))
        rows = collections.defaultdict(list)
        for side, (path, text) in sides.items():
            usage = ptxas_usage(path, arch)
            if "!error" in usage:
                print(f"    {side}: ptxas: {usage['!error']}")
            for kernel, body in split_kernels(text).items():
                rows[plain_name(kernel)].append((side, usage.get(kernel, {}), count_classes(body)))
        for kernel in sorted(rows):
            for side, u, counts in rows[kernel]:
                print("    " + f"{kernel[:13]:<14}{side[:37]:<38}{u.get('regs', '?'):>5}{u.get('spill', '?'):>8}"
                      f"{u.get('smem', '?'):>7}" + "".join(f"{counts[c]:>{max(len(c), 5) + 1}}" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
