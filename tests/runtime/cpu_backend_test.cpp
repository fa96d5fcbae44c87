#include "runtime/cpu_backend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/compile_cache.h"

namespace ekb::runtime {
namespace {

std::string fresh_cache_dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "ekb-backend-test-" + name;
  std::filesystem::remove_all(d);
  return d;
}

TEST(CompileCache, KeysDependOnEveryPartAndItsBoundaries) {
  EXPECT_EQ(content_key({"a", "b"}), content_key({"a", "b"}));
  EXPECT_NE(content_key({"ab", "c"}), content_key({"a", "bc"}));
  EXPECT_NE(content_key({"a"}), content_key({"a", ""}));
  EXPECT_EQ(content_key({"x"}).size(), 32u);
}

TEST(CpuBackend, CompilesOnceThenServesTheCache) {
  CpuBackendOptions o;
  o.cache_dir = fresh_cache_dir("cache");
  CpuBackend b(o);
  Source s{Language::C, "void ekb_main(float* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = 1; }", "t.c"};
  CompileOutcome first = b.compile(s);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(std::filesystem::exists(first.artifact->path));
  CompileOutcome second = b.compile(s);
  ASSERT_TRUE(second.ok);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.artifact->path, first.artifact->path);
  EXPECT_LT(second.seconds, 0.05);
  s.text += "\n";  // any change is a new key
  EXPECT_FALSE(b.compile(s).cached);
}

