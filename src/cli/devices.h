// Remote devices (docs/DEVICES.md, "Configuring a device"): an ekb-devices.toml read from
// --devices FILE, else $EKB_DEVICES, else ./ekb-devices.toml, one table per device:
//
//   [devices.pi5]
//   host = "pi5.local"          # ssh: the host, port, user and identity (a private key file)
//   port = 22
//   user = "pi"
//   identity = "~/.ssh/ekb_pi5"
//   ssh_options = ["UserKnownHostsFile=~/.ssh/known_hosts_boards"]
//   command = "/home/pi/ekb-device"   # the device's ekb-device command line (`serve` is appended)
//   triple = "aarch64-linux-gnu"      # what the cpu backend compiles for
//   backends = ["cpu"]
//   wait = 300                         # seconds a lost device is waited for before the run stops
//   transport = "ssh"                  # or "local": `command` run on this machine, without ssh
//   emulated = false                   # true: an emulator runs it (correctness only, never timed)
#pragma once
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device_link.h"

namespace ekb::cli {

// The file --devices names, else $EKB_DEVICES, else ./ekb-devices.toml ("" when none exists).
std::string devices_file(const std::string& option);
// Every device of a file. Throws UsageError naming the file, line and column of what is wrong.
std::vector<runtime::RemoteDevice> read_devices(const std::string& path);
// The device `name` of the file `option` (or the default file). Throws UsageError naming the
// devices there when there is no such device.
runtime::RemoteDevice find_device(const std::string& option, const std::string& name);

// A remote device's link, opened once and again after it is lost (`ekb eval --device`, `ekb
// calibrate --device`).
struct DeviceConnection {
  runtime::RemoteDevice device;
  std::unique_ptr<runtime::DeviceLink> link;
  nlohmann::json identity;  // the first hello's facts: a reconnection must find the same device

  // Starts the agent and says hello; throws runtime::DeviceLost when it cannot. The first time the
  // device must be able to run the configured target's code (its triple, CPU features and vector
  // length: runtime::unmet_requirement), later it must be the same device; else a UsageError.
  void connect();
  // connect(), a device that cannot be reached a UsageError: the first connection of a command.
  void open();
  // After a loss: tries again with a growing pause (1 s, doubling up to 30 s) for up to the
  // device's `wait`. False when it stayed away.
  bool reconnect(const std::string& why);
  // "NAME (machine, CPU, N cores, glibc V; facts HASH)", HASH of every fact of the first hello: the
  // device's name in a run's records and the key of its calibration, so a board that differs in
  // anything it reports is another device.
  std::string key() const;
};

}  // namespace ekb::cli
