// The OpenCL launch description (runtime/opencl_launch.h): what parses, how sizes evaluate, and
// that every malformed description is an error naming its line and column in the source.
#include <gtest/gtest.h>

#include "runtime/opencl_launch.h"

namespace ekb::runtime::opencl {
namespace {

const LaunchNames kNames{{"x", "w", "y"}, {"R", "C"}};

LaunchDescription parse(const std::string& source) { return parse_launch_description(source, kNames); }

// The error's message, line and column; fails the test if `source` parses.
struct Failure {
  std::string message;
  int line = 0, column = 0;
};
Failure failure(const std::string& source) {
  try {
    parse(source);
  } catch (const LaunchError& e) {
    return {e.what(), e.line(), e.column()};
  }
  ADD_FAILURE() << "parsed:\n" << source;
  return {};
}

TEST(OpenCLLaunch, ParsesKernelsScratchAndSizesInOrder) {
  LaunchDescription d = parse(
      "__kernel void a() {}\n"
      "/* ekb-launch\n"
      "# a comment line\n"
      "scratch part R * 4\n"
      "\n"
      "kernel rows global=[R*64] local=[64] args=[x, y, R, C]\n"
      "kernel finish global=[(C + 7) / 8 * 8, R] args=[part, w, y]\n"
      "*/\n");
  ASSERT_EQ(d.scratch.size(), 1u);
  EXPECT_EQ(d.scratch[0].name, "part");
  EXPECT_EQ(d.scratch[0].line, 4);
  ASSERT_EQ(d.launches.size(), 2u);
  const KernelLaunch& rows = d.launches[0];
  EXPECT_EQ(rows.kernel, "rows");
  EXPECT_EQ(rows.line, 6);
  ASSERT_EQ(rows.args.size(), 4u);
  EXPECT_EQ(rows.args[0].kind, LaunchArg::Kind::Tensor);
  EXPECT_EQ(rows.args[1].index, 2);  // y: the third tensor
  EXPECT_EQ(rows.args[3].kind, LaunchArg::Kind::Param);
  EXPECT_EQ(rows.args[3].index, 1);
  const KernelLaunch& finish = d.launches[1];
  EXPECT_TRUE(finish.local.empty());
  EXPECT_EQ(finish.args[0].kind, LaunchArg::Kind::Scratch);
  const std::vector<int64_t> params = {5, 17};
  EXPECT_EQ(evaluate(rows.global[0], params), 320);
  EXPECT_EQ(evaluate(finish.global[0], params), 24);
  EXPECT_EQ(evaluate(finish.global[1], params), 5);
  EXPECT_EQ(evaluate(d.scratch[0].bytes, params), 20);
  ResolvedLaunch r = resolve(rows, params);
  EXPECT_EQ(r.global, (std::vector<size_t>{320}));
  EXPECT_EQ(r.local, (std::vector<size_t>{64}));
  EXPECT_FALSE(r.empty);
}

TEST(OpenCLLaunch, SizesFollowCPrecedenceAndTruncatingDivision) {
  auto value = [](const std::string& size, std::vector<int64_t> params) {
    LaunchDescription d = parse("/* ekb-launch\nkernel k global=[" + size + "] args=[]\n*/");
    return evaluate(d.launches[0].global[0], params);
  };
  EXPECT_EQ(value("2 + 3 * 4", {0, 0}), 14);
  EXPECT_EQ(value("(2 + 3) * 4", {0, 0}), 20);
  EXPECT_EQ(value("R - C - 1", {10, 3}), 6);  // left to right
  EXPECT_EQ(value("-R / 4", {7, 0}), -1);     // truncates toward zero, like C
  EXPECT_EQ(value("-R % 4", {7, 0}), -3);
  EXPECT_EQ(value("min(R, C) * max(R, -C)", {3, 9}), 9);
  EXPECT_EQ(value("--R", {5, 0}), 5);
}

TEST(OpenCLLaunch, EvaluationErrorsPointAtTheOperation) {
  LaunchDescription d = parse("/* ekb-launch\nkernel k global=[R / C, R * 4611686018427387904] args=[]\n*/");
  try {
    evaluate(d.launches[0].global[0], {1, 0});
    FAIL() << "no error for a division by zero";
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 20);
  }
  EXPECT_THROW(evaluate(d.launches[0].global[1], {4, 1}), LaunchError);  // overflow
}

TEST(OpenCLLaunch, ResolveChecksTheRangesOpenCL12Accepts) {
  auto resolved = [](const std::string& line, std::vector<int64_t> params) {
    return resolve(parse("/* ekb-launch\n" + line + "\n*/").launches[0], params);
  };
  EXPECT_TRUE(resolved("kernel k global=[R] local=[8] args=[]", {0, 0}).empty);
  EXPECT_THROW(resolved("kernel k global=[R] local=[8] args=[]", {12, 0}), LaunchError);  // not a multiple
  EXPECT_THROW(resolved("kernel k global=[R] local=[C] args=[]", {8, 0}), LaunchError);   // local 0
  EXPECT_THROW(resolved("kernel k global=[0 - R] args=[]", {8, 0}), LaunchError);        // negative
}

TEST(OpenCLLaunch, ErrorsNameLineAndColumn) {
  struct Case {
    std::string description;  // the lines after "/* ekb-launch"
    std::string message;      // part of the expected message
    int line, column;
  };
  const std::vector<Case> cases = {
      {"kernel k global=[R] args=[x, q]\n*/", "unknown name 'q' in args", 3, 30},
      {"kernel k global=[x * 2] args=[x]\n*/", "'x' is a tensor", 3, 18},
      {"kernel k global=[R] locl=[4] args=[x]\n*/", "unknown key 'locl'", 3, 21},
      {"kernel k global=[R] global=[4] args=[x]\n*/", "global= appears twice", 3, 21},
      {"kernel k global=[R, C] local=[4] args=[x]\n*/", "local=[...] has 1 dimensions", 3, 1},
      {"kernel k args=[x]\n*/", "has no global", 3, 1},
      {"kernel k global=[R, C, 1, 1] args=[x]\n*/", "1 to 3 sizes", 3, 17},
      {"kernel k global=[R +] args=[x]\n*/", "expected a size", 3, 21},
      {"kernel k global=[(R] args=[x]\n*/", "expected ')'", 3, 20},
      {"kernel k global=[R] args=[x] extra\n*/", "unknown key 'extra'", 3, 30},
      {"launch k global=[R] args=[x]\n*/", "expected 'kernel' or 'scratch'", 3, 1},
      {"kernel k global=[R] args=[s]\nscratch s 64\n*/", "unknown name 's' in args", 3, 27},
      {"scratch y 64\nkernel k global=[R] args=[y]\n*/", "'y' is already", 3, 9},
      {"kernel k global=[R] args=[x] @\n*/", "unexpected character '@'", 3, 30},
      {"kernel k global=[99999999999999999999] args=[x]\n*/", "does not fit in 64 bits", 3, 18},
      {"*/", "launches no kernel", 2, 14},
      {"kernel k global=[R] args=[x]\n", "not closed", 2, 14},
  };
  for (const Case& c : cases) {
    Failure f = failure("int a;\n/* ekb-launch\n" + c.description);
    EXPECT_NE(f.message.find(c.message), std::string::npos) << c.description << "\n-> " << f.message;
    EXPECT_EQ(f.line, c.line) << c.description << "\n-> " << f.message;
    EXPECT_EQ(f.column, c.column) << c.description << "\n-> " << f.message;
    EXPECT_NE(f.message.find("line " + std::to_string(c.line)), std::string::npos) << f.message;
  }
}

TEST(OpenCLLaunch, ExactlyOneDescription) {
  EXPECT_NE(failure("__kernel void k() {}\n").message.find("no launch description"), std::string::npos);
  Failure twice = failure("/* ekb-launch\nkernel k global=[1] args=[]\n*/\n/* ekb-launch\nkernel k global=[1] args=[]\n*/\n");
  EXPECT_NE(twice.message.find("a second ekb-launch"), std::string::npos) << twice.message;
  EXPECT_EQ(twice.line, 4);
  Failure glued = failure("/* ekb-launchx\nkernel k global=[1] args=[]\n*/");
  EXPECT_NE(glued.message.find("after 'ekb-launch'"), std::string::npos) << glued.message;
}

}  // namespace
}  // namespace ekb::runtime::opencl
