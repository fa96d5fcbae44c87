#include "device/serve.h"

#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "ir/diagnostics.h"
#include "ir/inputs.h"
#include "ir/instance.h"
#include "ir/parser.h"
#include "ir/tensor_data.h"
#include "runtime/arena_layout.h"
#include "runtime/compile_cache.h"
#include "runtime/cpu_calibration.h"
#include "runtime/framed_stream.h"
#include "runtime/paths.h"
#include "runtime/poison.h"
#include "runtime/worker.h"

namespace ekb::device {

namespace {

using json = nlohmann::json;
using runtime::ErrorKind;
namespace fs = std::filesystem;

struct Tensor {
  std::string name;
  ir::ScalarType type = ir::ScalarType::F32;
  size_t bytes = 0;
};

// One `open`: a workload's interface, its instance (for inputs from seeds) and one worker.
struct Session {
  std::unique_ptr<ir::Module> module;  // the instance points into it
  std::optional<ir::Instance> instance;
  std::vector<Tensor> inputs, outputs;
  std::vector<int64_t> params;
  double call_timeout_s = 10;
  std::unique_ptr<runtime::Worker> worker;
  std::unique_ptr<runtime::TensorArena> arena;
  std::map<int, int64_t> declared_scratch;
  std::map<int, int> scratch_buffer;
  std::vector<std::vector<uint8_t>> inputs_copy;  // what the arena's inputs must still hold
  bool inputs_valid = false;
  uint64_t calls = 0;

  ~Session() {
    worker.reset();  // the worker goes before the arena it maps
    arena.reset();
  }
};

json failure(ErrorKind kind, const std::string& message) {
  return {{"ok", false}, {"error", std::string(runtime::error_kind_name(kind))}, {"message", message}};
}

std::vector<Tensor> read_tensors(const json& list) {
  std::vector<Tensor> out;
  for (const json& t : list) {
    auto type = ir::parse_scalar_type(t.at("type").get<std::string>());
    if (!type) throw std::invalid_argument("unknown element type " + t.at("type").dump());
    out.push_back({t.at("name").get<std::string>(), *type, t.at("bytes").get<size_t>()});
  }
  return out;
}

class Agent {
 public:
  Agent(const ServeOptions& o, json info) : options_(o), info_(std::move(info)) {
    cache_ = o.cache_dir.empty() ? runtime::default_cache_dir() + "/device-artifacts" : o.cache_dir;
  }

  json handle(const runtime::framed::Frame& request, std::string& reply_blob) {
    const std::string op = request.header.value("op", "");
    try {
      if (op == "hello") return {{"ok", true}, {"protocol", runtime::framed::kServeProtocol}, {"device", info_}};
      if (op == "ping") return {{"ok", true}};
      if (op == "has") return {{"ok", true}, {"has", fs::exists(artifact_path(request.header.at("hash")))}};
      if (op == "put") return put(request);
      if (op == "calibrate") return calibrate(request.header);
      if (op == "open") return open(request.header);
      if (op == "close") {
        session_.reset();
        return {{"ok", true}};
      }
      if (!session_) return failure(ErrorKind::Internal, "'" + op + "' before open");
      if (op == "load") return load(request.header);
      if (op == "bind") return bind();
      if (op == "call") return call(request, reply_blob);
      return failure(ErrorKind::Internal, "unknown request '" + op + "'");
    } catch (const std::exception& e) {
      return failure(ErrorKind::Internal, op + ": " + e.what());
    }
  }

  const runtime::Worker* worker() const { return session_ ? session_->worker.get() : nullptr; }

