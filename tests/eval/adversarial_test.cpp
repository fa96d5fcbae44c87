// Every kernel of tests/adversarial/ evaluated against its baseline: each cheat must fail with the
// ErrorKind its header names, each honest variant must pass (tests/adversarial/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eval_test_util.h"

namespace ekb::eval {
namespace {

struct CorpusEntry {
  std::string file;      // name within tests/adversarial/
  std::string workload;  // PATTERN/WORKLOAD
  std::string expect;    // error kind name, "none" to pass
  double max_speedup = 0;  // `// max_speedup:` of a passing kernel whose speedup must stay honest
  double call_timeout_s = 0;  // `// call_timeout:` seconds, where the default would race the verdict on a busy machine
};

std::vector<CorpusEntry> corpus() {
  std::vector<CorpusEntry> out;
  for (const auto& f : std::filesystem::directory_iterator(ekb::testing::adversarial_dir())) {
    std::string ext = f.path().extension().string();
    if (!f.is_regular_file() || (ext != ".c" && ext != ".cpp")) continue;
    std::ifstream in(f.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string max_speedup = ekb::testing::corpus_header(text, "max_speedup");
    const std::string call_timeout = ekb::testing::corpus_header(text, "call_timeout");
    out.push_back({f.path().filename().string(), ekb::testing::corpus_header(text, "workload"), ekb::testing::corpus_header(text, "expect"),
                   max_speedup.empty() ? 0.0 : std::stod(max_speedup), call_timeout.empty() ? 0.0 : std::stod(call_timeout)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return out;
}

class AdversarialTest : public ::testing::TestWithParam<CorpusEntry> {};

TEST_P(AdversarialTest, GetsTheRightVerdict) {
  const CorpusEntry& c = GetParam();
  ASSERT_FALSE(c.workload.empty()) << c.file << " lacks its '// workload:' line";
  ASSERT_TRUE(c.expect == "none" || parse_error_kind(c.expect)) << c.file << ": unknown kind " << c.expect;
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(c.workload);
  runtime::Source candidate = runtime::Source::from_file(ekb::testing::adversarial_dir() + "/" + c.file);
  EvalOptions options = ekb::testing::fast_options();
  if (c.call_timeout_s > 0) options.call_timeout_s = c.call_timeout_s;
  CandidateResult r = evaluate(ekb::testing::test_backend(), ref, candidate, ekb::testing::baseline_for(ref), options);
  std::string got = r.error == ErrorKind::None ? "none" : std::string(error_kind_name(r.error));
  EXPECT_EQ(got, c.expect) << c.file << ": " << r.message;
  if (c.expect == "none") {
    EXPECT_TRUE(r.correct);
    ASSERT_TRUE(r.speedup.has_value());
    EXPECT_GT(*r.speedup, 0);
    EXPECT_GT(r.time->runs, 0);
    if (c.max_speedup > 0) EXPECT_LE(*r.speedup, c.max_speedup) << c.file << ": a replayed answer was timed";
  } else {
    EXPECT_FALSE(r.correct);
    EXPECT_FALSE(r.message.empty());
  }
  RecordProperty("message", r.message);
  std::printf("  %-32s %-18s %s\n", c.file.c_str(), got.c_str(), r.message.substr(0, 160).c_str());
}

INSTANTIATE_TEST_SUITE_P(Corpus, AdversarialTest, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<CorpusEntry>& info) {
                           std::string n = info.param.file;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace ekb::eval
