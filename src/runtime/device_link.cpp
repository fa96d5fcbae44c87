#include "runtime/device_link.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "runtime/compile_cache.h"

extern char** environ;

namespace ekb::runtime {

std::vector<std::string> split_command_line(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
    } else if (c == '\'' || c == '"') {
      const size_t end = text.find(c, i + 1);
      if (end == std::string_view::npos) throw std::invalid_argument("unclosed quote in: " + std::string(text));
      word.append(text.substr(i + 1, end - i - 1));
      in_word = true;
      i = end;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::vector<std::string> device_agent_argv(const RemoteDevice& d) {
  if (d.transport == "local") {
    std::vector<std::string> argv = split_command_line(d.command);
    argv.push_back("serve");
    return argv;
  }
  if (d.transport != "ssh") throw std::invalid_argument("unknown transport '" + d.transport + "' (ssh or local)");
  if (d.host.empty()) throw std::invalid_argument("device '" + d.name + "' has no host");
  // BatchMode: never a password prompt in an unattended run. ServerAliveInterval: a dead
  // connection (a device that lost power) is noticed within about 15 s instead of TCP's minutes;
  // ConnectTimeout: so is a device that does not answer a reconnection.
  std::vector<std::string> argv = {"ssh", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=5",
                                   "-o", "ConnectTimeout=10"};
  if (d.port) argv.insert(argv.end(), {"-p", std::to_string(d.port)});
  if (!d.identity.empty()) argv.insert(argv.end(), {"-i", d.identity, "-o", "IdentitiesOnly=yes"});
  for (const std::string& o : d.ssh_options) argv.insert(argv.end(), {"-o", o});
  argv.push_back(d.user.empty() ? d.host : d.user + "@" + d.host);
  argv.push_back("--");
  // The remote side runs this through the user's shell: it is a command line, quoting and all.
  argv.push_back(d.command + " serve");
  return argv;
}

DeviceLink::DeviceLink(const std::vector<std::string>& argv, double hello_timeout_s) {
  if (argv.empty()) throw DeviceLost("no command to start the device's agent");
  char tmpl[] = "/tmp/ekb-device-link-XXXXXX";
  const int err_fd = ::mkstemp(tmpl);
  if (err_fd < 0) throw DeviceLost(std::string("cannot create a log file: ") + std::strerror(errno));
  stderr_path_ = tmpl;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    ::close(err_fd);
    throw DeviceLost(std::string("socketpair: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(sv[1]);
  ::close(err_fd);
  sock_ = sv[0];
  if (rc != 0) {
    pid_ = -1;
    lost_ = true;
    throw DeviceLost("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  framed::Frame hello = request({{"op", "hello"}}, {}, hello_timeout_s);
  const int protocol = hello.header.value("protocol", 0);
  if (protocol != framed::kServeProtocol) {
    stop();
    throw std::runtime_error("the device's ekb-device speaks serve protocol " + std::to_string(protocol) + ", this ekb " +
                             std::to_string(framed::kServeProtocol) + ": install the matching ekb-device there");
  }
  device_ = hello.header.value("device", nlohmann::json::object());
}

DeviceLink::~DeviceLink() {
  stop();
  if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());
}

void DeviceLink::stop() {
  if (sock_ >= 0) {
    ::shutdown(sock_, SHUT_WR);  // the agent reads end of input and exits; ssh closes the session
    ::close(sock_);
    sock_ = -1;
  }
  if (pid_ <= 0) return;
  int status = 0;
  for (int i = 0; i < 40; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void DeviceLink::lose(const std::string& why) {
  lost_ = true;
  stop();
  std::string tail = stderr_tail();
  throw DeviceLost(why + (tail.empty() ? "" : ": " + tail));
}

framed::Frame DeviceLink::request(nlohmann::json header, std::string_view blob, double timeout_s) {
  if (lost_) throw DeviceLost("the connection to the device was lost");
  const std::string op = header.value("op", "");
  if (!framed::write_frame(sock_, std::move(header), blob)) lose("the device's connection closed (sending " + op + ")");
  framed::Frame reply;
  const framed::ReadStatus s = framed::read_frame(sock_, reply, static_cast<int>(timeout_s * 1000));
  if (s != framed::ReadStatus::Ok)
    lose("the device's connection " + std::string(framed::read_status_name(s)) + " (waiting for " + op + ")");
  return reply;
}

std::string DeviceLink::ensure_artifact(const Artifact& artifact, double timeout_s) {
  if (auto it = artifacts_.find(artifact.path); it != artifacts_.end()) return it->second;
  std::ifstream in(artifact.path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the artifact " + artifact.path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string hash = content_key({bytes});
  framed::Frame has = request({{"op", "has"}, {"hash", hash}}, {}, timeout_s);
  if (!has.header.value("has", false)) {
    framed::Frame put = request({{"op", "put"}, {"hash", hash}}, bytes, timeout_s);
    if (!put.header.value("ok", false))
      throw std::runtime_error("the device refused the artifact: " + put.header.value("message", std::string()));
  }
  artifacts_[artifact.path] = hash;
  return hash;
}

std::string DeviceLink::stderr_tail(size_t max_bytes) const {
  std::ifstream in(stderr_path_, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
  return text;
}

}  // namespace ekb::runtime
