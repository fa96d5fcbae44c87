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

}  // namespace ekb::cli
