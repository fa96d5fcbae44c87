#include "cli/devices.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <toml++/toml.h>

#include "cli/commands.h"
#include "runtime/compile_cache.h"
#include "runtime/cpu_features.h"
#include "runtime/cpu_target.h"

namespace ekb::cli {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail_at(const std::string& path, const toml::node& node, const std::string& message) {
  throw UsageError(fmt::format("{}:{}:{}: {}", path, node.source().begin.line, node.source().begin.column, message));
}

template <typename T>
T value_of(const std::string& path, const toml::node& node, std::string_view key, std::string_view what) {
  if (auto v = node.value<T>()) return *v;
  fail_at(path, node, fmt::format("'{}' must be {}", key, what));
}

// "~/" at the start of a path is the home directory (ssh's -i does not expand it when quoted).
std::string expand_home(std::string p) {
  if (p.rfind("~/", 0) == 0)
    if (const char* home = std::getenv("HOME")) p = std::string(home) + p.substr(1);
  return p;
}

std::vector<std::string> strings_of(const std::string& path, const toml::node& node, std::string_view key) {
  const toml::array* a = node.as_array();
  if (!a) fail_at(path, node, fmt::format("'{}' must be an array of strings", key));
  std::vector<std::string> out;
  for (const toml::node& e : *a) out.push_back(value_of<std::string>(path, e, key, "an array of strings"));
  return out;
}

runtime::RemoteDevice parse_device(const std::string& path, const std::string& name, const toml::table& t) {
  runtime::RemoteDevice d;
  d.name = name;
  for (const auto& [k, node] : t) {
    const std::string_view key = k.str();
    if (key == "host") d.host = value_of<std::string>(path, node, key, "a string");
    else if (key == "port") d.port = static_cast<int>(value_of<int64_t>(path, node, key, "an integer"));
    else if (key == "user") d.user = value_of<std::string>(path, node, key, "a string");
    else if (key == "identity") d.identity = expand_home(value_of<std::string>(path, node, key, "a string"));
    else if (key == "ssh_options") d.ssh_options = strings_of(path, node, key);
    else if (key == "command") d.command = value_of<std::string>(path, node, key, "a string");
    else if (key == "triple") d.triple = value_of<std::string>(path, node, key, "a string");
    else if (key == "backends") d.backends = strings_of(path, node, key);
    else if (key == "wait") d.wait_s = value_of<double>(path, node, key, "a number of seconds");
    else if (key == "emulated") d.emulated = value_of<bool>(path, node, key, "true or false");
    else if (key == "transport") {
      d.transport = value_of<std::string>(path, node, key, "a string");
      if (d.transport != "ssh" && d.transport != "local") fail_at(path, node, "'transport' must be \"ssh\" or \"local\"");
    } else {
      fail_at(path, node, fmt::format("unknown key '{}' of device '{}' (host, port, user, identity, ssh_options, "
                                      "command, triple, backends, wait, transport, emulated)", key, name));
    }
  }
  if (d.transport == "ssh" && d.host.empty()) fail_at(path, t, fmt::format("device '{}' has no host", name));
  // ssh would read a host or user starting with '-' as an option.
  if (d.host.rfind('-', 0) == 0 || d.user.rfind('-', 0) == 0)
    fail_at(path, t, fmt::format("device '{}': a host or user may not start with '-'", name));
  try {
    runtime::device_agent_argv(d);  // the command line splits (an unclosed quote is an error here)
  } catch (const std::invalid_argument& e) {
    fail_at(path, t, fmt::format("device '{}': {}", name, e.what()));
  }
  if (d.wait_s < 0) fail_at(path, t, fmt::format("device '{}': 'wait' must not be negative", name));
  return d;
}

}  // namespace

std::string devices_file(const std::string& option) {
  if (!option.empty()) return option;
  if (const char* env = std::getenv("EKB_DEVICES"); env && *env) return env;
  return fs::exists("ekb-devices.toml") ? "ekb-devices.toml" : "";
}

std::vector<runtime::RemoteDevice> read_devices(const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}:{}:{}: {}", path, e.source().begin.line, e.source().begin.column, e.description()));
  }
  std::vector<runtime::RemoteDevice> devices;
  for (const auto& [key, node] : doc) {
    if (key.str() != "devices" || !node.is_table()) fail_at(path, node, "expected only [devices.NAME] tables");
    for (const auto& [name, table] : *node.as_table()) {
      if (!table.is_table()) fail_at(path, table, fmt::format("device '{}' must be a table", name.str()));
      devices.push_back(parse_device(path, std::string(name.str()), *table.as_table()));
    }
  }
  return devices;
}

runtime::RemoteDevice find_device(const std::string& option, const std::string& name) {
  const std::string path = devices_file(option);
  if (path.empty())
    throw UsageError(fmt::format("--device {}: no devices file\n  hint: --devices FILE, $EKB_DEVICES or ./ekb-devices.toml "
                                 "(docs/DEVICES.md, \"Configuring a device\")", name));
  std::string known;
  for (runtime::RemoteDevice& d : read_devices(path)) {
    if (d.name == name) return d;
    known += (known.empty() ? "" : ", ") + d.name;
  }
  throw UsageError(fmt::format("{}: no device '{}' (devices: {})", path, name, known.empty() ? "none" : known));
}

void DeviceConnection::connect() {
  link = std::make_unique<runtime::DeviceLink>(runtime::device_agent_argv(device));
  const nlohmann::json& facts = link->device();
  if (identity.is_null()) {
    runtime::CpuTarget target;
    try {
      target = runtime::cpu_target(device.triple == runtime::build_triple() ? "" : device.triple);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("device {}: {}\n  hint: its `triple` in the devices file", device.name, e.what()));
    }
    if (const std::string why = runtime::unmet_requirement(target, facts); !why.empty())
      throw UsageError(fmt::format("device {} cannot run the code of {}: {}\n  hint: its `triple` in the devices file",
                                   device.name, device.triple.empty() ? "this host (no `triple`)" : device.triple, why));
    identity = facts;
  } else if (facts != identity) {
    throw UsageError(fmt::format("device {} answers again, but is not the same device: {} (was {})", device.name,
                                 facts.dump(), identity.dump()));
  }
}

bool DeviceConnection::reconnect(const std::string& why) {
  link.reset();
  fmt::print(stderr, "device {}: lost ({}); reconnecting for up to {:g} s\n", device.name, why, device.wait_s);
  const auto t0 = std::chrono::steady_clock::now();
  double pause = 1;
  for (;;) {
    try {
      connect();
      fmt::print(stderr, "device {}: back; the candidate in flight is evaluated again\n", device.name);
      return true;
    } catch (const runtime::DeviceLost& e) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (waited + pause > device.wait_s) {
        fmt::print(stderr, "device {}: still unreachable after {:.0f} s: {}\n", device.name, waited, e.what());
        return false;
      }
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 2, 30.0);
  }
}

std::string DeviceConnection::key() const {
  const nlohmann::json& f = identity;
  const std::string cpu = f.contains("cpu_model") && f["cpu_model"].is_string() ? ", " + f["cpu_model"].get<std::string>() : "";
  return fmt::format("{} ({}{}, {} cores, glibc {}; facts {})", device.name, f.value("machine", "?"), cpu,
                     f.value("cores", 0), f.value("glibc", "?"), runtime::content_key({f.dump()}).substr(0, 12));
}

void DeviceConnection::open() {
  try {
    connect();
  } catch (const runtime::DeviceLost& e) {
    throw UsageError(fmt::format("device {}: cannot connect: {}", device.name, e.what()));
  }
}

}  // namespace ekb::cli
