// The kept-running bridge (tvm/bridge_server.h) against a stand-in `ekb_tvm` package that speaks the
// same protocol and does what each request says: answer with its pid, print to stdout first, die,
// or hang. Needs only python3, not TVM.
#include "tvm/bridge_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ekb::tvm {
namespace {

namespace fs = std::filesystem;

const char* kStandIn = R"(import os, sys, time
replies = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
for line in sys.stdin:
    req, res = line.rstrip("\n").split("\t")
    what = open(req).read().strip()
    if what == "print":
        print("noise on stdout that must not reach the reply")
        sys.stdout.flush()
    if what == "die":
        print("the stand-in dies now", file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)
    if what == "hang":
        time.sleep(60)
    open(res, "w").write(str(os.getpid()))
    replies.write("done\n")
    replies.flush()
)";

class BridgeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ekb-bridge-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "ekb_tvm");
    std::ofstream(dir_ / "ekb_tvm" / "__init__.py");
    std::ofstream(dir_ / "ekb_tvm" / "__main__.py") << kStandIn;
    command_ = {"python3", dir_.string()};
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Sends a request saying `what`; the pid of the bridge that answered, or -1.
  runtime::CommandResult ask(const std::string& what, int& pid, double timeout_s = 30) {
    const std::string req = (dir_ / "req").string(), res = (dir_ / "res").string();
    std::ofstream(req) << what;
    fs::remove(res);
    runtime::CommandResult r = bridge_request(command_, req, res, timeout_s);
    std::ifstream in(res);
    pid = -1;
    in >> pid;
    return r;
  }

  fs::path dir_;
  BridgeCommand command_;
};

TEST_F(BridgeServerTest, OneBridgeAnswersEveryRequestAndItsStdoutNoiseStaysOutOfTheReplies) {
  int first = 0, second = 0, third = 0;
  ASSERT_TRUE(ask("compile", first).ok());
  ASSERT_TRUE(ask("print", second).ok());
  ASSERT_TRUE(ask("compile", third).ok());
  EXPECT_GT(first, 0);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first, third);
}

// The bridge runs in its own directory: paths relative to the caller's (a relative
// $EKB_CACHE_DIR, as bench/tvm.sh's side-by-side once set it) must reach it resolved.
TEST_F(BridgeServerTest, RequestPathsRelativeToTheCallersDirectoryReachTheBridge) {
  const fs::path callers = dir_ / "caller";
  fs::create_directories(callers / "cache");
  const fs::path before = fs::current_path();
  fs::current_path(callers);
  std::ofstream("cache/req") << "compile";
  runtime::CommandResult r = bridge_request(command_, "cache/req", "cache/res", 30);
  fs::current_path(before);
  ASSERT_TRUE(r.ok()) << r.output;
  int pid = -1;
  std::ifstream(callers / "cache" / "res") >> pid;
  EXPECT_GT(pid, 0);
}

TEST_F(BridgeServerTest, ABridgeThatDiesFailsThatRequestWithWhatItPrintedAndTheNextStartsAnother) {
  int before = 0, none = 0, after = 0;
  ASSERT_TRUE(ask("compile", before).ok());
  runtime::CommandResult r = ask("die", none);
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("the stand-in dies now"), std::string::npos) << r.output;
  ASSERT_TRUE(ask("compile", after).ok());
  EXPECT_NE(after, before);
}

TEST_F(BridgeServerTest, ABridgePastItsTimeLimitIsKilledAndTheNextRequestIsAnswered) {
  int hung = 0, pid = 0, after = 0;
  ASSERT_TRUE(ask("compile", pid).ok());
  runtime::CommandResult r = ask("hang", hung, 0.5);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(::kill(pid, 0), 0) << "the hung bridge is still running";
  ASSERT_TRUE(ask("compile", after).ok());
  EXPECT_NE(after, pid);
}

TEST_F(BridgeServerTest, ABridgeKilledWhileIdleIsReplacedWithoutFailingTheRequest) {
  int pid = 0, after = 0;
  ASSERT_TRUE(ask("compile", pid).ok());
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ::usleep(200 * 1000);
  EXPECT_TRUE(ask("compile", after).ok());
  EXPECT_NE(after, pid);
}

TEST_F(BridgeServerTest, AMissingInterpreterIsReportedAsNotStarted) {
  command_.python = (dir_ / "no-such-python").string();
  int pid = 0;
  runtime::CommandResult r = ask("compile", pid);
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.output.find("no-such-python"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ekb::tvm
