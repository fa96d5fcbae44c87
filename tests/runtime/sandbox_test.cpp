// What a kernel in a sandboxed worker can reach of the file system and of other processes: it may
// write only its private scratch directory and read only system files, whether `ekb` runs as root
// (the worker drops to nobody) or as an ordinary user (the worker keeps that user).
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../eval/eval_test_util.h"
#include "runtime/paths.h"
#include "runtime/worker.h"

namespace ekb::runtime {
namespace {

namespace fs = std::filesystem;

// The uid and gid the root test re-runs the probe as: no account, no groups, nothing it owns.
constexpr int kOrdinaryUid = 4242;

std::string make_temp_dir(const std::string& prefix) {
  std::string templ = ::testing::TempDir() + prefix + "XXXXXX";
  if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp " + templ + ": " + std::strerror(errno));
  return templ;
}

void write_file(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
  ::chmod(path.c_str(), 0644);
}

// One thing the probe tries; errno 0 means it succeeded.
struct Attempt {
  std::string what;  // the C statement(s), `path` bound to the path; must set `ok` when it worked
  std::string path;
  bool allowed;
};

std::string c_string(const std::string& s) { return "\"" + s + "\""; }

// A kernel that makes every attempt and writes errno (0: success) into out[i].
std::string probe_source(const std::vector<Attempt>& attempts) {
  std::ostringstream src;
  src << "#include <errno.h>\n#include <fcntl.h>\n#include <stdio.h>\n#include <string.h>\n"
         "#include <sys/ipc.h>\n#include <sys/shm.h>\n#include <unistd.h>\n"
         "static int64_t attempt_write(const char* path) {\n"
         "  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);\n"
         "  if (fd < 0) return errno;\n"
         "  int64_t r = write(fd, \"memo\", 4) == 4 ? 0 : errno;\n"
         "  close(fd);\n"
         "  return r;\n"
         "}\n"
         "static int64_t attempt_read(const char* path) {\n"
         "  int fd = open(path, O_RDONLY);\n"
         "  if (fd < 0) return errno;\n"
         "  char c;\n"
         "  int64_t r = read(fd, &c, 1) >= 0 ? 0 : errno;\n"
         "  close(fd);\n"
         "  return r;\n"
         "}\n"
         "static int64_t attempt_parent_file(const char* name, const char* path) {\n"
         "  char p[4096];\n"
         "  snprintf(p, sizeof p, \"/proc/%d/%s%s\", (int)getppid(), name, path);\n"
         "  return attempt_read(p);\n"
         "}\n"
         "void ekb_main(int64_t* out, int64_t n) {\n";
  for (size_t i = 0; i < attempts.size(); ++i)
    src << "  out[" << i << "] = " << attempts[i].what << ";\n";
  src << "}\n";
  return src.str();
}

// Runs the probe in a worker started by this process (as whatever user it is) and checks each
// attempt. Files are planted world-readable in world-readable directories, so that only the
// sandbox stands between the kernel and them (a root parent's worker runs as nobody).
void expect_a_confined_kernel() {
  const std::string tag = std::to_string(::getpid());
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "/root";
  const std::string cache = default_cache_dir();
  const std::string reference = cache + "/reference/sandbox-probe-" + tag;
  write_file(reference, "reference outputs");
  const std::string project = make_temp_dir("ekb-sandbox-project-");
  ::chmod(project.c_str(), 0777);
  const std::string results_db = project + "/ekb-results.db";
  const std::string solution = project + "/solutions/linalg.gemm/medium.c";
  write_file(results_db, "results");
  ::chmod((project + "/solutions").c_str(), 0755);
  ::chmod((project + "/solutions/linalg.gemm").c_str(), 0755);
  write_file(solution, "void ekb_main(void) {}");
  const std::string source_file = fs::weakly_canonical(std::string(EKB_TEST_DATA_DIR) + "/../../CMakeLists.txt");

  const std::vector<std::string> written = {"/tmp/ekb-sandbox-probe-" + tag, "/var/tmp/ekb-sandbox-probe-" + tag,
                                            "/dev/shm/ekb-sandbox-probe-" + tag, home + "/ekb-sandbox-probe-" + tag,
                                            project + "/ekb-sandbox-probe-" + tag};
  std::vector<Attempt> attempts;
  // /dev/shm is writable (LLVM's OpenMP registers itself there), but it is the worker's own: the
  // file must not appear outside (checked below with the others).
  for (const std::string& p : written)
    if (p.rfind("/dev/shm/", 0) != 0) attempts.push_back({"attempt_write(" + c_string(p) + ")", p, false});
  attempts.push_back({"attempt_write(" + c_string(written[2]) + ")", written[2], true});
  for (const std::string& p : {reference, results_db, solution, source_file})
    attempts.push_back({"attempt_read(" + c_string(p) + ")", p, false});
  attempts.push_back({"attempt_write(" + c_string(cache + "/reference/planted-" + tag) + ")", cache + "/reference", false});
  // The parent's root and memory: a way around a mount namespace, and the reference outputs it holds.
  attempts.push_back({"attempt_parent_file(\"root\", " + c_string(results_db) + ")", "/proc/PARENT/root" + results_db, false});
  attempts.push_back({"attempt_parent_file(\"mem\", \"\")", "/proc/PARENT/mem", false});
  // System V shared memory outlives the process: another channel between workers.
  attempts.push_back({"shmget(0x656b62, 4096, IPC_CREAT | 0666) >= 0 ? 0 : errno", "shmget", false});
  // What a kernel may do: its scratch directory (the cwd), system files.
  attempts.push_back({"attempt_write(\"scratch-file\")", "the scratch directory", true});
  attempts.push_back({"attempt_read(\"/etc/ld.so.cache\")", "/etc/ld.so.cache", true});
  attempts.push_back({"attempt_read(\"/proc/self/status\")", "/proc/self/status", true});

  CompileOutcome c = ekb::testing::test_backend().compile({Language::C, probe_source(attempts), "sandbox_probe.c"});
  ASSERT_TRUE(c.ok) << c.log;
  WorkerOptions o;
  o.executable = EKB_BINARY;
  o.memory_limit_bytes = 2ull << 30;
  const int64_t n = static_cast<int64_t>(attempts.size());
  {
    Worker w(o);
    int64_t scratch;
    ASSERT_TRUE(w.load(0, *c.artifact, {n}, 10, &scratch).ok());
    TensorArena arena({{"out", BufferRole::Output, static_cast<size_t>(n) * 8}});
    ASSERT_TRUE(w.attach(arena, {{0, {{0, 0}, {-1, n}}}}, 10).ok());
    int64_t ns;
    WorkerStatus s = w.run(0, false, 0, 10, &ns);
    ASSERT_TRUE(s.ok()) << s.message;
    const int64_t* out = reinterpret_cast<const int64_t*>(arena.data(0));
    for (size_t i = 0; i < attempts.size(); ++i) {
      if (attempts[i].allowed)
        EXPECT_EQ(out[i], 0) << attempts[i].path << ": " << std::strerror(static_cast<int>(out[i]));
      else
        EXPECT_NE(out[i], 0) << "the kernel reached " << attempts[i].path << " (uid " << ::geteuid()
                             << ", sandbox " << w.sandbox().dump() << ")";
    }
  }
  for (const std::string& p : written) {
    EXPECT_FALSE(fs::exists(p)) << p << " was written";
    ::unlink(p.c_str());
  }
  std::error_code ec;
  fs::remove(reference, ec);
  fs::remove(cache + "/reference/planted-" + tag, ec);
  fs::remove_all(project, ec);
}

TEST(Sandbox, AKernelWritesOnlyItsScratchAndReadsOnlySystemFiles) { expect_a_confined_kernel(); }

// CI runs as root: the worker of an ordinary user (who keeps its uid, its cache and its results)
// is tested by running the test above again as such a user.
TEST(Sandbox, AKernelOfAnOrdinaryUserWritesOnlyItsScratchAndReadsOnlySystemFiles) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: the test above already ran as an ordinary user";
  if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv (util-linux) to switch user";
  const std::string home = make_temp_dir("ekb-sandbox-user-");
  ASSERT_EQ(::chown(home.c_str(), kOrdinaryUid, kOrdinaryUid), 0);
  const std::string uid = std::to_string(kOrdinaryUid);
  const std::string log = home + ".log";
  const std::string command =
      "cd " + home + " && env -u EKB_CACHE_DIR -u XDG_CACHE_HOME HOME=" + home + " TMPDIR=" + home +
      " TEST_TMPDIR=" + home + " /usr/bin/setpriv --reuid=" + uid + " --regid=" + uid +
      " --clear-groups /proc/" + std::to_string(::getpid()) + "/exe" +
      " --gtest_filter=Sandbox.AKernelWritesOnlyItsScratchAndReadsOnlySystemFiles > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
  std::error_code ec;
  fs::remove_all(home, ec);
  fs::remove(log, ec);
}

}  // namespace
}  // namespace ekb::runtime
