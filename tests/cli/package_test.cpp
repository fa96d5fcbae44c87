// `ekb package` (docs/DEVICES.md, "Deployable packages"): only solutions that pass the full
// protocol go into the library, each under its workload's name with nothing else exported; the
// example program checks its kernel against ekb's reference and fails when the kernel is wrong;
// for aarch64 the package is built for the target and its example runs under qemu-user.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "run_ekb.h"
#include "runtime/subprocess.h"
#include "test_paths.h"

namespace {

using ekb::testing_cli::run_ekb;
namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return in ? nlohmann::json::parse(in) : nlohmann::json{};
}

// The global symbols the archive defines, as `nm` of the target's binutils lists them.
std::set<std::string> defined_globals(const std::string& nm, const fs::path& archive) {
  const auto r = ekb::runtime::run_command({nm, "--defined-only", "--extern-only", archive.string()});
  EXPECT_TRUE(r.ok()) << r.output;
  std::set<std::string> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string address, kind, name;
    if (words >> address >> kind >> name) out.insert(name);
  }
  return out;
}

TEST(Package, OnlyCorrectSolutionsAreLibraryFunctionsAndTheExampleChecksItsKernel) {
  const fs::path dir = ekb::testing::private_temp_path("package_host");
  fs::remove_all(dir);
  const fs::path solutions = dir / "solutions", pkg = dir / "pkg";
  ekb::testing_cli::write_wrong_gemm_mini(solutions.string());
  fs::create_directories(solutions / "nn.relu6");
  fs::copy_file(fs::path(EKB_SOURCE_DIR) / "examples/schedules-cpu/nn.relu6/all.ekb", solutions / "nn.relu6" / "all.ekb");

  auto r = run_ekb("package -s " + solutions.string() + " --out " + pkg.string() +
                   " linalg.gemm/mini nn.relu6/mbv2_035_96_48x48x48");
  EXPECT_EQ(r.code, 1) << "a solution was left out, which is a failure: " << r.out << r.err;
  EXPECT_NE(r.out.find("1 of 2 workloads with solutions packaged"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("nn.relu6/mbv2_035_96_48x48x48: ok"), std::string::npos) << "the example did not pass: " << r.out;

  const nlohmann::json manifest = read_json(pkg / "manifest.json");
  ASSERT_EQ(manifest["kernels"].size(), 1u) << manifest.dump(2);
  EXPECT_EQ(manifest["kernels"][0]["function"], "ekb_nn_relu6_mbv2_035_96_48x48x48");
  EXPECT_EQ(manifest["kernels"][0]["correct"], true);
  ASSERT_EQ(manifest["not_packaged"].size(), 1u) << manifest.dump(2);
  EXPECT_EQ(manifest["not_packaged"][0]["workload"], "linalg.gemm/mini");
  EXPECT_NE(manifest["not_packaged"][0]["why"].get<std::string>().find("mismatch"), std::string::npos) << manifest.dump(2);

  // The library exports the workload's function and nothing else (no ekb_main to clash).
  EXPECT_EQ(defined_globals("nm", pkg / "lib/libekb_kernels.a"), std::set<std::string>{"ekb_nn_relu6_mbv2_035_96_48x48x48"});
  std::ifstream header(pkg / "include/ekb_kernels.h");
  const std::string text{std::istreambuf_iterator<char>(header), {}};
  EXPECT_NE(text.find("void ekb_nn_relu6_mbv2_035_96_48x48x48(const float* x, float* y, int64_t N, int64_t H, int64_t W, "
                      "int64_t C);"),
            std::string::npos)
      << text;

  // The example fails when its kernel's outputs do not match: one reference value changed.
  const fs::path expected = pkg / "example/data/y.expected.f64";
  {
    std::fstream f(expected, std::ios::in | std::ios::out | std::ios::binary);
    double v = 0;
    f.read(reinterpret_cast<char*>(&v), sizeof v);
    v = v * 2 + 1;
    f.seekp(0);
    f.write(reinterpret_cast<const char*>(&v), sizeof v);
  }
  const auto run = ekb::runtime::run_command({(pkg / "example/example").string(), (pkg / "example/data").string()});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("FAILED"), std::string::npos) << run.output;
  fs::remove_all(dir);
}

TEST(Package, ForAarch64TheLibraryIsTheTargetsAndTheExampleRunsUnderQemu) {
  if (!fs::exists("/usr/bin/qemu-aarch64-static") || !fs::exists("/usr/aarch64-linux-gnu/lib"))
    GTEST_SKIP() << "needs qemu-user-static and the aarch64 cross libraries (scripts/install-deps.sh)";
  const fs::path dir = ekb::testing::private_temp_path("package_aarch64");
  fs::remove_all(dir);
  const fs::path pkg = dir / "pkg";
  auto r = run_ekb("package -s " + std::string(EKB_SOURCE_DIR) + "/examples/schedules-cpu --target aarch64-linux-gnu --out " +
                   pkg.string() + " --example nn.softmax/kws_1x12 linalg.gemm/mini nn.softmax/kws_1x12");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nn.softmax/kws_1x12: ok"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(defined_globals("aarch64-linux-gnu-nm", pkg / "lib/libekb_kernels.a"),
            (std::set<std::string>{"ekb_linalg_gemm_mini", "ekb_nn_softmax_kws_1x12"}));
  // The example is an aarch64 program (ELF e_machine 183).
  std::ifstream elf(pkg / "example/example", std::ios::binary);
  char head[20] = {};
  elf.read(head, sizeof head);
  EXPECT_EQ(static_cast<unsigned char>(head[18]) | (static_cast<unsigned char>(head[19]) << 8), 183);
  EXPECT_EQ(read_json(pkg / "manifest.json")["verified_on"]["emulated"], true);
  fs::remove_all(dir);
}

}  // namespace
