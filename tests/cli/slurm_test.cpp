// `ekb slurm` on a real single-node Slurm (Debian's slurm-wlm): the test starts munged with a
// fresh key, slurmctld and slurmd with a generated slurm.conf on free ports, and a PostgreSQL
// server; a 4-shard array evaluation of a small sample lands in one run, and its report gives the
// same verdicts as the same evaluation done unsharded (docs/SCALE_OUT.md).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "postgres_server.h"
#include "results/result_store.h"
#include "run_ekb.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using ekb::testing_cli::run_ekb;
using ekb::testing_cli::slurp;

// A small sample that evaluates quickly: a few workloads of different domains.
const char* kSample = "linalg.gemm/mini linalg.atax/mini linalg.bicg/mini linalg.mvt/mini audio.biquad_df2t/block_2x32 nn.softmax/kws_1x12";

bool program_exists(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// A TCP port nobody listens on now (the kernel's pick for port 0).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// A daemon run in the foreground as a child, killed with the test.
class Daemon {
 public:
  Daemon(const std::string& command, const fs::path& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const std::string cmd = "exec " + command + " >>" + log.string() + " 2>&1";
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool alive() { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
};

class SlurmCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* p : {"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo"})
      if (!program_exists(p)) GTEST_SKIP() << p << " is missing (slurm-wlm, munge: scripts/install-deps.sh)";
    // slurmd starts each job as its user, which needs root; CI and this container run as root.
    if (::geteuid() != 0) GTEST_SKIP() << "slurmd needs root to run jobs";
    std::string why;
    if (!postgres_.start(&why)) GTEST_SKIP() << "no PostgreSQL server can run here: " << why;

    std::string tmpl = ::testing::TempDir() + "/ekb_slurm_XXXXXX";
    ASSERT_TRUE(::mkdtemp(tmpl.data()));
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
    fs::create_directories(dir_ / "state");
    fs::create_directories(dir_ / "spool");
    const fs::path key = dir_ / "munge.key", socket = dir_ / "munge.socket";
    ASSERT_EQ(std::system(("mungekey --create --keyfile=" + key.string() + " >/dev/null 2>&1").c_str()), 0);
    ::chmod(key.c_str(), 0600);
    // --force: munged refuses a socket in a world-writable /tmp path otherwise.
    munged_ = std::make_unique<Daemon>("munged --foreground --force --socket=" + socket.string() + " --key-file=" +
                                           key.string() + " --log-file=" + (dir_ / "munged.log").string() +
                                           " --pid-file=" + (dir_ / "munged.pid").string() +
                                           " --seed-file=" + (dir_ / "munged.seed").string(),
                                       dir_ / "munged.out");
    if (!wait_until([&] { return fs::exists(socket); }, 60))
      GTEST_SKIP() << "munged does not start here: " << slurp((dir_ / "munged.log").string());

    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    conf_ = dir_ / "slurm.conf";
    std::ofstream(conf_) << "ClusterName=ekbtest\nSlurmctldHost=localhost(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n"
                         << "SlurmctldPort=" << free_port() << "\nSlurmdPort=" << free_port() << "\n"
                         << "AuthType=auth/munge\nAuthInfo=socket=" << socket.string() << "\nCredType=cred/munge\n"
                         << "StateSaveLocation=" << (dir_ / "state").string() << "\n"
                         << "SlurmdSpoolDir=" << (dir_ / "spool").string() << "\n"
                         << "SlurmctldPidFile=" << (dir_ / "slurmctld.pid").string() << "\n"
                         << "SlurmdPidFile=" << (dir_ / "slurmd.pid").string() << "\n"
                         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nReturnToService=2\n"
                         << "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
                         << "JobCompType=jobcomp/none\nJobAcctGatherType=jobacct_gather/none\n"
                         << "AccountingStorageType=accounting_storage/none\nMpiDefault=none\n"
                         << "SlurmctldLogFile=" << (dir_ / "slurmctld.log").string() << "\n"
                         << "SlurmdLogFile=" << (dir_ / "slurmd.log").string() << "\n"
                         << "NodeName=ekbnode NodeAddr=127.0.0.1 CPUs=" << cpus << " RealMemory=100 State=UNKNOWN\n"
                         << "PartitionName=ekb Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
    ::setenv("SLURM_CONF", conf_.c_str(), 1);  // sbatch, scontrol and sinfo, here and in ekb
    slurmctld_ = std::make_unique<Daemon>("slurmctld -D -i -f " + conf_.string(), dir_ / "slurmctld.out");
    slurmd_ = std::make_unique<Daemon>("slurmd -D -N ekbnode -f " + conf_.string(), dir_ / "slurmd.out");
    const std::string idle = "sinfo -h -o %T 2>/dev/null | grep -q idle";
    if (!wait_until([&] { return std::system(idle.c_str()) == 0; }, 120))
      GTEST_SKIP() << "slurmctld and slurmd do not come up here:\n"
                   << slurp((dir_ / "slurmctld.log").string()) << slurp((dir_ / "slurmd.log").string());
  }

  void TearDown() override {
    slurmd_.reset();
    slurmctld_.reset();
    munged_.reset();
    ::unsetenv("SLURM_CONF");
    if (!dir_.empty()) {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }

  template <class Condition>
  static bool wait_until(Condition done, double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return done();
  }

  ekb::testing::PostgresServer postgres_;
  fs::path dir_, conf_;
  std::unique_ptr<Daemon> munged_, slurmctld_, slurmd_;
};

// The report's verdicts: everything after its header lines (run id, times, device), which differ
// between two runs of the same evaluation.
std::string verdicts_of(const std::string& report) {
  std::string out, line;
  std::istringstream in(report);
  while (std::getline(in, line))
    if (!line.starts_with("run ") && !line.starts_with("  created") && !line.starts_with("  roofline"))
      out += line + "\n";
  return out;
}

TEST_F(SlurmCluster, FourShardArrayEvaluationReportsAsTheUnshardedRun) {
  const std::string db = postgres_.url();
  const std::string jobs = (dir_ / "jobs").string();
  auto submitted = run_ekb("slurm submit --shards 4 --dir " + jobs + " -- eval -s native --no-timing --db '" + db +
                           "' --run sharded --json " + (dir_ / "sharded.json").string() + " " + kSample);
  ASSERT_EQ(submitted.code, 0) << submitted.out << submitted.err;
  EXPECT_NE(submitted.out.find("submitted job"), std::string::npos) << submitted.out;
  const std::string script = slurp(jobs + "/sharded/job.sbatch");
  EXPECT_NE(script.find("#SBATCH --array=0-3"), std::string::npos) << script;
  EXPECT_NE(script.find("--shard \"${SLURM_ARRAY_TASK_ID}/4\""), std::string::npos) << script;

  // Polled through `ekb slurm status`, as a user would, until every shard has finished.
  nlohmann::json status;
  const bool finished = wait_until(
      [&] {
        auto r = run_ekb("slurm status sharded --json --dir " + jobs);
        if (r.code != 0) return false;
        status = nlohmann::json::parse(r.out);
        return status.contains("run") && status["run"]["finished"].get<bool>();
      },
      600);
  std::string logs;
  for (int i = 0; i < 4; ++i) logs += slurp(jobs + "/sharded/shard-" + std::to_string(i) + ".out");
  ASSERT_TRUE(finished) << status.dump(2) << "\n" << logs << slurp((dir_ / "slurmd.log").string());
  int stored = 0, planned = 0;
  for (const auto& shard : status["shards"]) {
    EXPECT_TRUE(shard["finished"].get<bool>()) << shard.dump();
    EXPECT_EQ(shard["host"], shard["host"]);  // recorded
    stored += shard["stored"].get<int>();
    planned += shard["planned"].get<int>();
  }
  EXPECT_EQ(stored, planned);
  EXPECT_GT(stored, 0);
  auto text_status = run_ekb("slurm status sharded --dir " + jobs);
  EXPECT_NE(text_status.out.find("4 of 4 shards finished"), std::string::npos) << text_status.out;

  auto whole = run_ekb("eval -s native --no-timing --db '" + db + "' --run whole --json " +
                       (dir_ / "whole.json").string() + " " + kSample);
  ASSERT_EQ(whole.code, 0) << whole.err;

  auto sharded_report = run_ekb("report sharded --by domain,level,pattern --failures -1 --db '" + db + "'");
  auto whole_report = run_ekb("report whole --by domain,level,pattern --failures -1 --db '" + db + "'");
  ASSERT_EQ(sharded_report.code, 0) << sharded_report.err;
  ASSERT_EQ(whole_report.code, 0) << whole_report.err;
  EXPECT_EQ(verdicts_of(sharded_report.out), verdicts_of(whole_report.out)) << sharded_report.out << whole_report.out;

  // And result by result: the same keys, each with the same verdict, each once.
  ekb::results::ResultStore store = ekb::results::ResultStore::open(db);
  auto verdicts = [&](const std::string& run) {
    std::map<ekb::results::ResultKey, std::string> v;
    for (const auto& r : store.results(run))
      EXPECT_TRUE(v.emplace(ekb::results::ResultKey{r.workload, r.solution, r.sample},
                            r.correct ? "correct" : std::string(ekb::eval::error_kind_name(r.error)))
                      .second);
    return v;
  };
  EXPECT_EQ(verdicts("sharded"), verdicts("whole"));
  EXPECT_EQ(store.results("sharded").size(), static_cast<size_t>(stored));
}

TEST(SlurmSubmit, WritesTheArrayScriptWithoutSubmitting) {
  const std::string dir = ::testing::TempDir() + "/ekb_slurm_script_" + std::to_string(::getpid());
  auto r = run_ekb("slurm submit --shards 3 --partition gpu --gres gpu:1 --time 01:00:00 --no-submit --dir " + dir +
                   " -- ekb eval -b cuda -s native --run r1 --db postgresql://db.example/ekb linalg.gemm/mini");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string script = slurp(dir + "/r1/job.sbatch");
  for (const char* line : {"#SBATCH --array=0-2", "#SBATCH --partition=gpu", "#SBATCH --gres=gpu:1",
                           "#SBATCH --time=01:00:00", "'eval' '-b' 'cuda'", "--shard \"${SLURM_ARRAY_TASK_ID}/3\""})
    EXPECT_NE(script.find(line), std::string::npos) << line << "\n" << script;
  const auto record = nlohmann::json::parse(slurp(dir + "/r1/job.json"));
  EXPECT_EQ(record["run"], "r1");
  EXPECT_EQ(record["shards"], 3);

  auto refused = run_ekb("slurm submit --shards 2 --no-submit --dir " + dir + " -- eval -s native --shard 0/2");
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("--shard"), std::string::npos) << refused.err;
  auto other = run_ekb("slurm submit --shards 2 --no-submit --dir " + dir + " -- report last");
  EXPECT_NE(other.code, 0);
  fs::remove_all(dir);
}

}  // namespace
