// A remote device (docs/DEVICES.md): `ekb-device serve` reached through the local transport (the
// host build, no ssh) and through a real OpenSSH server on loopback started here, with the aarch64
// ekb-device under qemu-user as the board. A mixed solution set (correct, wrong, crashing) gets the
// verdicts it gets locally; a connection killed mid-run is reconnected and the candidate in flight
// evaluated again; a board that stays away past its `wait` stops the run unfinished, and the next
// `ekb eval` resumes it: every result stored exactly once, none of them a `device` error.
//
// The ssh tests need /usr/sbin/sshd and ssh-keygen (openssh-server), qemu-aarch64-static and
// build-aarch64-linux-gnu/ekb-device (scripts/build-device.sh aarch64-linux-gnu); they skip
// without them.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_ekb.h"
#include "runtime/compile_cache.h"
#include "runtime/cpu_features.h"
#include "runtime/cpu_target.h"
#include "runtime/device_link.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using ekb::testing_cli::run_ekb;
using ekb::testing_cli::slurp;
using Clock = std::chrono::steady_clock;

// Six small workloads: four correct solutions, one wrong (a constant added to its last store, and
// slow), one that crashes (a trap at the top of ekb_main). Candidates run in this order, sorted.
const std::vector<std::string> kWorkloads = {
    "audio.fir/cmsis_block_32x29", "img.gaussian3x3/vww_96x96_u8", "transformer.rmsnorm/smollm_1x576",
    "nn.dwconv3x3/kws_25x5x64",    "linalg.gemm/mini",             "nn.softmax/kws_1x12"};
const std::map<std::string, std::string> kExpected = {
    {"audio.fir/cmsis_block_32x29", "correct"}, {"img.gaussian3x3/vww_96x96_u8", "correct"},
    {"transformer.rmsnorm/smollm_1x576", "correct"}, {"nn.dwconv3x3/kws_25x5x64", "correct"},
    {"linalg.gemm/mini", "mismatch"}, {"nn.softmax/kws_1x12", "crash"}};

std::string workload_args() {
  std::string s;
  for (const auto& w : kWorkloads) s += " " + w;
  return s;
}

// The mixed solution set, from the default lowering that `ekb emit` prints.
void write_mixed_solutions(const fs::path& dir) {
  for (const auto& w : kWorkloads) {
    auto emitted = run_ekb("emit " + w);
    ASSERT_EQ(emitted.code, 0) << emitted.err;
    std::string text = emitted.out;
    if (w == "linalg.gemm/mini") {
      const size_t at = text.rfind("] = ");
      ASSERT_NE(at, std::string::npos) << text;
      text.insert(at + 4, "1.0f + ");
      // It also sleeps 1.5 s per call (one call: its first trial fails), so that a run seen with
      // two results stored (this is the third candidate) is mid-run however fast the machine is.
      const size_t body = text.find('{', text.find("ekb_main("));
      ASSERT_NE(body, std::string::npos) << text;
      text.insert(body + 1, " usleep(1500000);");
      text = "#include <unistd.h>\n" + text;
    } else if (w == "nn.softmax/kws_1x12") {
      const size_t body = text.find('{', text.find("ekb_main("));
      ASSERT_NE(body, std::string::npos) << text;
      text.insert(body + 1, " __builtin_trap();");
    }
    fs::create_directories(dir / w.substr(0, w.find('/')));
    std::ofstream(dir / (w + ".c")) << text;
  }
}

// workload -> "correct" or its error kind, and how many results each workload has.
struct Verdicts {
  std::map<std::string, std::string> verdict;
  std::map<std::string, int> count;
};

Verdicts read_verdicts(const fs::path& json_path) {
  std::ifstream in(json_path);
  Verdicts v;
  if (!in) return v;
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const auto& r : j["results"]) {
    const std::string w = r["workload"];
    v.verdict[w] = r["correct"].get<bool>() ? "correct" : r["error"].get<std::string>();
    ++v.count[w];
  }
  return v;
}

