#!/usr/bin/env bash
# The GPU backends on a GPU machine, in one call (issue #5), within one device command's limit:
#  1. what the machine has (GPU, nvcc, g++, the build's dependencies), then a CMake + g++ build of
#     ekb, or the binaries carried in the build directory (bench/gpu_carry.sh prepares them);
#     the vendor binary (bench/gpu_vendor.cu) carried, or built with nvcc meanwhile;
#  2. the GPU tests: the CUDA corpus (tests/adversarial/cuda/), the native default on a few
#     workloads, a sticky error contained, the calibration kernels; the OpenCL device tests;
#  3. `ekb calibrate --backend cuda`: the roofline (bandwidth, FP32 and FP16 FMA peaks); the same
#     for opencl on the NVIDIA platform (bandwidth, FP32) where the carried ekb has it;
#  4. the table, per pattern: the native default lowering, the hand-written schedule
#     (examples/schedules-cuda/, where one exists) and cuBLAS/cuDNN (where one applies), each as
#     median time (p25-p75), speedup over the default and roofline fraction; and the OpenCL-vs-CUDA
#     time ratio of the same kernels (OpenCL on the NVIDIA platform; target <= 1.5x). ekb times
#     default and scheduled interleaved (src/eval/timing.h); the vendor binary times the same way;
#     bench/gpu_table.py prints the table from the runs' results; memory-bound rows also get a
#     plain copy kernel moving the same bytes (timed by the vendor binary), the rate a kernel of
#     that size can reach (docs/METRICS.md, "Rooflines on GPUs");
#  5. the whole suite's correctness on cuda, then on opencl (NVIDIA platform), with
#     `ekb eval --backend B -s native --no-timing` (the default lowering against itself, so every
#     result is "correct or not" under the full protocol), in parallel shards, then a short table
#     by domain and the failures. A shard cut short by the time budget reports what it finished.
#     Then, per scheduled kernel, what nvcc and NVIDIA's OpenCL compiler made of it (PTX
#     instruction classes, ptxas registers and spills: bench/gpu_device_code.py);
#  4b. (`tvm`) TVM's kernels for cuda and opencl, made where TVM is installed by
#     bench/tvm_gpu_sources.sh into bench/tvm-gpu/ (carried; $EKB_GPU_TVM names another directory),
#     evaluated as solutions under the full protocol and timed against the native default: how many
#     are correct, and the geomean speedup of TVM's default over ours, overall and per domain;
#  4c. (`tvm-tune`) GPU tuning of TVM's kernels: the candidates bench/tvm_gpu_tune.sh made into
#     bench/tvm-gpu-tune/ (carried; $EKB_GPU_TVM_TUNE names another directory), every sample timed,
#     then `ekb tvm-tune select`: per workload TVM's default vs the best tuned time, the geomean
#     speedup of tuned over TVM's default and over the native default, and the records
#     ($OUT/tvm-records.tar.gz) that `--baseline tvm-tuned` uses on this device;
#  4d. (`agent`) LEKA's search on cuda over a fixed sample, judged against the native default and
#     TVM's default (below, before the suites);
# Steps 4 and 5 need a quiet GPU for 4 only, so 4 comes first; 5 takes what is left of the budget.
#
# Usage: bench/gpu.sh [N|all] [build dir]   (N: that many workloads spread evenly over the suite)
#   EKB_GPU_BUDGET_S   wall-clock budget of the whole script, seconds (default 530: a device
#                      command may run 600 s)
#   EKB_GPU_STEPS      which of "tests calibrate table tvm tvm-tune agent cuda opencl" to run (default: all; the whole
#                      list can outrun one call's budget: the suites then stop early and report what
#                      they finished, so a second call with EKB_GPU_STEPS="cuda opencl" completes them).
#                      The agent step gets what the steps before it leave: after "tvm tvm-tune" on the
#                      30 largest workloads (nn.lstm_sequence alone runs 64 ms a call) nothing was left
#                      in a 470 s call, so give it a call of its own (EKB_GPU_STEPS=agent)
#   EKB_GPU_USE_CARRIED=1  use the binaries in the build directory even where ekb could be built
#   EKB_GPU_OPENCL_PLATFORM  the OpenCL platform of the opencl steps (default nvidia); without a
#                      GPU, setting it (pocl) dry-runs the opencl steps: calibration, the opencl
#                      columns of the table, the suite on opencl (e.g. EKB_GPU_OPENCL_PLATFORM=pocl
#                      EKB_GPU_TABLE="nn.softmax/kws_1x12" EKB_GPU_STEPS="table" bench/gpu.sh 4 build-x)
#   EKB_GPU_SUITE      globs narrowing the suite runs (e.g. "robotics.* transformer.*")
#   EKB_GPU_SUITE_SOLUTIONS  what the suite runs evaluate (default native): a solutions directory,
#                      e.g. TVM's kernels for the whole suite (bench/tvm_gpu_sources.sh all ...), or
#                      DIR.tar.gz of one, unpacked here: TVM's coverage on cuda and opencl
#   EKB_GPU_SHARDS     parallel evaluations of the suite runs (default: half the cores, at most 8)
#   EKB_GPU_TABLE      workloads of the table (default: the largest f32 workload of each pattern
#                      with a CUDA schedule or a vendor kernel, and a 4096^3 GEMM for the vendor)
# On the device machine (carry what bench/gpu_carry.sh prints):
#   export LD_LIBRARY_PATH=$PWD/.gpu-libs; bash bench/gpu.sh all build-cuda 2>&1 | tee $OUT/gpu.log
# Everything in one call fits the budget only in part (the suites alone took 187 s on cuda): for
# complete suites, a first call with EKB_GPU_STEPS="tests calibrate table", a second with "cuda opencl".
# Files under $OUT (at most 7, so that a tee'd log is the 8th): configure.log and build.log (when
# building), gpu_tests.log, eval.log, gpu-results.json, opencl-results.json, bench.json, tvm-results.json,
# tvm-records.tar.gz, agent-results.json, agent.tar.gz (calibration, table rows, vendor output): pick
# steps so that at most 7 are written. Without $OUT: a temporary directory.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
n="${1:-all}"
build="${2:-build-gpu}"
out="${OUT:-$(mktemp -d)}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A cache of its own (compiled programs, references), unless the caller keeps one across calls.
export EKB_CACHE_DIR="${EKB_CACHE_DIR:-$work/cache}"
budget="${EKB_GPU_BUDGET_S:-530}"
t0=$(date +%s)
seconds_left() { echo $(( budget - ($(date +%s) - t0) )); }
steps=" ${EKB_GPU_STEPS:-tests calibrate table tvm tvm-tune agent cuda opencl} "
step() { [[ "$steps" == *" $1 "* ]]; }

