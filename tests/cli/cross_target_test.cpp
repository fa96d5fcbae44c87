// `ekb eval --target TRIPLE` (docs/DEVICES.md, "Targets"): kernels cross-compiled for aarch64 and
// riscv64 and checked under qemu-user by that target's ekb-device worker, against the host's
// reference; correctness only, and the results say which target and that it was emulated.
// Needs build-TRIPLE/ekb-device (scripts/build-device.sh TRIPLE; scripts/test.sh builds them).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "runtime/cpu_target.h"
#include "runtime/subprocess.h"

#include "run_ekb.h"
#include "test_paths.h"

namespace {

using ekb::testing_cli::run_ekb;
namespace fs = std::filesystem;

// One small workload of each domain, and the patterns of examples/schedules-cpu among them.
const char* kAcrossDomains =
    "audio.fir/cmsis_block_32x29 graph.ad_autoencoder/ad_640 img.gaussian3x3/vww_96x96_u8 linalg.gemm/mini "
    "nn.softmax/kws_1x12 nn.dwconv3x3/kws_25x5x64 qnn.add/mbv2_14x14x96 robotics.quat_mul_normalize/n1024 "
    "transformer.rmsnorm/smollm_1x576";
const char* kScheduled =
    "audio.fir/cmsis_block_32x29 img.gaussian3x3/vww_96x96_u8 linalg.gemm/mini nn.softmax/kws_1x12 "
    "nn.dwconv3x3/kws_25x5x64 transformer.rmsnorm/smollm_1x576";

class CrossTarget : public ::testing::TestWithParam<const char*> {
 protected:
  // `ekb eval` of SOLUTIONS over WORKLOADS for this target: its results JSON.
  nlohmann::json eval(const std::string& solutions, const std::string& workloads, const std::string& extra = "") {
    const std::string target = GetParam();
    const std::string triple = target.substr(0, target.find('+'));  // the vector extension's targets share its worker
    const fs::path worker = fs::path(EKB_SOURCE_DIR) / ("build-" + triple) / "ekb-device";
    EXPECT_TRUE(fs::exists(worker)) << worker << " is missing: scripts/build-device.sh " << triple;
    const fs::path dir = ekb::testing::private_temp_path(std::string("cross_") + target);
    fs::create_directories(dir);
    const std::string json = (dir / "results.json").string();
    auto r = run_ekb("eval -s " + solutions + " --target " + target + " --trials 3 --db " + (dir / "r.db").string() +
                     " --json " + json + " " + extra + " " + workloads);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("correctness only"), std::string::npos) << "timing under emulation was not refused: " << r.err;
    std::ifstream in(json);
    return in ? nlohmann::json::parse(in) : nlohmann::json{};
  }
};

TEST_P(CrossTarget, TheDefaultLoweringIsCorrectUnderEmulationInEveryDomain) {
  const nlohmann::json results = eval("native", kAcrossDomains);
  ASSERT_EQ(results["results"].size(), 9u) << results.dump();
  for (const auto& r : results["results"]) {
    EXPECT_TRUE(r["correct"].get<bool>()) << r["workload"] << ": " << r["message"];
    EXPECT_TRUE(r["speedup"].is_null()) << r["workload"] << ": an emulated time reported as a speed";
  }
  EXPECT_EQ(results["device"]["target"], GetParam());
  EXPECT_EQ(results["device"]["emulated"], true);
}

TEST_P(CrossTarget, TheExampleSchedulesAreCorrectUnderEmulation) {
  const nlohmann::json results = eval(std::string(EKB_SOURCE_DIR) + "/examples/schedules-cpu", kScheduled);
  ASSERT_EQ(results["results"].size(), 6u) << results.dump();
  for (const auto& r : results["results"]) EXPECT_TRUE(r["correct"].get<bool>()) << r["workload"] << ": " << r["message"];
}

// The checks run under emulation as on the host: a kernel that writes a wrong value is caught.
TEST_P(CrossTarget, AWrongKernelIsCaughtUnderEmulation) {
  const fs::path dir = ekb::testing::private_temp_path(std::string("cross_wrong_") + GetParam());
  ekb::testing_cli::write_wrong_gemm_mini(dir.string());
  const nlohmann::json results = eval(dir.string(), "linalg.gemm/mini");
  ASSERT_EQ(results["results"].size(), 1u);
  EXPECT_FALSE(results["results"][0]["correct"].get<bool>());
  EXPECT_EQ(results["results"][0]["error"], "mismatch") << results["results"][0].dump();
}

std::string test_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Emulated, CrossTarget, ::testing::Values("aarch64-linux-gnu", "riscv64-linux-gnu"), test_name);

// SVE and RVV at a fixed vector length: the example schedules are correct on a CPU of that length
// (qemu's), and the flags make vector code of the extension, not NEON or scalar code.
class VectorTarget : public CrossTarget {};

TEST_P(VectorTarget, TheExampleSchedulesAreCorrectUnderEmulation) {
  const nlohmann::json results = eval(std::string(EKB_SOURCE_DIR) + "/examples/schedules-cpu", kScheduled);
  ASSERT_EQ(results["results"].size(), 6u) << results.dump();
  for (const auto& r : results["results"]) EXPECT_TRUE(r["correct"].get<bool>()) << r["workload"] << ": " << r["message"];
  EXPECT_EQ(results["device"]["target"], GetParam());
}

TEST_P(VectorTarget, ItsFlagsMakeVectorCodeOfTheExtension) {
  const std::string target = GetParam();
  const bool sve = target.find("+sve") != std::string::npos;
  const fs::path dir = ekb::testing::private_temp_path("vector_isa_" + test_name({target.c_str(), 0}));
  fs::create_directories(dir);
  auto emitted = run_ekb("emit linalg.gemm/mini --schedule " + std::string(EKB_SOURCE_DIR) +
                         "/examples/schedules-cpu/linalg.gemm/all.ekb");
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  std::ofstream(dir / "gemm.c") << emitted.out;
  const ekb::runtime::CpuTarget t = ekb::runtime::cpu_target(target);
  std::vector<std::string> cc = {"clang", "-O3", "-include", std::string(EKB_SOURCE_DIR) + "/include/ekb/ekb_abi.h"};
  for (const auto& f : t.compile_flags)
    if (f != "-shared") cc.push_back(f);
  cc.insert(cc.end(), {"-c", (dir / "gemm.c").string(), "-o", (dir / "gemm.o").string()});
  const auto compiled = ekb::runtime::run_command(cc);
  ASSERT_TRUE(compiled.ok()) << compiled.output;
  const auto dump = ekb::runtime::run_command({t.binutils_prefix + "objdump", "-d", (dir / "gemm.o").string()});
  ASSERT_TRUE(dump.ok()) << dump.output;
  // SVE: instructions on z registers (ld1w {z0.s}, fmla z1.s ...); RVV: vector configuration and loads.
  const std::regex vector_code = sve ? std::regex(R"(\bz[0-9]+\.s\b)") : std::regex(R"(\b(vsetvli|vsetivli|vle32\.v)\b)");
  const auto found = std::distance(std::sregex_iterator(dump.output.begin(), dump.output.end(), vector_code), std::sregex_iterator());
  EXPECT_GT(found, 10) << target << ": no vector code of the extension in\n" << dump.output.substr(0, 3000);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Emulated, VectorTarget, ::testing::Values("aarch64-linux-gnu+sve256", "riscv64-linux-gnu+rvv128"),
                         test_name);

}  // namespace