void expect_every_result_once(const Verdicts& v) {
  for (const auto& [w, expected] : kExpected) {
    EXPECT_EQ(v.count.count(w) ? v.count.at(w) : 0, 1) << w;
    EXPECT_EQ(v.verdict.count(w) ? v.verdict.at(w) : "(none)", expected) << w;
  }
  EXPECT_EQ(v.count.size(), kExpected.size());
}

fs::path host_device_binary() { return EKB_DEVICE_BINARY; }
fs::path aarch64_device_binary() { return fs::path(EKB_SOURCE_DIR) / "build-aarch64-linux-gnu" / "ekb-device"; }

bool program_exists(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// A command run in the background through the shell, its output in files.
class Background {
 public:
  Background(const std::string& command, const fs::path& out, const fs::path& err) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const std::string cmd = command + " >" + out.string() + " 2>" + err.string();
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // The exit code, or -1 when it did not end within `timeout_s`.
  int wait(double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

// Waits until `path` contains `text`; false after `timeout_s`.
bool wait_for_text(const fs::path& path, const std::string& text, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    if (slurp(path.string()).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

int free_loopback_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(s);
  return ntohs(a.sin_port);
}

bool port_accepts(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

// A fresh directory for one test (a repeated test, --gtest_repeat, starts afresh) holding a devices
// file with one device NAME of the local transport: `prefix` (a wrapper) + this build's ekb-device.
fs::path local_device_dir(const std::string& stem, const std::string& name, const std::string& prefix = "") {
  const fs::path dir = ekb::testing::private_temp_path(stem);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "devices.toml") << "[devices." << name << "]\ntransport = \"local\"\ncommand = \"" << prefix
                                      << host_device_binary().string() << " --cache " << (dir / "cache").string()
                                      << "\"\nwait = 60\n";
  return dir;
}

// ---- the command lines ----

TEST(RemoteDevice, TheSshCommandLineCarriesTheDevicesSettingsAndAppendsServe) {
  ekb::runtime::RemoteDevice d;
  d.name = "pi";
  d.host = "pi.local";
  d.port = 2222;
  d.user = "pi";
  d.identity = "/keys/pi";
  d.ssh_options = {"UserKnownHostsFile=/keys/known"};
  d.command = "/opt/ekb-device --cache '/var/cache/ekb dev'";
  const std::vector<std::string> argv = ekb::runtime::device_agent_argv(d);
  const std::vector<std::string> expected = {
      "ssh", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5", "-o", "ConnectTimeout=10", "-p", "2222",
      "-i", "/keys/pi", "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=/keys/known", "pi@pi.local", "--",
      "/opt/ekb-device --cache '/var/cache/ekb dev' serve"};
  EXPECT_EQ(argv, expected);
}

TEST(RemoteDevice, ALocalCommandLineIsSplitAsAShellWouldWithoutExpandingAnything) {
  ekb::runtime::RemoteDevice d;
  d.transport = "local";
  d.command = "qemu-aarch64-static -L /usr/aarch64-linux-gnu ekb-device --worker-prefix 'qemu-aarch64-static -L x' "
              "--cache \"$HOME/a b\" c\\ d";
  const std::vector<std::string> expected = {"qemu-aarch64-static", "-L", "/usr/aarch64-linux-gnu", "ekb-device",
                                             "--worker-prefix", "qemu-aarch64-static -L x", "--cache", "$HOME/a b",
                                             "c d", "serve"};
  EXPECT_EQ(ekb::runtime::device_agent_argv(d), expected);
  EXPECT_THROW(ekb::runtime::split_command_line("a 'b"), std::invalid_argument);
}

// ---- through the local transport: the host's ekb-device, no ssh ----

TEST(RemoteDevice, TheAgentExitsWhenItsInputClosesAndOnAStreamThatIsNotFrames) {
  const std::string agent = "timeout 30 " + host_device_binary().string() + " serve";
  EXPECT_EQ(std::system((agent + " </dev/null >/dev/null").c_str()), 0)
      << "ekb-device serve did not end cleanly at the end of its input";
  // A header length of 0x78787878 bytes, more than a header may be: refused at once, not awaited.
  const int status = std::system(("printf 'xxxxxxxx' | " + agent + " >/dev/null").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST(RemoteDevice, TheAgentSaysWhatTheDeviceIsAndRefusesAnArtifactWhoseBytesDoNotMatchItsHash) {
  const fs::path dir = ekb::testing::private_temp_path("agent_hello");
  fs::remove_all(dir);  // a repeated test (--gtest_repeat) starts afresh
  fs::create_directories(dir);
  ekb::runtime::DeviceLink link({host_device_binary().string(), "--cache", (dir / "cache").string(), "serve"});
  EXPECT_EQ(link.device().value("triple", ""), "x86_64-linux-gnu") << link.device().dump();
  EXPECT_EQ(link.device().value("program", ""), "ekb-device 0.1");
  // The CPU's facts, the same as this process reads them (the agent runs on this machine).
  EXPECT_EQ(link.device()["features"], ekb::runtime::this_cpu_facts()["features"]) << link.device().dump();
  EXPECT_FALSE(link.device()["features"].empty()) << link.device().dump();
  EXPECT_TRUE(link.device().contains("cpu_model")) << link.device().dump();

  const std::string bytes = "not really a shared object";
  const std::string hash = ekb::runtime::content_key({bytes});
  auto bad = link.request({{"op", "put"}, {"hash", hash}}, bytes + "!", 10);
  EXPECT_FALSE(bad.header.value("ok", true)) << bad.header.dump();
  EXPECT_FALSE(link.request({{"op", "has"}, {"hash", hash}}, {}, 10).header.value("has", true));
  auto good = link.request({{"op", "put"}, {"hash", hash}}, bytes, 10);
  EXPECT_TRUE(good.header.value("ok", false)) << good.header.dump();
  EXPECT_TRUE(link.request({{"op", "has"}, {"hash", hash}}, {}, 10).header.value("has", false));
  // A request out of order is refused, and the agent keeps serving.
  auto early = link.request({{"op", "bind"}}, {}, 10);
  EXPECT_EQ(early.header.value("error", ""), "internal") << early.header.dump();
  EXPECT_TRUE(link.request({{"op", "ping"}}, {}, 10).header.value("ok", false));
  EXPECT_FALSE(link.lost());
}

TEST(RemoteDevice, ADevicesFileWithAnUnknownKeyIsRefusedWithItsLine) {
  const fs::path dir = ekb::testing::private_temp_path("devices_typo");
  fs::remove_all(dir);  // a repeated test (--gtest_repeat) starts afresh
  fs::create_directories(dir);
  std::ofstream(dir / "devices.toml") << "[devices.pi]\nhost = \"pi.local\"\ncomand = \"ekb-device\"\n";
  auto r = run_ekb("eval -s native --devices " + (dir / "devices.toml").string() + " --device pi --db " +
                   (dir / "r.db").string() + " linalg.gemm/mini");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("devices.toml:3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown key 'comand'"), std::string::npos) << r.err;
}

TEST(RemoteDevice, AMixedSolutionSetGetsTheSameVerdictsThroughTheLocalTransportAsLocally) {
  const fs::path dir = local_device_dir("remote_local", "here");
  write_mixed_solutions(dir / "solutions");
  const std::string common = "eval -s " + (dir / "solutions").string() + " --no-timing --trials 3";
  auto local = run_ekb(common + " --db " + (dir / "local.db").string() + " --json " + (dir / "local.json").string() +
                       workload_args());
  ASSERT_EQ(local.code, 0) << local.err;
  auto remote = run_ekb(common + " --devices " + (dir / "devices.toml").string() + " --device here --db " +
                        (dir / "remote.db").string() + " --json " + (dir / "remote.json").string() + workload_args());
  ASSERT_EQ(remote.code, 0) << remote.err;
  expect_every_result_once(read_verdicts(dir / "local.json"));
  expect_every_result_once(read_verdicts(dir / "remote.json"));
  std::ifstream in(dir / "remote.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["device"]["remote"], "here") << j["device"].dump();
}

// A device that is not emulated is timed: the interleaved loop runs here, one request per call,
// with the times measured by the worker on the device.
TEST(RemoteDevice, ADeviceThatIsNotEmulatedTimesTheCorrectCandidates) {
  const fs::path dir = local_device_dir("remote_timed", "here");
  write_mixed_solutions(dir / "solutions");
  auto r = run_ekb("eval -s " + (dir / "solutions").string() + " --min-time 0.01 --devices " + (dir / "devices.toml").string() +
                   " --device here --db " + (dir / "r.db").string() + " --json " + (dir / "r.json").string() + workload_args());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("correctness only"), std::string::npos) << r.err;
  expect_every_result_once(read_verdicts(dir / "r.json"));
  std::ifstream in(dir / "r.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const auto& res : j["results"]) {
    if (!res["correct"].get<bool>()) continue;
    EXPECT_FALSE(res["speedup"].is_null()) << res["workload"];
    EXPECT_GT(res["time_ms"]["runs"].get<int>(), 0) << res["workload"];
  }
}

// A candidate during which the device goes every time (here: an agent that lives 2 s, a kernel
// that takes 5 s) is never stored with a verdict, nor tried forever: the run stops unfinished.
TEST(RemoteDevice, ACandidateDuringWhichTheDeviceGoesEveryTimeStopsTheRunUnfinished) {
  const fs::path dir = local_device_dir("remote_flapping", "flaky", "timeout 2 ");
  fs::create_directories(dir / "solutions" / "linalg.gemm");
  auto emitted = run_ekb("emit linalg.gemm/mini");
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  std::string text = "#include <unistd.h>\n" + emitted.out;
  text.insert(text.find('{', text.find("ekb_main(")) + 1, " usleep(5000000);");
  std::ofstream(dir / "solutions" / "linalg.gemm" / "mini.c") << text;
  auto r = run_ekb("eval -s " + (dir / "solutions").string() + " --no-timing --devices " + (dir / "devices.toml").string() +
                   " --device flaky --db " + (dir / "r.db").string() + " --json " + (dir / "r.json").string() +
                   " linalg.gemm/mini");
  EXPECT_EQ(r.code, 75) << r.err;
  EXPECT_NE(r.err.find("device flaky: lost 3 times while evaluating linalg.gemm/mini"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is unfinished (0 of 1 candidates stored)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "r.json"));
}

// ---- a device's CPU against the configured target ----

TEST(RemoteDevice, TheFeatureCheckRefusesATargetTheDevicesCpuCannotRun) {
  using ekb::runtime::cpu_target;
  using ekb::runtime::unmet_requirement;
  const nlohmann::json sve512 = {{"triple", "aarch64-linux-gnu"}, {"features", {"neon", "sve"}}, {"sve_vl_bits", 512}};
  const nlohmann::json neon_only = {{"triple", "aarch64-linux-gnu"}, {"features", {"neon"}}, {"sve_vl_bits", nullptr}};
  EXPECT_EQ(unmet_requirement(cpu_target("aarch64-linux-gnu+sve512"), sve512), "");
  EXPECT_EQ(unmet_requirement(cpu_target("aarch64-linux-gnu"), neon_only), "");
  // Fixed-length SVE code at another length computes wrong results.
  const std::string other_length = unmet_requirement(cpu_target("aarch64-linux-gnu+sve256"), sve512);
  EXPECT_NE(other_length.find("512-bit SVE vectors"), std::string::npos) << other_length;
  EXPECT_NE(other_length.find("fixed to 256"), std::string::npos) << other_length;
  const std::string no_sve = unmet_requirement(cpu_target("aarch64-linux-gnu+sve256"), neon_only);
  EXPECT_NE(no_sve.find("lacks sve"), std::string::npos) << no_sve;
  const nlohmann::json rvv128 = {{"triple", "riscv64-linux-gnu"}, {"features", {"i", "m", "a", "f", "d", "c", "v"}},
                                 {"rvv_vlen_bits", 128}};
  EXPECT_EQ(unmet_requirement(cpu_target("riscv64-linux-gnu+rvv128"), rvv128), "");
  EXPECT_NE(unmet_requirement(cpu_target("riscv64-linux-gnu+rvv256"), rvv128).find("fixed to 256"), std::string::npos);
  // This host's code (-march=native) on another architecture, or on a CPU without its features.
  const std::string arm = unmet_requirement(ekb::runtime::host_cpu_target(), sve512);
  EXPECT_NE(arm.find("runs aarch64-linux-gnu code, not " + std::string(ekb::runtime::build_triple())), std::string::npos) << arm;
  nlohmann::json host = ekb::runtime::this_cpu_facts();
  host["triple"] = ekb::runtime::build_triple();
  EXPECT_EQ(unmet_requirement(ekb::runtime::host_cpu_target(), host), "");
  if (!host["features"].empty()) {
    const std::string lost = host["features"].back();
    host["features"].erase(host["features"].size() - 1);
    EXPECT_NE(unmet_requirement(ekb::runtime::host_cpu_target(), host).find("lacks " + lost), std::string::npos);
  }
  // An agent that reports no features (an older ekb-device) cannot be checked, so it is refused.
  EXPECT_NE(unmet_requirement(cpu_target("aarch64-linux-gnu"), {{"triple", "aarch64-linux-gnu"}}).find("no CPU features"),
            std::string::npos);
}

// A board whose SVE vectors are 512 bits long (qemu's -cpu max,sve512=on) configured for the
// 256-bit target: refused at hello, before anything is compiled or run.
TEST(RemoteDevice, ADeviceWhoseVectorLengthDiffersFromItsTargetsIsRefusedAtHello) {
  if (!fs::exists("/usr/bin/qemu-aarch64-static")) GTEST_SKIP() << "qemu-user-static is needed";
  if (!fs::exists(aarch64_device_binary()))
    GTEST_SKIP() << aarch64_device_binary() << " is missing: scripts/build-device.sh aarch64-linux-gnu";
  const fs::path dir = ekb::testing::private_temp_path("remote_sve_mismatch");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string qemu = "/usr/bin/qemu-aarch64-static -cpu max,sve512=on -L /usr/aarch64-linux-gnu";
  std::ofstream(dir / "devices.toml") << "[devices.sve512]\ntransport = \"local\"\ncommand = \"" << qemu << " "
                                      << aarch64_device_binary().string() << " --cache " << (dir / "cache").string()
                                      << " --worker-prefix '" << qemu << "'\"\ntriple = \"aarch64-linux-gnu+sve256\"\n"
                                      << "emulated = true\n";
  auto r = run_ekb("eval -s native --no-timing --devices " + (dir / "devices.toml").string() + " --device sve512 --db " +
                   (dir / "r.db").string() + " linalg.gemm/mini");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("device sve512 cannot run the code of aarch64-linux-gnu+sve256: it has 512-bit SVE vectors"),
            std::string::npos)
      << r.err;
}

TEST(RemoteDevice, AnEmulatedDeviceRefusesCalibration) {
  const fs::path dir = local_device_dir("remote_emulated_calibrate", "emu");
  std::ofstream(dir / "devices.toml", std::ios::app) << "emulated = true\n";
  auto r = run_ekb("calibrate --quick --devices " + (dir / "devices.toml").string() + " --device emu --db " +
                   (dir / "r.db").string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("device emu is emulated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("times under an emulator measure the emulator"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "r.db"));
}

// ---- over OpenSSH on loopback, the board an emulated aarch64 ----

// A throwaway sshd: its own host key, a user key authorized for the current user, on a free
// loopback port; started and stopped by the test.
class SshServer {
 public:
  explicit SshServer(const fs::path& dir) : dir_(dir) {
    fs::create_directories(dir_);
    keygen(dir_ / "host_key");
    keygen(dir_ / "user_key");
    fs::copy_file(dir_ / "user_key.pub", dir_ / "authorized_keys", fs::copy_options::overwrite_existing);
  }
  ~SshServer() { stop(); }

  // On a free loopback port (a new one each time: another test may have taken the last one between
  // its probe and sshd's bind, hence three tries). False, with the log in *why, when sshd does not
  // accept connections.
  bool start(std::string* why) {
    for (int attempt = 0; attempt < 3; ++attempt)
      if (start_on(free_loopback_port(), why)) return true;
    return false;
  }
  // The connections go (sshd's per-connection children killed), the server stays.
  int kill_connections() {
    int n = 0;
    for (pid_t c : children_of(pid_)) n += ::kill(c, SIGKILL) == 0 ? 1 : 0;
    return n;
  }
  // The server and its connections go.
  void stop() {
    if (pid_ <= 0) return;
    kill_connections();
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // A device entry for this server, the board the aarch64 ekb-device under qemu-user.
  std::string device_toml(double wait_s) const {
    const std::string qemu = "/usr/bin/qemu-aarch64-static -L /usr/aarch64-linux-gnu";
    std::ostringstream t;
    t << ssh_table("board") << "command = \"" << qemu << " " << aarch64_device_binary().string() << " --cache "
      << (dir_ / "device-cache").string() << " --worker-prefix '" << qemu
      << "'\"\ntriple = \"aarch64-linux-gnu\"\nemulated = true\nwait = " << wait_s << "\n";
    return t.str();
  }
  // A device entry for this server whose board is this machine: the host build's ekb-device, not
  // emulated.
  std::string host_device_toml(const std::string& name) const {
    return ssh_table(name) + "command = \"" + host_device_binary().string() + " --cache " +
           (dir_ / "device-cache").string() + "\"\nwait = 60\n";
  }

 private:
  bool start_on(int port, std::string* why) {
    port_ = port;
    std::ofstream(dir_ / "known_hosts") << "[127.0.0.1]:" << port_ << " " << slurp((dir_ / "host_key.pub").string());
    std::ofstream(dir_ / "sshd_config") << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << (dir_ / "host_key").string()
                                        << "\nPidFile " << (dir_ / "sshd.pid").string() << "\nAuthorizedKeysFile "
                                        << (dir_ / "authorized_keys").string()
                                        << "\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                                           "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                                           "PermitRootLogin prohibit-password\nLogLevel ERROR\n";
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string log = (dir_ / "sshd.log").string();
      std::freopen(log.c_str(), "a", stderr);
      ::execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", (dir_ / "sshd_config").c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      // Accepting, and still alive a moment later: the listener is ours, not another test's.
      if (port_accepts(port_)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (::waitpid(pid_, nullptr, WNOHANG) == 0) return true;
        pid_ = -1;
        break;
      }
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    *why = slurp((dir_ / "sshd.log").string());
    stop();
    return false;
  }

  void keygen(const fs::path& key) {
    fs::remove(key);
    fs::remove(key.string() + ".pub");
    const std::string cmd = "ssh-keygen -q -t ed25519 -N '' -C ekb-test -f " + key.string() + " >/dev/null 2>&1";
    ok_ = ok_ && std::system(cmd.c_str()) == 0;
  }

  // The table's header and how ssh reaches this server.
  std::string ssh_table(const std::string& name) const {
    const passwd* pw = ::getpwuid(::geteuid());
    std::ostringstream t;
    t << "[devices." << name << "]\nhost = \"127.0.0.1\"\nport = " << port_ << "\nuser = \"" << (pw ? pw->pw_name : "root")
      << "\"\nidentity = \"" << (dir_ / "user_key").string() << "\"\nssh_options = [\"UserKnownHostsFile="
      << (dir_ / "known_hosts").string() << "\", \"GlobalKnownHostsFile=/dev/null\", \"StrictHostKeyChecking=yes\"]\n";
    return t.str();
  }

  fs::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;

 public:
  bool ok_ = true;  // the keys were made
};

class RemoteDeviceOverSsh : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/sbin/sshd") || !program_exists("ssh") || !program_exists("ssh-keygen"))
      GTEST_SKIP() << "openssh-server and openssh-client are needed (scripts/install-deps.sh)";
    if (!fs::exists("/usr/bin/qemu-aarch64-static")) GTEST_SKIP() << "qemu-user-static is needed";
    if (!fs::exists(aarch64_device_binary()))
      GTEST_SKIP() << aarch64_device_binary() << " is missing: scripts/build-device.sh aarch64-linux-gnu";
    dir_ = ekb::testing::private_temp_path("remote_ssh");
    fs::remove_all(dir_);
    server_ = std::make_unique<SshServer>(dir_ / "sshd");
    ASSERT_TRUE(server_->ok_) << "ssh-keygen failed";
    std::string why;
    if (!server_->start(&why)) GTEST_SKIP() << "sshd does not start here: " << why;
    write_mixed_solutions(dir_ / "solutions");
  }

  std::string eval_command(double wait_s) {
    std::ofstream(dir_ / "devices.toml") << server_->device_toml(wait_s);
    return std::string(EKB_BINARY) + " eval -s " + (dir_ / "solutions").string() + " --trials 3 --devices " +
           (dir_ / "devices.toml").string() + " --device board --db " + (dir_ / "r.db").string() + " --json " +
           (dir_ / "r.json").string() + workload_args();
  }

  fs::path dir_;
  std::unique_ptr<SshServer> server_;
};

TEST_F(RemoteDeviceOverSsh, AKilledConnectionIsReconnectedAndTheCandidateInFlightEvaluatedAgain) {
  Background run(eval_command(120), dir_ / "out", dir_ / "err");
  // Mid-run: two results stored, four to go (each takes seconds under qemu).
  ASSERT_TRUE(wait_for_text(dir_ / "err", "[2/6]", 300)) << slurp((dir_ / "err").string());
  EXPECT_GE(server_->kill_connections(), 1);
  const int code = run.wait(600);
  const std::string err = slurp((dir_ / "err").string());
  ASSERT_EQ(code, 0) << err;
  EXPECT_NE(err.find("device board: lost"), std::string::npos) << err;
  EXPECT_NE(err.find("device board: back"), std::string::npos) << err;
  EXPECT_NE(err.find("correctness only"), std::string::npos) << "an emulated board was timed: " << err;
  expect_every_result_once(read_verdicts(dir_ / "r.json"));
  std::ifstream in(dir_ / "r.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["device"]["target"], "aarch64-linux-gnu") << j["device"].dump();
  EXPECT_EQ(j["device"]["emulated"], true);
  for (const auto& r : j["results"]) EXPECT_TRUE(r["speedup"].is_null()) << r["workload"] << ": an emulated time reported as a speed";
}

TEST_F(RemoteDeviceOverSsh, ABoardThatStaysAwayStopsTheRunUnfinishedAndTheNextRunResumesIt) {
  {
    Background run(eval_command(2), dir_ / "out1", dir_ / "err1");
    ASSERT_TRUE(wait_for_text(dir_ / "err1", "[2/6]", 300)) << slurp((dir_ / "err1").string());
    server_->stop();
    const int code = run.wait(120);
    const std::string err = slurp((dir_ / "err1").string());
    ASSERT_EQ(code, 75) << err;
    EXPECT_NE(err.find("is unfinished"), std::string::npos) << err;
  }
  std::string why;
  ASSERT_TRUE(server_->start(&why)) << why;
  Background again(eval_command(2), dir_ / "out2", dir_ / "err2");
  const int code = again.wait(600);
  const std::string err = slurp((dir_ / "err2").string());
  ASSERT_EQ(code, 0) << err;
  EXPECT_NE(err.find("resuming with"), std::string::npos) << err;
  expect_every_result_once(read_verdicts(dir_ / "r.json"));
}

// An environment variable set for one test's `ekb` commands.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

// This machine's own ekb-device behind the loopback sshd, a board that is not emulated: `ekb
// calibrate --device` measures it there and keeps the result under the device's name and facts;
// `ekb eval --device` judges its runs against that calibration, and a device without one gets no
// roofline, never this host's (calibrated here too). Structure only: the numbers are whatever this
// machine's load makes them.
TEST(RemoteDeviceCalibration, ADeviceIsCalibratedThereAndItsRunsUseItsOwnCalibrationOnly) {
  if (!fs::exists("/usr/sbin/sshd") || !program_exists("ssh") || !program_exists("ssh-keygen"))
    GTEST_SKIP() << "openssh-server and openssh-client are needed (scripts/install-deps.sh)";
  const fs::path dir = ekb::testing::private_temp_path("remote_calibration");
  fs::remove_all(dir);
  SshServer server(dir / "sshd");
  ASSERT_TRUE(server.ok_) << "ssh-keygen failed";
  std::string why;
  if (!server.start(&why)) GTEST_SKIP() << "sshd does not start here: " << why;
  std::ofstream(dir / "devices.toml") << server.host_device_toml("board") << "[devices.other]\ntransport = \"local\"\n"
                                      << "command = \"" << host_device_binary().string() << " --cache "
                                      << (dir / "other-cache").string() << "\"\n";
  const ScopedEnv cache("EKB_CACHE_DIR", (dir / "cache").string());
  const std::string devices = " --devices " + (dir / "devices.toml").string() + " --db " + (dir / "r.db").string();

  auto here = run_ekb("calibrate --quick --json --db " + (dir / "r.db").string());
  ASSERT_EQ(here.code, 0) << here.err;
  const std::string host_key = nlohmann::json::parse(here.out)["device"];
  auto measured = run_ekb("calibrate --quick --json" + devices + " --device board");
  ASSERT_EQ(measured.code, 0) << measured.err;
  const nlohmann::json board = nlohmann::json::parse(measured.out);
  const std::string key = board["device"];
  EXPECT_EQ(key.rfind("board (", 0), 0u) << key;
  EXPECT_NE(key.find("; facts "), std::string::npos) << key;
  EXPECT_NE(key, host_key);
  EXPECT_EQ(board["details"]["remote"], "board");
  EXPECT_GT(board["bandwidth_gbs"]["best"].get<double>(), 0);
  EXPECT_GT(board["peak_gflops"]["best"].get<double>(), 0);
  size_t files = 0;
  for (const auto& f : fs::directory_iterator(dir / "cache" / "calibration")) files += f.path().extension() == ".json";
  EXPECT_EQ(files, 2u) << "one calibration for this host, one for the board";

  const std::string eval = "eval -s native --min-time 0.01" + devices;
  auto on_board = run_ekb(eval + " --device board --json " + (dir / "board.json").string() + " linalg.gemm/mini");
  ASSERT_EQ(on_board.code, 0) << on_board.err;
  std::ifstream board_in(dir / "board.json");
  const nlohmann::json b = nlohmann::json::parse(board_in);
  EXPECT_EQ(b["device"]["name"], key) << b["device"].dump();
  EXPECT_EQ(b["device"]["facts"]["triple"], ekb::runtime::build_triple()) << b["device"].dump();
  ASSERT_FALSE(b["calibration"].is_null()) << on_board.out;
  EXPECT_EQ(b["calibration"]["device"], key);
  ASSERT_EQ(b["results"].size(), 1u);
  EXPECT_FALSE(b["results"][0]["roofline"].is_null()) << b["results"][0].dump();

  auto on_other = run_ekb(eval + " --device other --json " + (dir / "other.json").string() + " linalg.gemm/mini");
  ASSERT_EQ(on_other.code, 0) << on_other.err;
  std::ifstream other_in(dir / "other.json");
  const nlohmann::json o = nlohmann::json::parse(other_in);
  EXPECT_TRUE(o["calibration"].is_null()) << o["calibration"].dump();
  ASSERT_EQ(o["results"].size(), 1u);
  EXPECT_TRUE(o["results"][0]["roofline"].is_null()) << o["results"][0].dump();
  EXPECT_NE(on_other.out.find("`ekb calibrate --device other` measures one there"), std::string::npos) << on_other.out;
}

}  // namespace