 private:
  std::string artifact_path(const json& hash) const {
    const std::string h = hash.get<std::string>();
    if (h.empty() || h.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw std::invalid_argument("not a content hash: " + h);
    return cache_ + "/" + h;
  }

  // An artifact, stored under the hash of its bytes (checked: a corrupted upload is refused).
  json put(const runtime::framed::Frame& request) {
    const std::string path = artifact_path(request.header.at("hash"));
    if (runtime::content_key({request.blob}) != request.header.at("hash").get<std::string>())
      return failure(ErrorKind::Internal, "the artifact's bytes do not match its hash");
    runtime::write_file_atomically(path, request.blob);
    return {{"ok", true}};
  }

  // This device's roofline, measured here by the code `ekb calibrate` runs for the cpu backend;
  // the host keeps it under the device's name and facts.
  json calibrate(const json& h) {
    runtime::CpuCalibrationOptions options;
    options.quick = h.value("quick", false);
    options.threads = h.value("threads", 0);
    return {{"ok", true}, {"calibration", runtime::to_json(runtime::calibrate_cpu(options))}};
  }

  json open(const json& h) {
    session_.reset();
    auto s = std::make_unique<Session>();
    s->module = std::make_unique<ir::Module>(ir::parse_module(h.at("module").get<std::string>(), "<host>"));
    const ir::Workload* w = s->module->find_workload(h.at("workload").get<std::string>());
    if (!w) return failure(ErrorKind::Internal, "the module has no workload " + h.at("workload").dump());
    ir::Diagnostics diags("<host>");
    s->instance = ir::instantiate(*s->module, *w, diags);
    if (!s->instance) return failure(ErrorKind::Internal, "the workload does not bind here:\n" + diags.format());
    s->inputs = read_tensors(h.at("inputs"));
    s->outputs = read_tensors(h.at("outputs"));
    s->params = h.at("params").get<std::vector<int64_t>>();
    s->call_timeout_s = h.value("call_timeout_s", 10.0);
    const json& wo = h.at("worker");
    runtime::WorkerOptions options;
    options.backend = ir::target_from_name(wo.value("backend", "cpu"));
    options.exec_prefix = options_.worker_prefix;
    options.memory_limit_bytes = wo.value("memory_limit_bytes", options.memory_limit_bytes);
    options.file_size_limit_bytes = wo.value("file_size_limit_bytes", options.file_size_limit_bytes);
    options.drop_privileges = wo.value("drop_privileges", true);
    s->worker = std::make_unique<runtime::Worker>(options);
    json reply = {{"ok", true}, {"sandbox", s->worker->sandbox()}};
    session_ = std::move(s);
    return reply;
  }

  json load(const json& h) {
    Session& s = *session_;
    runtime::Artifact a;
    a.backend = h.value("backend", "cpu");
    a.path = artifact_path(h.at("hash"));
    a.key = h.at("hash").get<std::string>();
    if (!fs::exists(a.path)) return failure(ErrorKind::Internal, "no artifact " + a.key + " here (put it first)");
    int64_t scratch = -1;
    const int slot = h.at("slot").get<int>();
    runtime::WorkerStatus st = s.worker->load(slot, a, s.params, s.call_timeout_s, &scratch);
    if (!st.ok()) return failure(st.error, st.message);
    s.declared_scratch[slot] = scratch;
    return {{"ok", true}, {"scratch_bytes", scratch}};
  }

  json bind() {
    Session& s = *session_;
    std::vector<runtime::BufferSpec> tensors;
    for (const Tensor& t : s.inputs) tensors.push_back({t.name, runtime::BufferRole::Input, t.bytes});
    for (const Tensor& t : s.outputs) tensors.push_back({t.name, runtime::BufferRole::Output, t.bytes});
    runtime::ArenaLayout layout = runtime::lay_out_arena(std::move(tensors), s.params, s.declared_scratch);
    s.scratch_buffer = std::move(layout.scratch_buffer);
    s.arena = std::make_unique<runtime::TensorArena>(std::move(layout.buffers));
    s.inputs_valid = false;
    runtime::WorkerStatus st = s.worker->attach(*s.arena, layout.slots, s.call_timeout_s);
    if (!st.ok()) return failure(st.error, st.message);
    return {{"ok", true}};
  }

  // One call: inputs written (from a seed, as sent, or those already there), outputs poisoned, the
  // kernel run, then the checks that need no reference; the outputs go back in the reply's blob.
  json call(const runtime::framed::Frame& request, std::string& reply_blob) {
    Session& s = *session_;
    const json& h = request.header;
    if (!s.arena) return failure(ErrorKind::Internal, "call before bind");
    const int slot = h.at("slot").get<int>();
    const int pattern = h.value("poison", 0);
    const std::string inputs = h.at("inputs").get<std::string>();
    json reply = {{"ok", true}};
    if (inputs == "seed") {
      std::vector<ir::TensorData> data = ir::generate_inputs(*s.instance, h.at("seed").get<uint64_t>());
      if (data.size() != s.inputs.size()) return failure(ErrorKind::Internal, "the workload's inputs differ here");
      s.inputs_copy.clear();
      for (const ir::TensorData& t : data) s.inputs_copy.push_back(ir::to_bytes(t));
    } else if (inputs == "blob") {
      s.inputs_copy.clear();
      size_t at = 0;
      for (const Tensor& t : s.inputs) {
        if (at + t.bytes > request.blob.size()) return failure(ErrorKind::Internal, "the inputs sent are too short");
        s.inputs_copy.emplace_back(request.blob.begin() + at, request.blob.begin() + at + t.bytes);
        at += t.bytes;
      }
    } else if (inputs != "kept" || !s.inputs_valid) {
      return failure(ErrorKind::Internal, "no inputs for the call ('" + inputs + "')");
    }
    if (inputs != "kept") {
      json hashes = json::array();
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        const std::vector<uint8_t>& b = s.inputs_copy[i];
        if (b.size() != s.inputs[i].bytes) return failure(ErrorKind::Internal, "input '" + s.inputs[i].name + "' has another size here");
        std::memcpy(s.arena->data(i), b.data(), b.size());
        hashes.push_back(runtime::content_key({std::string_view(reinterpret_cast<const char*>(b.data()), b.size())}));
      }
      reply["input_hashes"] = hashes;
      s.inputs_valid = true;
    }

    // Every reply after the inputs were written says which inputs they were: the host checks a
    // seed's set before it believes any verdict on it.
    auto with_hashes = [&reply](json f) {
      if (reply.contains("input_hashes")) f["input_hashes"] = reply["input_hashes"];
      return f;
    };
    const size_t n_in = s.inputs.size();
    for (size_t o = 0; o < s.outputs.size(); ++o)
      runtime::fill_poison(s.outputs[o].type, pattern, s.arena->data(n_in + o),
                           s.outputs[o].bytes / static_cast<size_t>(ir::byte_size(s.outputs[o].type)));
    if (auto it = s.scratch_buffer.find(slot); it != s.scratch_buffer.end())
      runtime::fill_scratch_junk(s.arena->data(it->second), s.arena->placement(it->second).spec.bytes, s.calls);
    ++s.calls;
    int64_t ns = 0;
    runtime::WorkerStatus st = s.worker->run(slot, h.value("flush", false), h.value("scrub_bytes", size_t{0}),
                                             s.call_timeout_s, &ns);
    if (!st.ok()) return with_hashes(failure(st.error, st.message));
    reply["ns"] = ns;

    if (auto damaged = s.arena->find_damaged_canary()) {
      s.inputs_valid = false;
      s.arena->fill_canaries();
      return with_hashes(failure(ErrorKind::OutOfBounds, "wrote " + s.arena->describe(*damaged)));
    }
    for (size_t i = 0; i < n_in; ++i) {
      const int64_t at = runtime::first_difference(s.arena->data(i), s.inputs_copy[i].data(), s.inputs_copy[i].size());
      if (at < 0) continue;
      s.inputs_valid = false;
      json f = failure(ErrorKind::InputModified, "input '" + s.inputs[i].name + "' was modified");
      f["input"] = i;
      f["byte"] = at;  // the host names the element with its shape
      return with_hashes(f);
    }
    // The outputs as returned, then (with a window) re-poisoned and watched for late writes.
    for (size_t o = 0; o < s.outputs.size(); ++o)
      reply_blob.append(reinterpret_cast<const char*>(s.arena->data(n_in + o)), s.outputs[o].bytes);
    const double window_ms = h.value("async_window_ms", 0.0);
    if (window_ms > 0) {
      for (size_t o = 0; o < s.outputs.size(); ++o)
        runtime::fill_poison(s.outputs[o].type, pattern, s.arena->data(n_in + o),
                             s.outputs[o].bytes / static_cast<size_t>(ir::byte_size(s.outputs[o].type)));
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(window_ms));
      for (size_t o = 0; o < s.outputs.size(); ++o) {
        std::vector<uint8_t> poison(s.outputs[o].bytes);
        runtime::fill_poison(s.outputs[o].type, pattern, poison.data(),
                             poison.size() / static_cast<size_t>(ir::byte_size(s.outputs[o].type)));
        const int64_t at = runtime::first_difference(s.arena->data(n_in + o), poison.data(), poison.size());
        if (at < 0) continue;
        reply_blob.clear();
        json f = failure(ErrorKind::AsyncWrite, "output '" + s.outputs[o].name + "' was written after ekb_main returned");
        f["output"] = o;
        f["byte"] = at;
        return with_hashes(f);
      }
      if (auto damaged = s.arena->find_damaged_canary()) {
        reply_blob.clear();
        return with_hashes(failure(ErrorKind::AsyncWrite, "wrote " + s.arena->describe(*damaged) + " after ekb_main returned"));
      }
    }
    return reply;
  }

  ServeOptions options_;
  json info_;
  std::string cache_;
  std::unique_ptr<Session> session_;
};

}  // namespace

int serve(const ServeOptions& options, const nlohmann::json& device_info) {
  // A pipe to a connection that went away must end this process through a failed write, not a
  // signal; the workers it starts reset nothing of this (they never write to a pipe).
  ::signal(SIGPIPE, SIG_IGN);
  Agent agent(options, device_info);
  for (;;) {
    runtime::framed::Frame request;
    const runtime::framed::ReadStatus rs = runtime::framed::read_frame(options.in_fd, request, -1);
    if (rs == runtime::framed::ReadStatus::Closed) return 0;
    if (rs != runtime::framed::ReadStatus::Ok) return 1;
    std::string blob;
    json reply = agent.handle(request, blob);
    // Whether the session's worker still runs: a crash ends it, and the host's session says so.
    if (const runtime::Worker* w = agent.worker()) reply["alive"] = w->alive();
    if (request.header.contains("id")) reply["id"] = request.header["id"];
    if (!runtime::framed::write_frame(options.out_fd, reply, blob)) return 1;
  }
}

}  // namespace ekb::device
