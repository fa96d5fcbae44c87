// A scheduled kernel compiled with the cpu backend's real flags (-O3 -march=native -fopenmp, no
// -fno-unroll-loops) is packed SIMD at the schedule's width: clang must not fully unroll the
// vector loop into scalars first (it did, for a GEMM register tile: scalar vfmadd...ss only), and
// a `local` cache of the tile must live in vector registers (codegen/simd_loop.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "../ir/ir_test_util.h"
#include "codegen/c_emitter.h"
#include "ir/printer.h"
#include "lower/lower.h"
#include "suite/suite.h"
#include "test_paths.h"

namespace ekb::codegen {
namespace {

// A 4 x 64 tile of C (4 rows x 4 vectors of 16), k outside it, plus the given memory layer.
std::string scheduled_gemm_source(const std::string& memory = "") {
  const suite::Suite s = suite::Suite::load();
  auto w = s.find_workload("linalg.gemm/medium");
  EXPECT_TRUE(w);
  std::string text = ir::print_pattern(w->pattern->module.pattern) +
                     "workload medium mobile { NI = 200, NJ = 256, NK = 240, T = f32 }\n"
                     "schedule cpu {\n  split(C, i, 4, io, ii)\n  split(C, j, 64, jo, ji)\n"
                     "  reorder(C, jo, io, k, ii, ji)\n  parallel(C, jo)\n  vectorize(C, ji, 16)\n"
                     "  unroll(C, ji, 4)\n  unroll(C, ii, 4)\n}\n" + memory;
  auto l = ir::testing::load(text);
  EXPECT_TRUE(l.inst) << l.diags;
  return l.inst ? emit_c_source(lower::lower(*l.inst)) : "";
}

std::string assembly_of(const std::string& source) {
  std::string c = ekb::testing::private_temp_path("ekb_simd_gemm", ".c");
  std::string s = ekb::testing::private_temp_path("ekb_simd_gemm", ".s");
  std::ofstream(c) << source;
  std::string cmd = "clang -O3 -march=native -fopenmp -S -include " EKB_SOURCE_DIR "/include/ekb/ekb_abi.h " + c +
                    " -o " + s + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::stringstream text;
  text << std::ifstream(s).rdbuf();
  std::remove(c.c_str());
  std::remove(s.c_str());
  return text.str();
}

TEST(ScheduledSimd, GemmRegisterTileIsPackedAtTheScheduledWidth) {
  std::string source = scheduled_gemm_source();
  ASSERT_NE(source.find("16 lanes at once"), std::string::npos) << source;
  ASSERT_NE(source.find("ekb_f32x16"), std::string::npos) << source;
  std::string a = assembly_of(source);
  EXPECT_TRUE(std::regex_search(a, std::regex("vfmadd[0-9]+ps"))) << a;
  EXPECT_FALSE(std::regex_search(a, std::regex("vfmadd[0-9]+ss"))) << "scalar multiply-adds left\n" << a;
  if (__builtin_cpu_supports("avx512f"))
    EXPECT_TRUE(std::regex_search(a, std::regex("vfmadd[0-9]+ps[^\n]*zmm"))) << "16 floats are one zmm\n" << a;
}

// The tile cached in a `local` array (cache_write), its copy nests vectorized and unrolled: once
// the unrolled loops are unrolled, every access to the tile has a constant offset and clang keeps
// it in 16 zmm registers across the k loop. The tile is the only array on the stack, so no vector
// may be loaded or stored there.
TEST(ScheduledSimd, GemmLocalTileLivesInVectorRegisters) {
  std::string source = scheduled_gemm_source(
      "memory cpu {\n  cache_write(C, io, local, Cl)\n}\n"
      "schedule cpu {\n  vectorize(Cl, c1, 16)\n  unroll(Cl, c1, 4)\n  unroll(Cl, c0, 4)\n}\n");
  ASSERT_NE(source.find("float Cl["), std::string::npos) << source;
  ASSERT_NE(source.find("ekb_load_f32x16(&Cl["), std::string::npos) << source;
  std::string a = assembly_of(source);
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "the tile is 16 zmm registers on AVX-512";
  std::smatch m;
  int fmas = 0;
  const std::regex fma("vfmadd[0-9]+ps[^\n]*zmm");
  for (auto it = std::sregex_iterator(a.begin(), a.end(), fma); it != std::sregex_iterator(); ++it) ++fmas;
  EXPECT_GE(fmas, 16) << a;
  EXPECT_FALSE(std::regex_search(a, m, std::regex("[^\n]*zmm[^\n]*\\(%r[sb]p\\)[^\n]*|[^\n]*\\(%r[sb]p\\)[^\n]*zmm[^\n]*")))
      << "the tile is in memory: " << m.str() << "\n" << a;
}

// nontemporal(C): the tile's stores to C are streaming stores (vmovntps) in the assembly.
TEST(ScheduledSimd, NontemporalOutputStoresAreStreamingStores) {
  std::string source = scheduled_gemm_source("memory cpu {\n  nontemporal(C)\n}\n");
  ASSERT_NE(source.find("ekb_stream_f32x16"), std::string::npos) << source;
  std::string a = assembly_of(source);
  EXPECT_TRUE(std::regex_search(a, std::regex("vmovntps"))) << a;
  EXPECT_TRUE(std::regex_search(a, std::regex("sfence"))) << a;
}

}  // namespace
}  // namespace ekb::codegen
