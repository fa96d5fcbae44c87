// The host's end of a remote device (docs/DEVICES.md): `ekb-device serve` started through OpenSSH
// (or, for transport "local", directly: an emulator, a protocol test), its stdin/stdout on a socket
// here, spoken to in frames (runtime/framed_stream.h). Authentication, encryption and host keys
// are ssh's; nothing here listens on a port.
//
// A link that breaks (ssh exits, the device reboots, no reply within a request's deadline) is lost
// for good: every later request throws DeviceLost, and the caller connects again
// (a new DeviceLink) and checks that the device is the same one (hello()).
#pragma once
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend.h"
#include "runtime/framed_stream.h"

namespace ekb::runtime {

// The device cannot be reached or went away: never a candidate's fault (ErrorKind::Device).
class DeviceLost : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One device of an ekb-devices.toml (the cli reads the file: cli/devices.h).
struct RemoteDevice {
  std::string name;
  std::string transport = "ssh";           // "ssh", or "local": `command` run here, without ssh
  std::string host;                        // ssh: the host (or an alias of ~/.ssh/config)
  int port = 0;                            // 0: ssh's default
  std::string user;                        // empty: ssh's default
  std::string identity;                    // a private key file; empty: ssh's default keys
  std::vector<std::string> ssh_options;    // more `-o` options (UserKnownHostsFile=..., ...)
  std::string command = "ekb-device";      // the device's ekb-device command line; `serve` is appended
  std::string triple;                      // the cpu target artifacts are built for ("": this host's)
  std::vector<std::string> backends = {"cpu"};
  double wait_s = 300;                     // how long a lost device is waited for before the run stops
  bool emulated = false;                   // it runs under an emulator: correctness only, never timed
};

// The command line that starts the device's agent: ssh ... -- COMMAND serve, or COMMAND serve.
std::vector<std::string> device_agent_argv(const RemoteDevice& device);
// Splits a command line into words as a POSIX shell would for plain words and quotes ('...',
// "...", backslash); nothing is expanded. Throws std::invalid_argument on an unclosed quote.
std::vector<std::string> split_command_line(std::string_view text);

class DeviceLink {
 public:
  // Starts the agent and says hello (within `hello_timeout_s`). Throws DeviceLost when it cannot,
  // std::runtime_error when the agent speaks another protocol version.
  DeviceLink(const std::vector<std::string>& argv, double hello_timeout_s = 60);
  ~DeviceLink();  // closes the agent's stdin (it exits), waits a moment, then kills what is left
  DeviceLink(const DeviceLink&) = delete;
  DeviceLink& operator=(const DeviceLink&) = delete;

  // The device's facts, as `ekb-device info` prints them.
  const nlohmann::json& device() const { return device_; }
  // One request and its reply, within `timeout_s`. Throws DeviceLost (and the link is lost).
  framed::Frame request(nlohmann::json header, std::string_view blob, double timeout_s);
  // The content hash under which the device holds `artifact` (sent if the device lacks it).
  std::string ensure_artifact(const Artifact& artifact, double timeout_s);

  bool lost() const { return lost_; }
  pid_t pid() const { return pid_; }
  // The agent's (or ssh's) last words on stderr: why a connection failed.
  std::string stderr_tail(size_t max_bytes = 600) const;

 private:
  [[noreturn]] void lose(const std::string& why);
  void stop();

  pid_t pid_ = -1;
  int sock_ = -1;
  std::string stderr_path_;
  nlohmann::json device_;
  bool lost_ = false;
  std::map<std::string, std::string> artifacts_;  // artifact path -> its hash, known to the device
};

}  // namespace ekb::runtime
