// Masked vector tails (split or vectorize with tail=mask; codegen/simd_loop.h): odd shapes are
// computed right under the whole evaluation protocol (fresh inputs every trial, poisoned outputs,
// canaries around every buffer, the f64 reference) for an elementwise stage, a reduction into the
// output, a read-modify-write update and a register-blocked GEMM; the emitted code uses masks and
// runs the blocks where every lane is live without them. The same programs for AVX2 (run here) and
// the cross targets (compiled always, run under qemu where the target's ekb-device is built).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../ir/ir_test_util.h"
#include "codegen/c_emitter.h"
#include "eval/eval_test_util.h"
#include "eval/evaluator.h"
#include "eval/solution_set.h"
#include "lower/lower.h"
#include "runtime/cpu_target.h"
#include "runtime/subprocess.h"
#include "test_paths.h"

namespace ekb::codegen {
namespace {

namespace fs = std::filesystem;

struct MaskedCase {
  const char* name;
  std::string body, workload, schedule;
};

std::string pattern_text(const MaskedCase& c) {
  return "pattern nn.t {\n  level operator\n  source \"test\"\n" + c.body + "\n}\nworkload w { " + c.workload + " }\n";
}

// 7 x 37: the columns are two vectors of 16 and a tail of 5, or one block of 32 and one of 5.
const MaskedCase kElementwise{"Elementwise",
                              "  params R, C\n  input x : f32[R, C] in [-8, 8]\n  output y : f32[R, C]\n"
                              "  y[i, j] = min(max(x[i, j], 0.0), 6.0) * 0.5 + x[i, j]",
                              "R = 7, C = 37", "schedule cpu {\n  vectorize(y, j, 16, tail=mask)\n}\n"};

// y[n] accumulated over k in the output, n in lanes: the 45 outputs are a block of 32 and one of
// 13 (a masked vector of 13 lanes, and one of none).
const MaskedCase kReductionIntoOutput{
    "ReductionIntoOutput",
    "  params N, K\n  input x : f32[K] in [-1, 1]\n  input w : f32[K, N] in [-1, 1]\n  output y : f32[N]\n"
    "  y[n] = sum(k in 0..K: x[k] * w[k, n])",
    "N = 45, K = 7",
    "schedule cpu {\n  split(y, n, 32, no, ni, tail=mask)\n  reorder(y, no, k, ni)\n  vectorize(y, ni, 16)\n}\n"};

// An update reading the element it writes: shift_inwards would apply it twice to some columns.
const MaskedCase kReadModifyWrite{
    "ReadModifyWrite",
    "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n"
    "  y[i, j] = x[i, j]\n  y[i, j] = 1.5 * y[i, j] + x[i, j]",
    "R = 5, C = 21",
    "schedule cpu {\n  split(y.update(0), j, 16, jo, ji, tail=mask)\n  vectorize(y.update(0), ji, 16)\n}\n"};

// examples/schedules-cpu/linalg.gemm/medium.ekb's micro-kernel at a shape ragged on every side:
// 23 rows (tail=mask on i: the last row block guarded per row), 77 columns (a full panel of 64,
// then one with 13 live lanes), k 17 (one block of 32, guarded).
const MaskedCase kGemm{
    "Gemm",
    "  params NI, NJ, NK\n  let alpha = 1.5\n  let beta = 1.2\n  input C_in : f32[NI, NJ] in [0, 1]\n"
    "  input A : f32[NI, NK] in [0, 1]\n  input B : f32[NK, NJ] in [0, 1]\n  output C : f32[NI, NJ]\n"
    "  temp Aa : f32[NI, NK]\n  Aa[i, k] = alpha * A[i, k]\n"
    "  C[i, j] = beta * C_in[i, j] + sum(k in 0..NK: Aa[i, k] * B[k, j])",
    "NI = 23, NJ = 77, NK = 17",
    "schedule cpu {\n  split(C, i, 4, io, ii, tail=mask)\n  split(C, j, 64, jo, ji, tail=mask)\n  split(C, k, 32, ko, ki)\n"
    "  reorder(C, jo, ko, io, ki, ii, ji)\n  compute_at(Aa, C, io)\n  parallel(C, jo)\n  vectorize(C, ji, 16)\n"
    "  unroll(C, ji, 4)\n  unroll(C, ii, 4)\n}\nmemory cpu {\n  cache_read(B, C, ko, tile, Bp)\n"
    "  cache_write(C, io, local, Cl)\n}\nschedule cpu {\n  vectorize(Cl, c1, 16)\n  unroll(Cl, c1, 4)\n"
    "  unroll(Cl, c0, 4)\n  vectorize(Bp, c1, 16, tail=mask)\n  vectorize(Aa, k, 16, tail=mask)\n}\n"};

const MaskedCase kCases[] = {kElementwise, kReductionIntoOutput, kReadModifyWrite, kGemm};

std::string scheduled_source(const MaskedCase& c) {
  auto l = ir::testing::load(pattern_text(c) + c.schedule);
  EXPECT_TRUE(l.inst) << l.diags;
  return l.inst ? emit_c_source(lower::lower(*l.inst)) : "";
}

// The case evaluated on `backend` through the whole protocol (3 random trials, the edge and
// branch trials, a recheck), against the default lowering.
eval::CandidateResult evaluate_case(runtime::Backend& backend, const MaskedCase& c) {
  auto plain = ir::testing::load(pattern_text(c));
  EXPECT_TRUE(plain.inst) << plain.diags;
  eval::WorkloadReference ref(*plain.inst);
  runtime::Source native = eval::native_baseline_source(*plain.inst);
  runtime::Source scheduled = native;
  scheduled.text = scheduled_source(c);
  scheduled.origin = std::string("masked tails: ") + c.name;
  eval::EvalOptions options = ekb::testing::fast_options();
  options.time = false;
  options.trials = 3;
  options.call_timeout_s = 60;
  return eval::evaluate(backend, ref, scheduled, native, options);
}

class MaskedTails : public ::testing::TestWithParam<MaskedCase> {};

TEST_P(MaskedTails, AreCorrectUnderTheFullProtocol) {
  eval::CandidateResult r = evaluate_case(ekb::testing::test_backend(), GetParam());
  EXPECT_TRUE(r.correct) << eval::error_kind_name(r.error) << ": " << r.message << "\n" << scheduled_source(GetParam());
}

TEST_P(MaskedTails, AreCorrectWithAvx2) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2 here";
  static runtime::CpuBackend avx2([] {
    runtime::CpuBackendOptions o;
    o.cache_dir = ekb::testing::test_cache_dir();
    for (std::string& flag : o.target.compile_flags)
      if (flag == "-march=native") flag = "-march=haswell";  // AVX2 and FMA, no AVX-512
    return o;
  }());
  eval::CandidateResult r = evaluate_case(avx2, GetParam());
  EXPECT_TRUE(r.correct) << eval::error_kind_name(r.error) << ": " << r.message;
}

TEST_P(MaskedTails, EmitMasksAndUnmaskedFullBlocks) {
  const std::string source = scheduled_source(GetParam());
  // The masked tails, the loop printed twice around them, and each ISA's predicated loads.
  for (const char* text : {"a masked tail (tail=mask)", "every masked tail below runs all its lanes",
                           "_mm512_maskz_loadu_ps", "_mm256_maskload_ps", "svwhilelt_b32_s64", "EKB_RVV(vle32_v_f32m1)"})
    EXPECT_NE(source.find(text), std::string::npos) << text << " is missing in\n" << source;
}

std::string case_name(const ::testing::TestParamInfo<MaskedCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(OddShapes, MaskedTails, ::testing::ValuesIn(kCases), case_name);

// The output tile of the GEMM (a `local` cache) stays in registers with its masked tails: they
// blend into it (a private array the whole vector of which is in bounds) instead of masked stores,
// which would keep it in memory.
TEST(MaskedTails, TheGemmTileBlendsInsteadOfMaskedStores) {
  const std::string source = scheduled_source(kGemm);
  EXPECT_NE(source.find("ekb_select_f32x16("), std::string::npos) << source;
  EXPECT_EQ(source.find("ekb_store_masked_f32x16(&Cl["), std::string::npos) << source;
  EXPECT_EQ(source.find("ekb_load_masked_f32x16(&Cl["), std::string::npos) << source;
  EXPECT_NE(source.find("ekb_store_masked_f32x16(&C["), std::string::npos) << source;
}

// Cross targets: predicated SVE and RVV code, NEON's scalar remainder; compiled for each, and run
// under qemu-user where build-TRIPLE/ekb-device exists (scripts/build-device.sh TRIPLE).
class CrossMaskedTails : public ::testing::TestWithParam<const char*> {};

TEST_P(CrossMaskedTails, CompileAndAreCorrectUnderEmulation) {
  const runtime::CpuTarget target = runtime::cpu_target(GetParam());
  const fs::path dir = ekb::testing::private_temp_path("masked_tails_cross");
  fs::create_directories(dir);
  for (const MaskedCase& c : kCases) {
    std::ofstream(dir / "kernel.c") << scheduled_source(c);
    std::vector<std::string> cc = {"clang", "-O2", "-include", std::string(EKB_SOURCE_DIR) + "/include/ekb/ekb_abi.h"};
    for (const std::string& f : target.compile_flags)
      if (f != "-shared") cc.push_back(f);
    cc.insert(cc.end(), {"-c", (dir / "kernel.c").string(), "-o", (dir / "kernel.o").string()});
    const auto compiled = runtime::run_command(cc);
    EXPECT_TRUE(compiled.ok()) << GetParam() << " " << c.name << ": " << compiled.output;
  }
  fs::remove_all(dir);
  if (!fs::exists(target.worker_executable)) GTEST_SKIP() << target.worker_executable << " is not built: compiled only";
  runtime::CpuBackend backend([&] {
    runtime::CpuBackendOptions o;
    o.cache_dir = ekb::testing::test_cache_dir();
    o.target = target;
    return o;
  }());
  for (const MaskedCase& c : kCases) {
    eval::CandidateResult r = evaluate_case(backend, c);
    EXPECT_TRUE(r.correct) << GetParam() << " " << c.name << ": " << eval::error_kind_name(r.error) << ": " << r.message;
  }
}

std::string target_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Emulated, CrossMaskedTails,
                         ::testing::Values("aarch64-linux-gnu", "aarch64-linux-gnu+sve256", "riscv64-linux-gnu+rvv128"),
                         target_name);

}  // namespace
}  // namespace ekb::codegen
