// Choosing the hand-written IR schedule that `ekb prompt --ir-example` shows.
#include "suite/schedule_examples.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include "test_paths.h"

namespace ekb::suite {
namespace {

namespace fs = std::filesystem;

const Suite& embedded() {
  static const Suite s = Suite::load();
  return s;
}

// A solutions directory with an all.ekb for each of `patterns`, each file holding its pattern name.
std::string examples_dir(const std::vector<std::string>& patterns) {
  fs::path dir = ekb::testing::private_temp_path("ekb_schedule_examples");
  fs::remove_all(dir);
  for (const auto& p : patterns) {
    fs::create_directories(dir / p);
    std::ofstream(dir / p / "all.ekb") << "# " << p << "\n";
  }
  return dir.string();
}

TEST(ScheduleExamples, OwnPatternFirstAndPerWorkloadFileWins) {
  std::string dir = examples_dir({"nn.softmax", "linalg.gemm"});
  auto own = find_schedule_example(embedded(), "nn.softmax/mbert_128x512", dir);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->pattern, "nn.softmax");
  EXPECT_EQ(own->text, "# nn.softmax\n");
  std::ofstream(fs::path(dir) / "nn.softmax" / "mbert_128x512.ekb") << "# per workload\n";
  EXPECT_EQ(find_schedule_example(embedded(), "nn.softmax/mbert_128x512", dir)->text, "# per workload\n");
  EXPECT_EQ(find_schedule_example(embedded(), "nn.softmax/kws_1x12", dir)->text, "# nn.softmax\n");
}

TEST(ScheduleExamples, SimilarPatternWhenTheOwnHasNone) {
  std::string dir = examples_dir({"linalg.gemm", "nn.conv2d", "nn.dwconv3x3", "nn.softmax", "transformer.sdpa"});
  EXPECT_EQ(find_schedule_example(embedded(), "qnn.conv2d/mbv2_stem_224x224x3", dir)->pattern, "nn.conv2d");
  EXPECT_EQ(find_schedule_example(embedded(), "nn.dwconv3x3_relu6/mbv2_112x112x32", dir)->pattern, "nn.dwconv3x3");
  EXPECT_EQ(find_schedule_example(embedded(), "transformer.mha/mbert_128_h4x32", dir)->pattern, "transformer.sdpa");
  EXPECT_EQ(find_schedule_example(embedded(), "linalg.syrk/mini", dir)->pattern, "linalg.gemm");
}

TEST(ScheduleExamples, NoneWithoutExamples) {
  EXPECT_FALSE(find_schedule_example(embedded(), "nn.softmax/kws_1x12", examples_dir({})));
  EXPECT_FALSE(find_schedule_example(embedded(), "nn.softmax/kws_1x12", "/no/such/dir"));
}

// The examples in the repository exist and the section presents them with the ekb fence.
TEST(ScheduleExamples, RepositoryExamplesCoverTheIssuePatterns) {
  for (const char* w : {"linalg.gemm/medium", "nn.conv2d/resnet18_56x56x64", "nn.dwconv3x3/mbv1_112x112x32",
                        "nn.pwconv/mbv1_56x56x128", "nn.softmax/mbert_128x512", "nn.layernorm/deit_tiny_197x192",
                        "img.gaussian3x3/hd_1280x720_f32", "audio.fir/asr_16000x255",
                        "transformer.sdpa/whisper_tiny_448x64", "linalg.jacobi_2d/medium"}) {
    auto e = find_schedule_example(embedded(), w, default_schedule_examples_dir());
    ASSERT_TRUE(e) << w;
    EXPECT_EQ(e->pattern + "/", std::string(w).substr(0, e->pattern.size() + 1)) << w;
    EXPECT_NE(e->text.find("schedule cpu {"), std::string::npos) << w;
    std::string section = schedule_example_section(*e, e->pattern);
    EXPECT_NE(section.find("```ekb\n" + e->text), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace ekb::suite
