// The sandboxed worker on its own: running kernels on the shared arena, confinement, and the
// classification of a worker's death.
#include "runtime/worker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "../eval/eval_test_util.h"

namespace ekb::runtime {
namespace {

Artifact build(const std::string& text) {
  CompileOutcome c = ekb::testing::test_backend().compile({Language::C, text, "worker_test.c"});
  if (!c.ok) throw std::runtime_error(c.log);
  return *c.artifact;
}

WorkerOptions options() {
  WorkerOptions o;
  o.executable = EKB_BINARY;
  o.memory_limit_bytes = 2ull << 30;
  return o;
}

const char* kDouble = "void ekb_main(const int64_t* x, int64_t* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = 2 * x[i]; }";

TEST(Worker, RunsAKernelOnTheSharedArena) {
  Worker w(options());
  const int64_t n = 1000;
  int64_t scratch = 0;
  ASSERT_TRUE(w.load(0, build(kDouble), {n}, 5, &scratch).ok());
  EXPECT_EQ(scratch, -1);
  TensorArena arena({{"x", BufferRole::Input, n * 8}, {"y", BufferRole::Output, n * 8}});
  for (int64_t i = 0; i < n; ++i) reinterpret_cast<int64_t*>(arena.data(0))[i] = i - 7;
  ASSERT_TRUE(w.attach(arena, {{0, {{0, 0}, {1, 0}, {-1, n}}}}, 5).ok());
  int64_t ns = -1;
  WorkerStatus s = w.run(0, true, 0, 5, &ns);
  ASSERT_TRUE(s.ok()) << s.message;
  EXPECT_GE(ns, 0);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(reinterpret_cast<int64_t*>(arena.data(1))[i], 2 * (i - 7));
}

TEST(Worker, ConfinesTheKernel) {
  Worker w(options());
  std::string probe = std::string(EKB_TEST_DATA_DIR) + "/sandbox_probe_must_not_exist";
  std::string text = R"(
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
void ekb_main(int64_t* out, int64_t n) {
  out[0] = socket(AF_INET, SOCK_STREAM, 0);
  out[1] = fork();
  out[2] = kill(getppid(), 0);
  out[3] = geteuid();
  out[4] = open(")" + probe + R"(", O_WRONLY | O_CREAT, 0644);
  char cwd[256];
  out[5] = getcwd(cwd, sizeof cwd) != 0 && strstr(cwd, "ekb-worker-") != 0;
  out[6] = execl("/bin/true", "true", (char*)0);
  out[7] = kill(getpid(), 0);  /* itself: allowed */
})";
  int64_t scratch;
  ASSERT_TRUE(w.load(0, build(text), {8}, 5, &scratch).ok());
  TensorArena arena({{"out", BufferRole::Output, 8 * 8}});
  ASSERT_TRUE(w.attach(arena, {{0, {{0, 0}, {-1, 8}}}}, 5).ok());
  int64_t ns;
  WorkerStatus s = w.run(0, false, 0, 5, &ns);
  ASSERT_TRUE(s.ok()) << s.message;
  const int64_t* out = reinterpret_cast<const int64_t*>(arena.data(0));
  EXPECT_EQ(out[0], -1) << "socket() must fail";
  EXPECT_EQ(out[1], -1) << "fork() must fail";
  EXPECT_EQ(out[2], -1) << "signalling the parent must fail";
  EXPECT_EQ(out[5], 1) << "the cwd is the private scratch directory";
  EXPECT_EQ(out[6], -1) << "exec must fail";
  EXPECT_EQ(out[7], 0) << "a process may signal itself (raise, abort)";
  if (::geteuid() == 0) {
    EXPECT_NE(out[3], 0) << "a root parent's worker runs unprivileged";
    EXPECT_EQ(out[4], -1) << "and cannot write the repository";
    EXPECT_EQ(::access(probe.c_str(), F_OK), -1);
    EXPECT_TRUE(w.sandbox().value("dropped_privileges", false));
    EXPECT_TRUE(w.sandbox().value("network_namespace", false)) << w.sandbox().dump();
  }
  EXPECT_TRUE(w.sandbox().value("seccomp", false)) << w.sandbox().dump();
}

TEST(Worker, ReportsACrashAndDiesAndANewOneWorks) {
  Artifact crash = build("void ekb_main(int64_t* y, int64_t n) { *(volatile int*)8 = 1; }");
  {
    Worker w(options());
    int64_t scratch;
    ASSERT_TRUE(w.load(0, crash, {1}, 5, &scratch).ok());
    TensorArena arena({{"y", BufferRole::Output, 8}});
    ASSERT_TRUE(w.attach(arena, {{0, {{0, 0}, {-1, 1}}}}, 5).ok());
    int64_t ns;
    WorkerStatus s = w.run(0, false, 0, 5, &ns);
    EXPECT_EQ(s.error, ErrorKind::Crash);
    EXPECT_NE(s.message.find("SIGSEGV"), std::string::npos) << s.message;
    EXPECT_FALSE(w.alive());
    EXPECT_EQ(w.run(0, false, 0, 5, &ns).error, ErrorKind::Internal);
  }
  Worker fresh(options());
  int64_t scratch;
  EXPECT_TRUE(fresh.load(0, build(kDouble), {1}, 5, &scratch).ok());
}

TEST(Worker, KillsAKernelPastItsTimeLimit) {
  Worker w(options());
  int64_t scratch;
  ASSERT_TRUE(w.load(0, build("void ekb_main(void) { for (volatile int i = 0;; ++i) {} }"), {}, 5, &scratch).ok());
  TensorArena arena({});
  ASSERT_TRUE(w.attach(arena, {{0, {}}}, 5).ok());
  auto t0 = std::chrono::steady_clock::now();
  int64_t ns;
  WorkerStatus s = w.run(0, false, 0, 0.3, &ns);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(s.error, ErrorKind::Timeout) << s.message;
  EXPECT_LT(took, 1.5);
  EXPECT_FALSE(w.alive());
}

TEST(Worker, AStaticConstructorRunsAtLoadAndItsCrashIsReportedThere) {
  Worker w(options());
  int64_t scratch;
  WorkerStatus s = w.load(
      0, build("#include <stdlib.h>\n__attribute__((constructor)) static void init(void) { abort(); }\nvoid ekb_main(void) {}"),
      {}, 5, &scratch);
  EXPECT_EQ(s.error, ErrorKind::Crash);
  EXPECT_NE(s.message.find("SIGABRT"), std::string::npos) << s.message;
}

TEST(Worker, RefusesASharedObjectWithoutEntryPoint) {
  Worker w(options());
  int64_t scratch;
  WorkerStatus s = w.load(0, build("void ekb_mian(void) {}"), {}, 5, &scratch);
  EXPECT_EQ(s.error, ErrorKind::Load);
  EXPECT_NE(s.message.find("ekb_main"), std::string::npos);
  EXPECT_TRUE(w.alive());  // a refusal is not a death
}

TEST(Worker, ReportsDeclaredScratch) {
  Worker w(options());
  int64_t scratch = 0;
  ASSERT_TRUE(w.load(0, build("int64_t ekb_scratch_bytes(int64_t n) { return 4 * n; }\n"
                              "void ekb_main(int64_t n, void* s) {}"),
                     {250}, 5, &scratch).ok());
  EXPECT_EQ(scratch, 1000);
}

}  // namespace
}  // namespace ekb::runtime