echo "== machine"
gpu_facts=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | head -2)
echo "  $gpu_facts"
nvcc --version 2>&1 | tail -2 | head -1
g++ --version 2>&1 | head -1
cmake --version 2>&1 | head -1
echo "ninja $(ninja --version 2>&1)"
{ ls -l /dev/nvidia* 2>/dev/null || echo "  no /dev/nvidia*"; } | awk '{print "  " $1, $NF}' | head -4
# sm_XX of device 0, for the vendor binary ("9.0" -> sm_90); empty without a GPU.
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
[ -n "$arch" ] && arch="sm_$arch"

# cuBLAS/cuDNN for the vendor binary: the toolkit's, else the CUDA wheels of the machine's Python.
wheel_libs=$(python3 -c '
import glob, sys
print(":".join(sorted({d for p in sys.path for d in glob.glob(p + "/nvidia/*/lib")})))' 2>/dev/null)
vendor_env=(env "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64${wheel_libs:+:$wheel_libs}")
vendor="$build/ekb_gpu_vendor"
vendor_build_pid=""
if [ -x "$vendor" ]; then
  echo "== vendor binary: carried $vendor"
elif command -v nvcc > /dev/null && [ -n "$arch" ]; then
  # Built meanwhile (a minute of nvcc), waited for before the table.
  vendor="$work/ekb_gpu_vendor"
  echo "== vendor binary: building bench/gpu_vendor.cu for $arch in the background"
  nvcc -O3 -std=c++17 -arch="$arch" -o "$vendor" bench/gpu_vendor.cu -ldl > "$work/vendor-build.log" 2>&1 &
  vendor_build_pid=$!
else
  echo "== vendor binary: none carried, and no nvcc or no GPU to build it for: no vendor column"
  vendor=""
fi

echo "== build dependencies (CMake fetches nothing: all must be installed)"
missing=0
for h in fmt/core.h nlohmann/json.hpp CLI/CLI.hpp SQLiteCpp/SQLiteCpp.h sqlite3.h xxhash.h gtest/gtest.h; do
  if [ -e "/usr/include/$h" ] || [ -e "/usr/local/include/$h" ]; then echo "  <$h> found"
  else echo "  <$h> MISSING"; [ "$h" = gtest/gtest.h ] || missing=1; fi
done
tests=OFF
{ [ -e /usr/include/gtest/gtest.h ] || [ -e /usr/local/include/gtest/gtest.h ]; } && tests=ON
prebuilt=0
if [ -n "${EKB_GPU_USE_CARRIED:-}" ] && [ -x "$build/ekb" ]; then
  echo "== using the ekb carried in $build (EKB_GPU_USE_CARRIED)"
  prebuilt=1
  [ -x "$build/tests/ekb_tests" ] && tests=ON || tests=OFF
elif [ "$missing" = 1 ]; then
  echo "!! a dependency of the build is missing on this machine: cannot build ekb here"
  [ -x "$build/ekb" ] || { echo "!! and no ekb was carried in $build (bench/gpu_carry.sh)"; exit 1; }
  # Binaries built on another machine and carried here (their libraries on $LD_LIBRARY_PATH).
  echo "!! using the ekb carried in $build instead"
  prebuilt=1
  [ -x "$build/tests/ekb_tests" ] && tests=ON || tests=OFF
fi

if [ "$prebuilt" = 0 ]; then
  echo "== build ($build, g++, Release, tests $tests)"
  if ! CXX=g++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEKB_BUILD_TESTS=$tests \
      > "$out/configure.log" 2>&1; then
    tail -20 "$out/configure.log"; exit 1
  fi
  targets=(ekb); [ "$tests" = ON ] && targets+=(ekb_tests)
  if ! cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1; then
    grep -E "error|Error" "$out/build.log" | head -20; exit 1
  fi
  echo "  built in $(( $(date +%s) - t0 )) s"
fi
ekb="$build/ekb"
# The opencl backend is there when eval takes --platform (a carried ekb may predate it).
has_opencl=0
"$ekb" eval --help 2>/dev/null | grep -q -- "--platform" && has_opencl=1
# The OpenCL platform of the opencl columns and suite: NVIDIA's on the GPU machine; another one
# (pocl) for a dry run of the script's opencl steps on a machine without a GPU.
opencl_platform="${EKB_GPU_OPENCL_PLATFORM:-nvidia}"
opencl_args=(--backend opencl --platform "$opencl_platform")

if [ "$tests" = ON ] && step tests; then
  echo "== GPU tests"
  # The test program starts workers from the ekb it was built beside (build/ekb of this checkout):
  # a build carried under another name stands in for it.
  [ "$build" = build ] || [ -e build ] || ln -s "$build" build
  filter='CudaDevice.*:Files/CudaCorpus.*:CudaBackend.*:CudaDriver.*:CudaEmitter.*:CudaCalibration.*'
  # OpenCL device tests (on every platform found; the NVIDIA one here), not the whole-suite ones.
  [ "$has_opencl" = 1 ] && filter+=':OpenCL*:*/OpenCL*-*Suite*'
  timeout 240 "$build/tests/ekb_tests" --gtest_filter="$filter" > "$out/gpu_tests.log" 2>&1
  grep -E "^\[  (FAILED|  OK|  SKIPPED) \]|Failure|Expected|Which is|error:" "$out/gpu_tests.log" | head -70
  grep -E "^\[==========\] .* ran|^\[  PASSED  \]|^\[  (FAILED|SKIPPED) \] [0-9]+ test" "$out/gpu_tests.log"
  echo "  ($(( $(date +%s) - t0 )) s so far)"
fi

if step tests && [ -n "$arch" ] && command -v nvcc > /dev/null; then
  # A ptxas miscompilation that broke img.fast9_score (bench/toolchain/): still there in this toolkit?
  if nvcc -O3 -arch="$arch" -o "$work/ptxas_check" bench/toolchain/ptxas_window_min_of_negation.cu > /dev/null 2>&1; then
    echo "== toolchain: $("$work/ptxas_check")"
  fi
fi

if [ -z "$arch" ] && [ -z "${EKB_GPU_OPENCL_PLATFORM:-}" ]; then
  # The tests above say for themselves why they skipped; everything below needs the GPU.
  echo "!! no NVIDIA GPU (nvidia-smi found none): no calibration, table or suite runs"
  echo "== total $(( $(date +%s) - t0 )) s"
  exit 0
fi
# Without a GPU but with EKB_GPU_OPENCL_PLATFORM: a dry run of the opencl steps only.
has_cuda=1
if [ -z "$arch" ]; then
  has_cuda=0
  echo "!! no NVIDIA GPU: a dry run of the opencl steps on platform '$opencl_platform' (no cuda columns or suite)"
fi

if [ "$has_cuda" = 1 ] && { step calibrate || step table; }; then
echo "== calibration: ekb calibrate --backend cuda"
if "$ekb" calibrate --backend cuda --db "$work/bench.db" --json > "$work/calibration.json" 2> "$work/calibrate.err"; then
  python3 - "$work/calibration.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); d = c["details"]; b = d["bandwidth"]
best = lambda m: m["best"]
print(f"  {c['device']}")
print(f"  bandwidth {c['bandwidth_gbs']['best']:.0f} GB/s (copy kernel {best(b['copy_kernel_gbs']):.0f}, triad {best(b['triad_kernel_gbs']):.0f},"
      f" cuMemcpyDtoD {best(b['memcpy_gbs']):.0f}; spread {100 * (1 - c['bandwidth_gbs']['worst'] / c['bandwidth_gbs']['best']):.1f}%)")
print(f"  FP32 FMA {c['peak_gflops']['best'] / 1e3:.1f} TFLOP/s, FP16 half2 FMA {best(d['fp16x2_fma_gflops']) / 1e3:.1f} TFLOP/s;"
      f" ridge {c['peak_gflops']['best'] / c['bandwidth_gbs']['best']:.1f} FLOP/byte; {sum(d['seconds'].values()):.1f} s")
if "launch" in d:  # the fixed cost of a timed call: empty kernels, median (IQR) in us
    print("  launch floor " + ", ".join(f"{k} {t['median']:.1f} us ({t['p25']:.1f}-{t['p75']:.1f})"
                                        for k, t in d["launch"]["empty_kernel_us"].items()))
PY
else
  echo "  failed: $(tail -3 "$work/calibrate.err")"
fi
fi
if [ "$has_opencl" = 1 ] && { step calibrate || step table; } && "$ekb" calibrate --help 2>/dev/null | grep -q -- "--platform"; then
  echo "== calibration: ekb calibrate --backend opencl --platform $opencl_platform"
  "$ekb" calibrate --backend opencl --platform "$opencl_platform" --db "$work/bench.db" 2>&1 | grep -v "^measuring" | sed 's/^/  /'
fi

"$ekb" list --json > "$work/list.json"

if step table; then
echo "== table: native default, scheduled (examples/schedules-cuda), cuBLAS/cuDNN; cuda and opencl"
# Per workload: "NAME:PARAM=V,..." for the vendor, "sched"/"native" for ekb.
python3 - "$work/list.json" examples/schedules-cuda "${EKB_GPU_TABLE:-}" > "$work/table-plan.txt" <<'PY'
import json, os, sys
ws = json.load(open(sys.argv[1])); sched_dir = sys.argv[2]; chosen = sys.argv[3].split()
vendor_patterns = {"linalg.gemm", "nn.fc", "nn.pwconv", "nn.conv2d", "nn.dwconv3x3", "nn.dwconv3x3_relu6"}
def has_schedule(w):
    d = os.path.join(sched_dir, w["pattern"])
    return os.path.isfile(os.path.join(d, w["workload"] + ".ekb")) or os.path.isfile(os.path.join(d, "all.ekb"))
if not chosen:
    patterns = set(vendor_patterns)
    if os.path.isdir(sched_dir):
        patterns |= {p for p in os.listdir(sched_dir) if os.path.isdir(os.path.join(sched_dir, p))}
    best = {}
    for w in ws:
        if w["pattern"] in patterns and w["dtype"] == "f32" and not w["heldout"] and w["valid"]:
            key = (has_schedule(w), w["flops"] + w["int_ops"], w["min_bytes"])
            if w["pattern"] not in best or key > best[w["pattern"]][0]: best[w["pattern"]] = (key, w["name"])
    chosen = sorted(name for _, name in best.values())
by_name = {w["name"]: w for w in ws}
for name in chosen:
    w = by_name.get(name)
    if not w: print(f"# {name}: no such workload", file=sys.stderr); continue
    params = ",".join(f"{k}={v}" for k, v in w["bindings"].items() if isinstance(v, int))
    kind = "sched" if has_schedule(w) else "native"
    # Rows of low arithmetic intensity also get a plain copy of their bytes (the same-size copy).
    intensity = (w["flops"] + w["int_ops"]) / max(w["min_bytes"], 1)
    print(name, kind, f"{name}:{params}" if w["pattern"] in vendor_patterns else "-",
          w["min_bytes"] if intensity < 16 else "-")
# The 4096^3 SGEMM of the issue's target, for the vendor column, unless the suite has one.
if not any(w["pattern"] == "linalg.gemm" and w["bindings"].get("NI") == 4096 == w["bindings"].get("NK")
           for w in ws if w["name"] in chosen):
    print("linalg.gemm/4096x4096x4096 vendor linalg.gemm/4096x4096x4096:NI=4096,NJ=4096,NK=4096 -")
PY
sched_ws=() native_ws=() vendor_specs=()
while read -r name kind spec copy_bytes; do
  case "$kind" in sched) sched_ws+=("$name");; native) native_ws+=("$name");; esac
  [ "$spec" != "-" ] && vendor_specs+=("$spec")
  [ "$copy_bytes" != "-" ] && vendor_specs+=("copy=$name:$copy_bytes")