TEST(CpuBackend, ReportsTheFirstCompilerErrorsUnderTheSolutionsName) {
  CpuBackendOptions o;
  o.cache_dir = fresh_cache_dir("errors");
  CpuBackend b(o);
  CompileOutcome r = b.compile({Language::C, "void ekb_main(float* y) { y[0] = undefined_name; }", "bad.c"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("bad.c:1:"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("undefined_name"), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find("tmp-"), std::string::npos) << "temporary paths leak: " << r.message;
}

TEST(CpuBackend, AnUndefinedSymbolIsACompileErrorNotALoadError) {
  CpuBackendOptions o;
  o.cache_dir = fresh_cache_dir("undefined");
  CpuBackend b(o);
  CompileOutcome r = b.compile({Language::C, "void helper(void); void ekb_main(void) { helper(); }", "u.c"});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("helper"), std::string::npos) << r.message;
}

TEST(CpuBackend, CompilesCxxWithOpenMPAndTheAbiHeader) {
  CpuBackendOptions o;
  o.cache_dir = fresh_cache_dir("cxx");
  CpuBackend b(o);
  CompileOutcome r = b.compile({Language::Cpp,
                                "#include <vector>\n"
                                "extern \"C\" void ekb_main(ekb_f16* y, int64_t n) {\n"
                                "#pragma omp parallel for\n"
                                "  for (int64_t i = 0; i < n; ++i) y[i] = ekb_f32_to_f16(1.0f);\n}\n",
                                "t.cpp"});
  EXPECT_TRUE(r.ok) << r.log;
  EXPECT_FALSE(b.compile({Language::Cuda, "", "k.cu"}).ok);
}

TEST(CpuBackend, DescribesTheDevice) {
  CpuBackend b;
  const DeviceInfo& d = b.device_info();
  EXPECT_EQ(d.backend, "cpu");
  EXPECT_NE(d.name.find("core"), std::string::npos);
  EXPECT_NE(d.compiler.find("clang"), std::string::npos);
}

// The host's flags are today's, byte for byte: they are part of every cached artifact's key.
TEST(CpuTarget, TheHostKeepsItsFlagsAndACrossTargetHasNoneOfTheHostsOwn) {
  CpuBackend host;
  std::string flags;
  for (const auto& f : host.flags(Language::C)) flags += f + " ";
  EXPECT_EQ(flags.substr(0, flags.find("-include")),
            "-x c -std=gnu17 -O3 -march=native -fopenmp -fPIC -shared -fno-math-errno -fveclib=libmvec ");
  EXPECT_EQ(host_cpu_target().libraries, (std::vector<std::string>{"-lmvec", "-lm", "-Wl,-z,defs"}));
  EXPECT_TRUE(cpu_target("host").is_host());

  for (const std::string& triple : cross_cpu_targets()) {
    const CpuTarget t = cpu_target(triple);
    EXPECT_TRUE(t.emulated);
    std::string all;
    for (const auto& f : t.compile_flags) all += f + " ";
    for (const auto& f : t.libraries) all += f + " ";
    // A vector extension's target ("aarch64-linux-gnu+sve256") compiles for its triple.
    EXPECT_NE(all.find("--target=" + triple.substr(0, triple.find('+')) + " "), std::string::npos) << all;
    for (const char* host_only : {"-march=native", "-lmvec", "-fveclib", "-fopenmp"})
      EXPECT_EQ(all.find(host_only), std::string::npos) << triple << ": " << all;
    ASSERT_FALSE(t.worker_prefix.empty());
    EXPECT_NE(t.worker_prefix[0].find("qemu-"), std::string::npos);
  }
  EXPECT_THROW(cpu_target("sparc64-linux-gnu"), std::invalid_argument);
}

// A cross target's artifacts are that target's code, cached apart from the host's.
TEST(CpuTarget, ACrossTargetCompilesItsOwnCodeIntoItsOwnCache) {
  for (const auto& [triple, machine] : {std::pair{"aarch64-linux-gnu", "AArch64"}, std::pair{"riscv64-linux-gnu", "RISC-V"}}) {
    CpuBackendOptions o;
    o.cache_dir = fresh_cache_dir(std::string("cross-") + triple);
    o.target = cpu_target(triple);
    CpuBackend b(o);
    const Source s{Language::C, "#include <math.h>\nvoid ekb_main(float* y, int64_t n) {\n#pragma omp parallel for\n"
                                "  for (int64_t i = 0; i < n; ++i) y[i] = expf(y[i]);\n}\n", "t.c"};
    const CompileOutcome r = b.compile(s);
    ASSERT_TRUE(r.ok) << triple << ": " << r.log;
    EXPECT_NE(r.artifact->path.find(std::string("/cpu-") + triple + "/"), std::string::npos) << r.artifact->path;
    std::ifstream so(r.artifact->path, std::ios::binary);
    char header[20] = {};
    so.read(header, sizeof header);
    const uint16_t e_machine = static_cast<uint16_t>(static_cast<unsigned char>(header[18]) |
                                                     static_cast<unsigned char>(header[19]) << 8);
    EXPECT_EQ(e_machine, std::string(machine) == "AArch64" ? 183 : 243) << triple << " (ELF e_machine)";
    EXPECT_EQ(b.device_info().target, triple);
    EXPECT_TRUE(b.device_info().emulated);
    EXPECT_EQ(b.worker_address_space_limit(1 << 30), 0u);
  }
}

TEST(CompilerLog, TrimsToTheFirstErrors) {
  std::string log = "a.c:1:1: warning: w\nnote\na.c:2:1: error: e1\n  x\na.c:3:1: error: e2\n";
  EXPECT_EQ(trim_compiler_log(log, 2), "a.c:2:1: error: e1\n  x");
  EXPECT_EQ(trim_compiler_log("no errors here"), "no errors here");
}

TEST(Language, FromPaths) {
  EXPECT_EQ(language_from_path("a/b.c"), Language::C);
  EXPECT_EQ(language_from_path("b.cpp"), Language::Cpp);
  EXPECT_EQ(language_from_path("b.cu"), Language::Cuda);
  EXPECT_EQ(language_from_path("b.cl"), Language::OpenCL);
  EXPECT_FALSE(language_from_path("b.txt"));
}

}  // namespace
}  // namespace ekb::runtime
