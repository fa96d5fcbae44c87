// Solution metadata (.meta.json): parsing the contract, and how find_candidates attaches it to
// samples or turns it into failed samples.
#include "eval/solution_meta.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eval/solution_set.h"
#include "test_paths.h"

namespace ekb::eval {
namespace {

namespace fs = std::filesystem;

TEST(SolutionMeta, ParsesTheContractAndWritesItBack) {
  SolutionMeta m = parse_solution_meta(
      R"({"method":"direct","profile":"local","model":"m-7b","endpoint_kind":"openai","prompt_hash":"ab12",)"
      R"("sample":3,"temperature":0.8,"status":"failed","error":"endpoint unreachable after 5 tries",)"
      R"("ledger":{"llm_calls":5,"input_tokens":0,"output_tokens":0,"cost_usd":0.0,"evaluations":0,"wall_s":31.5},)"
      R"("latency_s":31.5,"cached":false,"extra":"ignored"})",
      "x.meta.json");
  EXPECT_EQ(m.method, "direct");
  EXPECT_EQ(m.model, "m-7b");
  EXPECT_EQ(m.sample, 3);
  ASSERT_TRUE(m.temperature);
  EXPECT_DOUBLE_EQ(*m.temperature, 0.8);
  EXPECT_EQ(m.failure_kind(), ErrorKind::GenerationFailed);
  EXPECT_EQ(m.ledger.llm_calls, 5);
  EXPECT_DOUBLE_EQ(m.ledger.wall_s, 31.5);
  SolutionMeta back = parse_solution_meta(to_json(m).dump(), "back");
  EXPECT_EQ(back.error, m.error);
  EXPECT_EQ(back.ledger.llm_calls, 5);
  EXPECT_EQ(parse_solution_meta(R"({"status":"no_code"})", "n").failure_kind(), ErrorKind::NoCode);
  EXPECT_FALSE(to_json(parse_solution_meta("{}", "ok")).contains("error"));  // only when not ok
}

TEST(SolutionMeta, MalformedMetadataNamesTheFile) {
  for (const char* text : {"{not json", "[1, 2]", R"({"status":"great"})", R"({"ledger":{"llm_calls":"many"}})"}) {
    try {
      parse_solution_meta(text, "dir/w.s0.meta.json");
      ADD_FAILURE() << "accepted " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("dir/w.s0.meta.json"), std::string::npos) << e.what();
    }
  }
}

class SolutionSetMeta : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ekb::testing::private_temp_path("meta_set");
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "audio.preemphasis");
    auto w = suite_.find_workload("audio.preemphasis/kws_frame_480");
    ASSERT_TRUE(w);
    selected_ = {*w};
  }
  void write(const std::string& file, const std::string& text) {
    std::ofstream(dir_ / "audio.preemphasis" / file) << text;
  }
  std::vector<CandidateRef> find(ir::Target target = ir::Target::Cpu) {
    return find_candidates(dir_.string(), selected_, target);
  }
  fs::path dir_;
  suite::Suite suite_ = suite::Suite::load();
  std::vector<suite::WorkloadEntry> selected_;
};

TEST_F(SolutionSetMeta, MetadataWithoutCodeIsAFailedSample) {
  write("kws_frame_480.s0.c", "void ekb_main(void) {}\n");
  write("kws_frame_480.s0.meta.json", R"({"method":"direct","status":"ok","ledger":{"llm_calls":1}})");
  write("kws_frame_480.s1.meta.json", R"({"method":"direct","status":"no_code","error":"prose only"})");
  write("kws_frame_480.s2.meta.json", R"({"method":"direct","status":"failed","error":"HTTP 500"})");
  auto c = find();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_FALSE(c[0].failed_generation());
  ASSERT_TRUE(c[0].meta);
  EXPECT_EQ(c[0].meta->ledger.llm_calls, 1);
  for (int i : {1, 2}) {
    EXPECT_EQ(c[i].sample, i);
    EXPECT_TRUE(c[i].failed_generation());
    EXPECT_FALSE(c[i].missing());
    EXPECT_EQ(c[i].solution, "audio.preemphasis/kws_frame_480.s" + std::to_string(i) + ".meta.json");
  }
  EXPECT_EQ(c[1].meta->failure_kind(), ErrorKind::NoCode);
  EXPECT_EQ(c[2].meta->failure_kind(), ErrorKind::GenerationFailed);
}

TEST_F(SolutionSetMeta, SampleZeroMetadataAndGaps) {
  write("kws_frame_480.c", "void ekb_main(void) {}\n");
  write("kws_frame_480.meta.json", R"({"method":"agent:x"})");
  auto c = find();
  ASSERT_EQ(c.size(), 1u);
  ASSERT_TRUE(c[0].meta);
  EXPECT_EQ(c[0].meta->method, "agent:x");
  write("kws_frame_480.s2.meta.json", R"({"status":"no_code"})");  // sample 1 is neither code nor metadata
  EXPECT_THROW(find(), std::invalid_argument);
  write("kws_frame_480.s2.meta.json", "{broken");
  EXPECT_THROW(find(), std::invalid_argument);
}

TEST_F(SolutionSetMeta, MetadataForAnotherBackendIsIgnored) {
  write("kws_frame_480.s0.meta.json", R"({"status":"no_code","backend":"cuda"})");
  auto c = find(ir::Target::Cpu);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].missing());
  EXPECT_TRUE(find(ir::Target::Cuda)[0].failed_generation());
}

}  // namespace
}  // namespace ekb::eval
