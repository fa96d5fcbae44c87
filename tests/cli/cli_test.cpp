// The `ekb` command end to end: runs the built binary and checks output and exit codes.
#include <gtest/gtest.h>

#include "run_ekb.h"
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ir/parser.h"
#include "ir/printer.h"

namespace {

using Result = ekb::testing_cli::EkbResult;
using ekb::testing_cli::slurp;

Result ekb(const std::string& args, const std::string& stdin_text = "") {
  return ekb::testing_cli::run_ekb(args, stdin_text);
}

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

nlohmann::json list_json(const std::string& filters = "") {
  Result r = ekb("list --json " + filters);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

std::string first_workload() { return list_json()[0]["name"].get<std::string>(); }

TEST(Cli, HelpForEveryCommand) {
  Result top = ekb("--help");
  EXPECT_EQ(top.code, 0);
  for (const char* cmd : {"list", "show", "validate", "prompt"}) {
    EXPECT_TRUE(contains(top.out, cmd)) << cmd;
    Result r = ekb(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_TRUE(contains(r.out, "Usage")) << cmd;
  }
  EXPECT_NE(ekb("").code, 0);                // a subcommand is required
  EXPECT_NE(ekb("frobnicate").code, 0);      // unknown subcommand
  EXPECT_NE(ekb("list --no-such-option").code, 0);
}

TEST(Cli, ListJsonCoversTheSuite) {
  nlohmann::json all = list_json();
  ASSERT_GE(all.size(), 100u);
  std::set<std::string> domains, sizes, names;
  for (const auto& w : all) {
    EXPECT_TRUE(w["valid"].get<bool>()) << w["name"] << ": " << w.value("error", "");
    EXPECT_GT(w["min_bytes"].get<double>(), 0) << w["name"];
    EXPECT_FALSE(w["source"].get<std::string>().empty()) << w["name"];
    domains.insert(w["domain"].get<std::string>());
    sizes.insert(w["size"].get<std::string>());
    EXPECT_TRUE(names.insert(w["name"].get<std::string>()).second) << "duplicate " << w["name"];
  }
  for (const char* d : {"nn", "qnn", "img", "audio", "linalg", "robotics", "transformer", "graph"})
    EXPECT_TRUE(domains.count(d)) << d;
  EXPECT_TRUE(sizes.count("micro"));
  EXPECT_TRUE(sizes.count("mobile"));
}

TEST(Cli, ListFilters) {
  nlohmann::json audio_micro = list_json("--domain audio --size micro");
  ASSERT_FALSE(audio_micro.empty());
  for (const auto& w : audio_micro) {
    EXPECT_EQ(w["domain"], "audio");
    EXPECT_EQ(w["size"], "micro");
  }
  nlohmann::json two = list_json("--domain nn,qnn --level operator");
  for (const auto& w : two) {
    EXPECT_TRUE(w["domain"] == "nn" || w["domain"] == "qnn");
    EXPECT_EQ(w["level"], "operator");
  }
  nlohmann::json i8 = list_json("--dtype i8");
  ASSERT_FALSE(i8.empty());
  for (const auto& w : i8) EXPECT_EQ(w["dtype"], "i8");
  nlohmann::json glob = list_json("'graph.*'");
  ASSERT_GE(glob.size(), 2u);
  for (const auto& w : glob) EXPECT_EQ(w["domain"], "graph");

  Result table = ekb("list --domain linalg");
  EXPECT_EQ(table.code, 0);
  EXPECT_TRUE(contains(table.out, "linalg."));
  EXPECT_FALSE(contains(table.out, "nn.softmax"));

  Result typo = ekb("list --domain nnn");
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(contains(typo.err, "unknown value 'nnn' for --domain")) << typo.err;
  EXPECT_TRUE(contains(typo.err, "did you mean 'nn'?")) << typo.err;
}

TEST(Cli, ShowWorkload) {
  std::string name = first_workload();
  Result r = ekb("show " + name);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, name));
  EXPECT_TRUE(contains(r.out, "FLOP"));
  EXPECT_TRUE(contains(r.out, "must move"));
  EXPECT_TRUE(contains(r.out, "pattern "));
  Result j = ekb("show --json " + name);
  EXPECT_EQ(j.code, 0);
  nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["name"], name);
  EXPECT_TRUE(contains(doc["ir"].get<std::string>(), "pattern "));

  Result missing = ekb("show nn.sofmax/nothing");
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.err, "unknown workload 'nn.sofmax/nothing'")) << missing.err;
  EXPECT_TRUE(contains(missing.err, "hint:"));
}

TEST(Cli, PromptPerBackend) {
  std::string name = first_workload();
  Result cpu = ekb("prompt " + name + " --backend cpu");
  EXPECT_EQ(cpu.code, 0) << cpu.err;
  EXPECT_TRUE(contains(cpu.out, "void ekb_main("));
  EXPECT_TRUE(contains(cpu.out, "```c\n"));
  EXPECT_TRUE(contains(cpu.out, "```ekb\n"));
  EXPECT_TRUE(contains(cpu.out, "int64_t "));
  Result cuda = ekb("prompt " + name + " --backend cuda");
  EXPECT_EQ(cuda.code, 0);
  EXPECT_TRUE(contains(cuda.out, "extern \"C\" void ekb_main("));
  EXPECT_TRUE(contains(cuda.out, "cudaStream_t stream"));
  Result ocl = ekb("prompt " + name + " --backend opencl");
  EXPECT_EQ(ocl.code, 0);
  EXPECT_TRUE(contains(ocl.out, "ekb-launch"));
  EXPECT_TRUE(contains(ocl.out, "__global"));
  EXPECT_NE(ekb("prompt " + name + " --backend vulkan").code, 0);
  EXPECT_EQ(ekb("prompt no.such/workload").code, 2);
}