done < "$work/table-plan.txt"
echo "  ${#sched_ws[@]} with a schedule, ${#native_ws[@]} default only, ${#vendor_specs[@]} vendor rows"
# The vendor column first (its binary may still be compiling meanwhile), on a quiet GPU.
: > "$work/vendor.jsonl"
if [ -n "$vendor_build_pid" ]; then
  wait "$vendor_build_pid" || { echo "  vendor build failed:"; grep -m5 error "$work/vendor-build.log"; vendor=""; }
fi
if [ "$has_cuda" = 1 ] && [ -n "$vendor" ] && [ ${#vendor_specs[@]} -gt 0 ] && [ "$(seconds_left)" -gt 60 ]; then
  timeout 120 "${vendor_env[@]}" "$vendor" --max-time 3 "${vendor_specs[@]}" > "$work/vendor.jsonl" 2> "$work/vendor.err" \
    || echo "  vendor: exit $? ($(tail -2 "$work/vendor.err")$(head -c 300 "$work/vendor.jsonl"))"
fi
echo "  vendor: $(( $(date +%s) - t0 )) s so far"
# ekb's table runs: each with a time limit, so that the suites below keep their share.
table_eval() {  # LABEL SOLUTIONS BACKEND-ARGS... -- WORKLOADS...
  local label=$1 solutions=$2; shift 2
  local args=(); while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  [ $# -eq 0 ] && return
  # The rows of 100+ MiB spend most of a check in the f64 reference on the host (cached for the
  # runs after the first), hence a third of what is left, up to 240 s.
  # Without the suite steps, half of what is left.
  local share=3; { step cuda || step opencl; } || share=2
  local limit=$(( $(seconds_left) / share )); [ "$limit" -gt 240 ] && limit=240
  if [ "$limit" -lt 20 ]; then echo "  $label: skipped, out of time"; return; fi
  timeout "$limit" "$ekb" eval "${args[@]}" -s "$solutions" --call-timeout 60 --db "$work/bench.db" --run "$label" \
    --json "$work/$label.json" "$@" > "$work/$label.log" 2>&1 \
    || echo "  $label: exit $? ($(tail -1 "$work/$label.log"))"
  [ -e "$work/$label.json" ] || "$ekb" report "$label" --db "$work/bench.db" --json "$work/$label.json" > /dev/null 2>&1
  echo "  $label: $(( $(date +%s) - t0 )) s so far"
}
if [ "$has_cuda" = 1 ]; then
  table_eval cuda-sched examples/schedules-cuda --backend cuda -- "${sched_ws[@]}"
  table_eval cuda-native native --backend cuda -- "${native_ws[@]}"
fi
if [ "$has_opencl" = 1 ]; then
  table_eval opencl-sched examples/schedules-cuda "${opencl_args[@]}" -- "${sched_ws[@]}"
  table_eval opencl-native native "${opencl_args[@]}" -- "${native_ws[@]}"
else
  echo "  opencl: the carried ekb has no opencl backend (no --platform): no OpenCL columns"
fi
cat "$work"/cuda-*.log "$work"/opencl-*.log "$work/vendor.err" > "$out/eval.log" 2>/dev/null
python3 bench/gpu_table.py "$work" "$out/bench.json"
if [ "$has_cuda" = 1 ] && [ "$has_opencl" = 1 ] && command -v ptxas > /dev/null; then
  # Why an OpenCL kernel is slower than its CUDA twin: both compilers' PTX and ptxas's resources.
  echo "== device code of the scheduled kernels: nvcc's PTX (cuda) against NVIDIA OpenCL's (opencl)"
  timeout 120 python3 bench/gpu_device_code.py "$ekb" "$EKB_CACHE_DIR" "$arch" examples/schedules-cuda "${sched_ws[@]}"
fi
fi

# ---- TVM's kernels (bench/tvm_gpu_sources.sh, made where TVM is installed) against the native default ----
tvm_dir="${EKB_GPU_TVM:-bench/tvm-gpu}"
if step tvm && [ -e "$tvm_dir/workloads.txt" ]; then
  mapfile -t tvm_ws < "$tvm_dir/workloads.txt"
  tvm_runs=()
  tvm_eval() {  # LABEL BACKEND-ARGS...
    local label=$1; shift
    # Half of what is left for the first backend, all of it for the second, unless the suites
    # still have to run after this step (then a quarter each).
    local share=$([ "$label" = tvm-cuda ] && echo 2 || echo 1)
    if step cuda || step opencl; then share=4; fi
    local limit=$(( $(seconds_left) / share )); [ "$limit" -gt 240 ] && limit=240
    if [ "$limit" -lt 30 ]; then echo "  $label: skipped, out of time"; return; fi
    echo "== $label: TVM's kernels from $tvm_dir, ${#tvm_ws[@]} workloads, timed against the native default (limit ${limit} s)"
    timeout "$limit" "$ekb" eval "$@" -s "$tvm_dir" --db "$work/tvm.db" --run "$label" --json "$work/$label.json" \
      "${tvm_ws[@]}" > "$work/$label.log" 2>&1 || echo "  $label: exit $? ($(tail -1 "$work/$label.log"))"
    [ -e "$work/$label.json" ] || "$ekb" report "$label" --db "$work/tvm.db" --json "$work/$label.json" > /dev/null 2>&1
    tvm_runs+=("$work/$label.json")
  }
  # A backend whose kernels were not made (bench/tvm_gpu_sources.sh makes one backend's) is skipped.
  tvm_made() { find "$tvm_dir" -name "*.$1" -print -quit | grep -q .; }
  [ "$has_cuda" = 1 ] && tvm_made cu && tvm_eval tvm-cuda --backend cuda
  [ "$has_opencl" = 1 ] && tvm_made cl && tvm_eval tvm-opencl "${opencl_args[@]}"
  cat "$work"/tvm-*.log >> "$out/eval.log" 2>/dev/null
  python3 - "$out/tvm-results.json" "${tvm_runs[@]}" <<'PY'
import json, math, sys, collections
merged = {}
for path in sys.argv[2:]:
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        print(f"  {path}: no results"); continue
    rs = doc["results"]
    label = path.rsplit("/", 1)[-1][:-5]
    merged[label] = doc
    correct = [r for r in rs if r.get("correct")]
    sp = [r["speedup"] for r in correct if r.get("speedup")]
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
    print(f"  {label}: {len(correct)}/{len(rs)} correct; geomean speedup of TVM's default over the native default "
          f"{gm(sp):.3f} over {len(sp)} timed")
    dom = collections.defaultdict(list)
    for r in correct:
        if r.get("speedup"): dom[r["workload"].split(".")[0]].append(r["speedup"])
    print("    per domain: " + ", ".join(f"{d} {gm(v):.2f} (n={len(v)})" for d, v in sorted(dom.items())))
    causes = collections.Counter((r.get("error") or "?") for r in rs if not r.get("correct"))
    if causes: print("    not correct: " + ", ".join(f"{k} {v}" for k, v in causes.most_common()))
json.dump(merged, open(sys.argv[1], "w"))
PY
fi

# ---- GPU tuning of TVM's kernels (bench/tvm_gpu_tune.sh): every candidate timed, the best kept ----
tune_dir="${EKB_GPU_TVM_TUNE:-bench/tvm-gpu-tune}"
# Carried packed (unrolled candidates are large and compress about tenfold): unpacked here.
if step tvm-tune && [ ! -e "$tune_dir/tvm-tuning.json" ] && [ -e "$tune_dir.tar.gz" ]; then
  tar xzf "$tune_dir.tar.gz" -C "$work" && tune_dir="$work/$(basename "$tune_dir")"
fi
if step tvm-tune && [ -e "$tune_dir/tvm-tuning.json" ] && [ -e "$tune_dir/workloads.txt" ]; then
  mapfile -t tune_ws < "$tune_dir/workloads.txt"
  tune_backend=$(python3 -c "import json; print(json.load(open('$tune_dir/tvm-tuning.json'))['backend'])")
  if [ "$tune_backend" = cuda ]; then tune_args=(--backend cuda); have=$has_cuda; else tune_args=("${opencl_args[@]}"); have=$has_opencl; fi
  # Beside the suites it takes two thirds of what is left, at most 400 s; alone, all of it.
  limit=$(( $(seconds_left) * 2 / 3 )); [ "$limit" -gt 400 ] && limit=400
  [ "$steps" = " tvm-tune " ] && limit=$(( $(seconds_left) - 20 ))
  if [ "$have" != 1 ] || [ "$limit" -lt 60 ]; then
    echo "== tvm-tune: skipped (no $tune_backend device, or out of time)"
  else
    echo "== tvm-tune: the candidates of $tune_dir ($tune_backend, ${#tune_ws[@]} workloads), each timed against the native default (limit ${limit} s)"
    timeout "$limit" "$ekb" eval "${tune_args[@]}" -s "$tune_dir" --db "$work/tune.db" --run tvm-tune \
      --json "$work/tvm-tune.json" "${tune_ws[@]}" > "$work/tvm-tune.log" 2>&1 \
      || echo "  tvm-tune: exit $? ($(tail -1 "$work/tvm-tune.log"))"
    [ -e "$work/tvm-tune.json" ] || "$ekb" report tvm-tune --db "$work/tune.db" --json "$work/tvm-tune.json" > /dev/null 2>&1
    cat "$work/tvm-tune.log" >> "$out/eval.log" 2>/dev/null
    # Per workload TVM's default (sample 0) against the best sample, and the geomeans; the records,
    # one small file per workload, come back as one archive for <cache>/tvm-records on any machine.
    "$ekb" tvm-tune select "$work/tvm-tune.json" --solutions "$tune_dir" --records "$work/tvm-records" \
      && tar czf "$out/tvm-records.tar.gz" -C "$work/tvm-records" . \
      && echo "  records: \$OUT/tvm-records.tar.gz (tar xzf it into <cache dir>/tvm-records)"
  fi
fi

# ---- LEKA's search on cuda (issue 20, docs/AGENT.md): bench/agent.sh's sample on the GPU ----
# $EKB_GPU_AGENT_N workloads (default 30; bench/agent_sample.py, without the held-out part;
# EKB_GPU_AGENT_SAMPLE=--largest takes each pattern's largest workload instead of its first), each
# searched by `ekb agent --policy search` with $EKB_GPU_AGENT_EVALS evaluations (default 64) and at
# most $EKB_GPU_AGENT_WALL seconds (default: what the step's share of the budget allows), in
# $EKB_GPU_AGENT_SHARDS processes side by side (default 4: they share the GPU, so a step's timing
# is noisier than alone; the keep decisions tolerate it, the judgement does not). Then the solutions
# are judged alone by one `ekb eval` under the full protocol against the native default; where the
# `tvm` step ran on the same workloads (bench/tvm-gpu made for this sample:
# EKB_BENCH_NAMES=<(ekb list --json | bench/agent_sample.py 30) bench/tvm_gpu_sources.sh), each
# workload's speedup over TVM's default is the ratio of the two speedups over the native default.
# $OUT/agent.tar.gz holds the solutions and trajectories, $OUT/agent-results.json the judgement.
# EKB_GPU_AGENT_BACKEND=opencl searches on the OpenCL platform of the opencl steps instead (without
# a GPU: a dry run on PoCL, e.g. EKB_GPU_OPENCL_PLATFORM=pocl EKB_GPU_STEPS=agent EKB_GPU_AGENT_N=2).
agent_args=(--backend cuda); [ "${EKB_GPU_AGENT_BACKEND:-cuda}" = opencl ] && agent_args=("${opencl_args[@]}")
if step agent && { [ "$has_cuda" = 1 ] || [ "${EKB_GPU_AGENT_BACKEND:-}" = opencl ]; }; then
  mapfile -t agent_ws < <(python3 bench/agent_sample.py "${EKB_GPU_AGENT_N:-30}" ${EKB_GPU_AGENT_SAMPLE:-} < "$work/list.json")
  agent_shards=${EKB_GPU_AGENT_SHARDS:-4}
  # The search gets two thirds of what is left (of the step's share beside the suites), the judging the rest.
  agent_left=$(( $(seconds_left) - 20 )); { step cuda || step opencl; } && agent_left=$(( agent_left / 2 ))
  per_shard=$(( (${#agent_ws[@]} + agent_shards - 1) / agent_shards ))
  agent_wall=${EKB_GPU_AGENT_WALL:-$(( agent_left * 2 / 3 / per_shard ))}
  if [ "$agent_wall" -lt 10 ]; then
    echo "== agent: skipped (out of time)"
  else
    echo "== agent: leka:search on ${agent_args[*]}, ${#agent_ws[@]} workloads in $agent_shards shards, budget evaluations=${EKB_GPU_AGENT_EVALS:-64},wall=$agent_wall per workload"
    t1=$(date +%s)
    for ((k = 0; k < agent_shards; ++k)); do
      part=()
      for ((i = k; i < ${#agent_ws[@]}; i += agent_shards)); do part+=("${agent_ws[i]}"); done
      timeout $(( agent_wall * per_shard + 30 )) "$ekb" agent --policy search "${agent_args[@]}" \
        --budget "evaluations=${EKB_GPU_AGENT_EVALS:-64},wall=$agent_wall" --step-time 0.3 --out "$work/agent" \
        "${part[@]}" > "$work/agent-$k.log" 2>&1 &
    done
    wait
    echo "  searched in $(( $(date +%s) - t1 )) s"
    judge_limit=$(( agent_left - ($(date +%s) - t1) )); [ "$judge_limit" -lt 30 ] && judge_limit=30
    timeout "$judge_limit" "$ekb" eval "${agent_args[@]}" -s "$work/agent" --db "$work/agent.db" --run agent \
      --json "$out/agent-results.json" "${agent_ws[@]}" > "$work/agent-eval.log" 2>&1 \
      || echo "  judging: exit $? ($(tail -1 "$work/agent-eval.log"))"
    [ -e "$out/agent-results.json" ] || "$ekb" report agent --db "$work/agent.db" --json "$out/agent-results.json" > /dev/null 2>&1
    cat "$work"/agent-*.log >> "$out/eval.log" 2>/dev/null
    tar czf "$out/agent.tar.gz" -C "$work" agent 2>/dev/null
    python3 - "$out/agent-results.json" "$out/tvm-results.json" "$work/agent" <<'PY'
import glob, json, math, sys, collections
rows = json.load(open(sys.argv[1]))["results"]
try:
    tvm = {r["workload"]: r for r in json.load(open(sys.argv[2]))["tvm-cuda"]["results"]}
except (OSError, ValueError, KeyError):
    tvm = {}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
ok = [r for r in rows if r.get("correct") and r.get("speedup")]
sp = [r["speedup"] for r in ok]
n = len(rows)
print(f"  judged {n}: correct {sum(r['correct'] for r in rows)}, Fast@1.0 {100 * sum(x > 1 for x in sp) / max(n, 1):.1f}%,"
      f" 95% interval above 1 {100 * sum((r.get('speedup_ci95') or [0])[0] > 1 for r in ok) / max(n, 1):.1f}%,"
      f" Fast@1.5 {100 * sum(x > 1.5 for x in sp) / max(n, 1):.1f}%, geomean {gm(sp):.2f}x over the native default")
steps = collections.Counter()
for path in glob.glob(sys.argv[3] + "/*/*.trajectory.jsonl"):
    for line in open(path):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("record") == "step":
            steps[rec.get("outcome")] += 1
print("  steps by outcome: " + ", ".join(f"{k} {v}" for k, v in steps.most_common()))
walls = sorted(r["ledger"]["wall_s"] for r in rows if r.get("ledger"))
evals = sorted(r["ledger"]["evaluations"] for r in rows if r.get("ledger"))
if walls:
    print(f"  per workload: wall median {walls[len(walls) // 2]:.0f} s, evaluations median {evals[len(evals) // 2]} (min {evals[0]}, max {evals[-1]})")
ratios = []
for r in ok:
    t = tvm.get(r["workload"])
    if t and t.get("correct") and t.get("speedup"):
        ratios.append((r["workload"], r["speedup"] / t["speedup"]))
if ratios:
    print(f"  against TVM's default ({len(ratios)} both correct and timed; ratio of the speedups over the native default):"
          f" faster on {100 * sum(x > 1 for _, x in ratios) / n:.1f}% of the {n}, geomean {gm([x for _, x in ratios]):.2f}x")
for r in sorted(rows, key=lambda r: r["workload"]):
    t = tvm.get(r["workload"], {})
    what = f"{r['speedup']:6.2f}x" if r.get("correct") and r.get("speedup") else (r.get("error") or "-")
    vs = f"  TVM {t['speedup']:5.2f}x" if t.get("correct") and t.get("speedup") else ""
    print(f"    {r['workload']:<56} {what:>8}{vs}")
PY
  fi
fi

# ---- the whole suite's correctness, in shards (at most 8 result files come back: merged) ----
# $EKB_GPU_SUITE (globs over PATTERN/WORKLOAD, space-separated) narrows the suite, e.g. to finish
# the domains an earlier call did not reach.
mapfile -t names < <(python3 -c "
import fnmatch, json
ws = [w['name'] for w in json.load(open('$work/list.json'))]
globs = '${EKB_GPU_SUITE:-}'.split()
if globs: ws = [w for w in ws if any(fnmatch.fnmatchcase(w, g) for g in globs)]
n = len(ws) if '$n' == 'all' else min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
# $EKB_GPU_SHARDS parallel evaluations (default: half the cores, at most 8).
shards=${EKB_GPU_SHARDS:-$(( $(nproc) / 2 ))}; [ -z "${EKB_GPU_SHARDS:-}" ] && [ "$shards" -gt 8 ] && shards=8
[ "$shards" -lt 1 ] && shards=1
suite_solutions="${EKB_GPU_SUITE_SOLUTIONS:-native}"
# A carried DIR.tar.gz is unpacked afresh (a directory left by an earlier call on a warm machine
# would hide a newer archive), packed with or without DIR/ as its top folder.
if [ "$suite_solutions" != native ] && [ -e "$suite_solutions.tar.gz" ] && [ "$suite_solutions.tar.gz" -nt "$suite_solutions" -o ! -d "$suite_solutions" ]; then
  mkdir -p "$work/suite-solutions" && tar xzf "$suite_solutions.tar.gz" -C "$work/suite-solutions"
  top="$work/suite-solutions/$(basename "$suite_solutions")"
  suite_solutions=$([ -d "$top" ] && echo "$top" || echo "$work/suite-solutions")
fi
suite_eval() {  # LABEL LIMIT_S RESULTS_FILE BACKEND-ARGS...
  local label=$1 limit=$2 results=$3; shift 3
  echo "== the suite on $label: $suite_solutions, correctness under the full protocol (limit ${limit} s)"
  if [ "$limit" -lt 30 ]; then echo "  skipped: out of time"; return; fi
  local t1; t1=$(date +%s)
  for ((k = 0; k < shards; ++k)); do
    local part=()
    for ((i = k; i < ${#names[@]}; i += shards)); do part+=("${names[i]}"); done
    # Correctness only (--no-timing): the self-speedup of the default is 1 by construction.
    timeout "$limit" "$ekb" eval "$@" -s "$suite_solutions" --db "$work/$label-$k.db" --run "$label-$k" \
      --json "$work/$label-$k.json" --no-timing "${part[@]}" > "$work/$label-eval-$k.log" 2>&1 &
  done
  wait
  echo "  ${#names[@]} workloads in $shards shards: $(( $(date +%s) - t1 )) s"
  for ((k = 0; k < shards; ++k)); do
    if [ ! -e "$work/$label-$k.json" ]; then
      # Cut short: what the shard finished is in its database.
      echo "  shard $k did not finish: $(tail -1 "$work/$label-eval-$k.log")"
      "$ekb" report "$label-$k" --db "$work/$label-$k.db" --json "$work/$label-$k.json" > /dev/null 2>&1
    fi
  done
  cat "$work/$label"-eval-*.log >> "$out/eval.log" 2>/dev/null
  python3 - "$work" "$label" "$shards" "$out/$results" <<'PY'
import json, sys, os, collections
work, label, shards = sys.argv[1], sys.argv[2], int(sys.argv[3])
rs, device = [], None
for k in range(shards):
    p = f"{work}/{label}-{k}.json"
    if not os.path.exists(p):
        print(f"  shard {k}: no results (see eval.log)"); continue
    doc = json.load(open(p)); rs += doc["results"]; device = device or doc.get("device")
if device: print(f"  device: {device.get('name')} | {device.get('compiler')}")
by = collections.defaultdict(list)
for r in rs: by[r["task"].split(".")[0]].append(r)
print(f"  {'domain':<12}{'n':>5}{'compiled':>10}{'correct':>9}{'check s (median)':>18}{'max':>8}")
def row(name, group):
    t = sorted(r["cost"]["check_s"] for r in group if r.get("cost"))
    med = t[len(t) // 2] if t else float("nan")
    print(f"  {name:<12}{len(group):>5}{sum(bool(r['compiled']) for r in group):>10}"
          f"{sum(bool(r['correct']) for r in group):>9}{med:>18.3f}{(t[-1] if t else float('nan')):>8.2f}")
for d in sorted(by): row(d, by[d])
row("all", rs)
json.dump(rs, open(sys.argv[4], "w"))
bad = [r for r in rs if not r.get("correct")]
if bad:
    print(f"  failures ({len(bad)}):")
    for r in bad[:40]:
        print(f"    {r['workload']}: {r.get('error')}: {(r.get('message') or '')[:160]}")
PY
}
# cuda fills the reference cache that opencl then reads: opencl gets the smaller share.
reserve=0; [ "$has_opencl" = 1 ] && step opencl && reserve=$(( $(seconds_left) * 2 / 5 ))
limit=$(( $(seconds_left) - reserve - 15 ))
[ "$has_cuda" = 1 ] && step cuda && suite_eval cuda "$limit" gpu-results.json --backend cuda
if ! step opencl; then
  :
elif [ "$has_opencl" = 1 ]; then
  suite_eval opencl "$(( $(seconds_left) - 15 ))" opencl-results.json "${opencl_args[@]}"
else
  echo "== the suite on opencl: skipped, the carried ekb has no opencl backend"
fi
echo "== total $(( $(date +%s) - t0 )) s"
