// Taking the solution out of a model's reply: the block for the requested backend among prose and
// several blocks, or a recorded reason when there is none.
#include <gtest/gtest.h>

#include "llm/code_extraction.h"

namespace {

using ekb::ir::Target;
using ekb::llm::extract_code;
using ekb::llm::fenced_blocks;

const std::string kFullC =
    "#include <math.h>\n"
    "void ekb_main(const float* x, float* y,\n"
    "              int64_t R, int64_t C) {\n"
    "  for (int64_t i = 0; i < R * C; ++i) y[i] = x[i];\n"
    "}\n";

TEST(CodeExtraction, FindsFencedBlocksWithTheirLanguage) {
  auto blocks = fenced_blocks("text\n```c\nint a;\n```\nmore\n~~~ {.cuda}\nint b;\n~~~\n   ```\nplain\n```\n````cpp\nx\n```\nstill x\n````\n");
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].language, "c");
  EXPECT_EQ(blocks[0].code, "int a;\n");
  EXPECT_EQ(blocks[1].language, "cuda");
  EXPECT_EQ(blocks[2].language, "");
  EXPECT_EQ(blocks[2].code, "plain\n");
  EXPECT_EQ(blocks[3].language, "cpp");
  EXPECT_EQ(blocks[3].code, "x\n```\nstill x\n");  // a shorter fence does not close a longer one
  EXPECT_TRUE(blocks[3].closed);
}

TEST(CodeExtraction, PicksTheBlockThatDefinesTheEntryAmongProseAndOtherBlocks) {
  std::string reply = "Here is my plan. The signature is:\n```c\nvoid ekb_main(const float* x, float* y, int64_t R, int64_t C);\n```\n"
                      "A quick check in Python:\n```python\nimport numpy as np\nprint('ekb_main')\n```\n"
                      "And the kernel:\n```c\n" + kFullC + "```\nIt copies `x` to `y`. Also, for reference:\n```bash\nclang -O3 k.c\n```\n";
  auto e = extract_code(reply, Target::Cpu);
  ASSERT_TRUE(e.code) << e.no_code_reason;
  EXPECT_EQ(e.code->code, kFullC);
  EXPECT_EQ(e.code->extension, ".c");
  EXPECT_TRUE(e.code->complete);
}

TEST(CodeExtraction, TakesTheBlockOfTheRequestedBackend) {
  const std::string cuda = "extern \"C\" void ekb_main(const float* x, float* y, int64_t R, int64_t C, cudaStream_t s) {\n  k<<<1, 1, 0, s>>>(x, y);\n}\n";
  const std::string cl = "__kernel void k(__global const float* x, __global float* y) { y[0] = x[0]; }\n/* ekb-launch\nkernel k global=[1] args=[x, y]\n*/\n";
  std::string reply = "CPU:\n```c\n" + kFullC + "```\nCUDA:\n```cuda\n" + cuda + "```\nOpenCL:\n```opencl\n" + cl + "```\n";
  auto cpu = extract_code(reply, Target::Cpu);
  ASSERT_TRUE(cpu.code);
  EXPECT_EQ(cpu.code->code, kFullC);
  auto gpu = extract_code(reply, Target::Cuda);
  ASSERT_TRUE(gpu.code);
  EXPECT_EQ(gpu.code->code, cuda);
  EXPECT_EQ(gpu.code->extension, ".cu");
  auto ocl = extract_code(reply, Target::OpenCL);
  ASSERT_TRUE(ocl.code);
  EXPECT_EQ(ocl.code->code, cl);
  EXPECT_EQ(ocl.code->extension, ".cl");
}

TEST(CodeExtraction, CppSourcesGetACppExtension) {
  auto tagged = extract_code("```cpp\n" + kFullC + "```\n", Target::Cpu);
  ASSERT_TRUE(tagged.code);
  EXPECT_EQ(tagged.code->extension, ".cpp");
  auto extern_c = extract_code("```c\n#include <cstdint>\nextern \"C\" " + kFullC + "```\n", Target::Cpu);
  ASSERT_TRUE(extern_c.code);
  EXPECT_EQ(extern_c.code->extension, ".cpp");
}

TEST(CodeExtraction, ARevisedAnswerWinsOverTheFirstDraftOfEqualStanding) {
  std::string draft = kFullC;
  std::string revised = kFullC + "// revised: same loop, unrolled by the compiler\n";
  auto e = extract_code("First try:\n```c\n" + draft + "```\nBetter:\n```c\n" + revised + "```\n", Target::Cpu);
  ASSERT_TRUE(e.code);
  EXPECT_EQ(e.code->code, revised);
}

TEST(CodeExtraction, UntaggedAndUnfencedAndCutShortCode) {
  auto untagged = extract_code("```\n" + kFullC + "```", Target::Cpu);
  ASSERT_TRUE(untagged.code);
  EXPECT_EQ(untagged.code->code, kFullC);
  auto bare = extract_code(kFullC, Target::Cpu);  // no fences at all, only code
  ASSERT_TRUE(bare.code);
  EXPECT_EQ(bare.code->code, kFullC);
  auto cut = extract_code("Sure:\n```c\n" + kFullC.substr(0, 60), Target::Cpu);  // max_tokens hit inside the block
  ASSERT_TRUE(cut.code);
  EXPECT_FALSE(cut.code->complete);
  EXPECT_EQ(cut.code->code, kFullC.substr(0, 60) + "\n");
}

TEST(CodeExtraction, NoUsableCodeSaysWhy) {
  auto prose = extract_code("I cannot help with that kernel, sorry.", Target::Cpu);
  EXPECT_FALSE(prose.code);
  EXPECT_EQ(prose.no_code_reason, "the reply has no code block (```c)");
  auto other = extract_code("```python\nprint(1)\n```\n```cuda\n__global__ void k() {}\n```\n", Target::Cpu);
  EXPECT_FALSE(other.code);
  EXPECT_EQ(other.no_code_reason, "the reply has no ```c code block (only: python, cuda)");
  auto empty = extract_code("  \n", Target::Cuda);
  EXPECT_FALSE(empty.code);
  EXPECT_EQ(empty.no_code_reason, "the reply is empty");
  auto empty_block = extract_code("```c\n\n```\n", Target::Cpu);
  EXPECT_FALSE(empty_block.code);
}

}  // namespace