TEST(Cli, PromptWithIrExample) {
  Result plain = ekb("prompt nn.softmax/mbert_128x512 --backend cpu");
  Result with = ekb("prompt nn.softmax/mbert_128x512 --backend cpu --ir-example");
  ASSERT_EQ(with.code, 0) << with.err;
  EXPECT_FALSE(contains(plain.out, "## Example: an IR solution"));
  EXPECT_TRUE(contains(with.out, "## Example: an IR solution with a schedule"));
  EXPECT_TRUE(contains(with.out, "schedule cpu {"));
  EXPECT_TRUE(contains(with.out, "rfactor(m, ci, mf)"));  // the softmax example itself
  // The statement is kept, and still ends with the answer section.
  const size_t answer = with.out.rfind("## Answer");
  ASSERT_NE(answer, std::string::npos);
  EXPECT_LT(with.out.find("## Example"), answer);
  EXPECT_TRUE(contains(with.out, plain.out.substr(0, plain.out.find("## Answer"))));
  // A pattern without its own example gets a similar one, and says so.
  Result similar = ekb("prompt qnn.conv2d/mbv2_stem_224x224x3 --ir-example");
  EXPECT_EQ(similar.code, 0) << similar.err;
  EXPECT_TRUE(contains(similar.out, "similar pattern `nn.conv2d`")) << similar.out;
  EXPECT_NE(ekb("prompt nn.softmax/kws_1x12 --ir-example --examples /no/such/dir").code, 0);
}

TEST(Cli, PromptForAGpuBackendShowsAGpuSchedule) {
  for (const char* backend : {"cuda", "opencl"}) {
    Result r = ekb(std::string("prompt linalg.gemm/medium --ir-example --backend ") + backend);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "schedule gpu {")) << backend;
    EXPECT_TRUE(contains(r.out, "bind(stage, loop, block.x|y|z or thread.x|y|z)")) << backend;
    EXPECT_FALSE(contains(r.out, "schedule cpu {")) << backend;
  }
}

TEST(Cli, ValidateAcceptsSuiteAndRejectsBrokenFiles) {
  Result suite = ekb("validate " EKB_SOURCE_DIR "/suite/*/*.ekb");
  EXPECT_EQ(suite.code, 0) << suite.err;
  EXPECT_TRUE(contains(suite.out, ": ok: "));

  Result bad = ekb("validate " EKB_TEST_DATA_DIR "/malformed/missing_brace.ekb");
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(contains(bad.err, "missing_brace.ekb:8:1: error: unexpected end of file")) << bad.err;
  EXPECT_TRUE(contains(bad.err, "hint: a '}' is missing"));

  std::string binary = testing::TempDir() + "ekb_binary.ekb";
  {
    std::ofstream out(binary, std::ios::binary);
    const char bytes[] = {'\x7f', 'E', 'L', 'F', '\0', '\x01', '\xff'};
    out.write(bytes, sizeof bytes);
  }
  Result bin = ekb("validate " + binary);
  EXPECT_EQ(bin.code, 1);
  EXPECT_TRUE(contains(bin.err, ":1:1: error: unexpected character 0x7f")) << bin.err;

  Result dir = ekb("validate " EKB_SOURCE_DIR "/suite");
  EXPECT_EQ(dir.code, 1);
  EXPECT_TRUE(contains(dir.err, "is a directory"));
  Result none = ekb("validate /nonexistent/x.ekb");
  EXPECT_EQ(none.code, 1);
  EXPECT_TRUE(contains(none.err, "cannot open"));

  // Mixed good and bad: every file is reported, the exit code is still 1.
  Result mixed = ekb("validate " EKB_TEST_DATA_DIR "/malformed/empty.ekb " EKB_SOURCE_DIR "/suite/nn/softmax.ekb");
  EXPECT_EQ(mixed.code, 1);
  EXPECT_TRUE(contains(mixed.out, "softmax.ekb: ok"));
  EXPECT_TRUE(contains(mixed.err, "1 of 2 files failed validation"));
}

TEST(Cli, ValidateCanonicalRoundTripsThroughStdin) {
  std::string text = slurp(EKB_SOURCE_DIR "/suite/nn/softmax.ekb");
  Result r = ekb("validate --canonical -", text);
  ASSERT_EQ(r.code, 0) << r.err;
  ekb::ir::Module a = ekb::ir::parse_module(text);
  ekb::ir::Module b = ekb::ir::parse_module(r.out);
  EXPECT_TRUE(ekb::ir::equal(a, b));
  Result again = ekb("validate --canonical -", r.out);
  EXPECT_EQ(again.out, r.out);
}

TEST(Cli, SuiteDirectoryOverride) {
  Result r = ekb("--suite " EKB_SOURCE_DIR "/suite list --json --domain img");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out).empty());
  EXPECT_NE(ekb("--suite /nonexistent list").code, 0);
}

}  // namespace
