#include "eval/remote_session.h"

#include "eval/output_check.h"
#include "ir/printer.h"
#include "runtime/compile_cache.h"

namespace ekb::eval {

namespace {

// Slack of a request's deadline over the device's own limit on the call: ssh, and an emulator.
constexpr double kRequestSlack_s = 60;

nlohmann::json tensors_json(const std::vector<const ir::TensorInstance*>& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto* t : tensors)
    list.push_back({{"name", t->decl->name}, {"type", std::string(ir::scalar_type_name(t->type))}, {"bytes", t->num_bytes()}});
  return list;
}

std::string hash_of(const std::vector<uint8_t>& bytes) {
  return runtime::content_key({std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
}

}  // namespace

RemoteKernelSession::RemoteKernelSession(runtime::DeviceLink& link, WorkloadReference& reference,
                                         const SessionOptions& options)
    : link_(link), ref_(reference), options_(options), timeout_s_(options.call_timeout_s + kRequestSlack_s) {
  const ir::Instance& inst = ref_.instance();
  const KernelInterface& k = ref_.interface();
  nlohmann::json open = {
      {"op", "open"},
      {"module", ir::print_module(*inst.module)},
      {"workload", inst.workload->name},
      {"inputs", tensors_json(k.inputs)},
      {"outputs", tensors_json(k.outputs)},
      {"params", k.params},
      {"call_timeout_s", options.call_timeout_s},
      {"worker",
       {{"backend", std::string(ir::target_name(options.worker.backend))},
        {"memory_limit_bytes", options.worker.memory_limit_bytes},
        {"file_size_limit_bytes", options.worker.file_size_limit_bytes},
        {"drop_privileges", options.worker.drop_privileges}}}};
  runtime::framed::Frame reply = link_.request(open, {}, options.worker.start_timeout_s + kRequestSlack_s);
  if (!reply.header.value("ok", false))
    throw std::runtime_error("the device could not start a worker: " + reply.header.value("message", std::string()));
}

RemoteKernelSession::~RemoteKernelSession() {
  if (link_.lost()) return;
  try {
    link_.request({{"op", "close"}}, {}, timeout_s_);
  } catch (const runtime::DeviceLost&) {
    // the next request notices: the link is lost
  }
}

CallResult RemoteKernelSession::request(nlohmann::json header, std::string_view blob, runtime::framed::Frame* reply) {
  try {
    *reply = link_.request(std::move(header), blob, timeout_s_);
  } catch (const runtime::DeviceLost& e) {
    alive_ = false;
    reply->header = nlohmann::json::object();  // no reply: nothing for the caller to read
    reply->blob.clear();
    return {ErrorKind::Device, e.what()};
  }
  const nlohmann::json& h = reply->header;
  if (h.contains("alive")) alive_ = h["alive"].get<bool>();
  if (h.value("ok", false)) return {};
  const ErrorKind kind = runtime::parse_error_kind(h.value("error", "internal")).value_or(ErrorKind::Internal);
  return {kind == ErrorKind::None ? ErrorKind::Internal : kind, h.value("message", std::string("the device failed"))};
}

CallResult RemoteKernelSession::load(int slot, const runtime::Artifact& artifact) {
  std::string hash;
  try {
    hash = link_.ensure_artifact(artifact, timeout_s_);
  } catch (const runtime::DeviceLost& e) {
    alive_ = false;
    return {ErrorKind::Device, e.what()};
  } catch (const std::exception& e) {
    return {ErrorKind::Internal, e.what()};
  }
  runtime::framed::Frame reply;
  CallResult r = request({{"op", "load"}, {"slot", slot}, {"hash", hash}, {"backend", artifact.backend}}, {}, &reply);
  if (!r.ok()) return r;
  const int64_t scratch = reply.header.value("scratch_bytes", int64_t{-1});
  const uint64_t limit = options_.worker.memory_limit_bytes;  // 0: none
  if (scratch > 0 && limit && static_cast<uint64_t>(scratch) > limit / 2)
    return {ErrorKind::Memory, "ekb_scratch_bytes declares " + std::to_string(scratch) +
                                   " bytes of scratch memory, more than half the worker's memory limit"};
  return {};
}

CallResult RemoteKernelSession::bind() {
  runtime::framed::Frame reply;
  inputs_on_device_ = nullptr;
  return request({{"op", "bind"}}, {}, &reply);
}

CallResult RemoteKernelSession::remote_call(int slot, const CallSpec& spec, const std::string& mode, uint64_t seed) {
  const KernelInterface& k = ref_.interface();
  nlohmann::json header = {{"op", "call"},
                           {"slot", slot},
                           {"inputs", mode},
                           {"poison", spec.poison_pattern},
                           {"flush", spec.flush},
                           {"scrub_bytes", spec.scrub_bytes},
                           {"async_window_ms", spec.async_window_ms}};
  if (mode == "seed") header["seed"] = seed;
  runtime::framed::Frame reply;
  CallResult r = request(std::move(header), mode == "blob" ? std::string_view(inputs_blob_) : std::string_view(), &reply);
  if (mode != "kept") inputs_pending_ = false;
  input_hashes_ = reply.header.value("input_hashes", std::vector<std::string>{});
  if (!r.ok()) {
    // The device names the input or output and the byte; the element's index needs the shape.
    const nlohmann::json& h = reply.header;
    if (r.error == ErrorKind::InputModified || r.error == ErrorKind::OutOfBounds) inputs_on_device_ = nullptr;
    if (r.error == ErrorKind::InputModified && h.contains("input")) {
      const ir::TensorInstance* t = k.inputs.at(h["input"].get<size_t>());
      r.message = "input '" + t->decl->name + "' was modified at " +
                  format_index(t->shape, h["byte"].get<int64_t>() / ir::byte_size(t->type)) + " (inputs are read-only)";
    } else if (r.error == ErrorKind::AsyncWrite && h.contains("output")) {
      const ir::TensorInstance* t = k.outputs.at(h["output"].get<size_t>());
      r.message = "output '" + t->decl->name + "' at " +
                  format_index(t->shape, h["byte"].get<int64_t>() / ir::byte_size(t->type)) +
                  " was written after ekb_main returned (a thread still running?)";
    }
    return r;
  }
  outputs_.assign(k.outputs.size(), {});
  size_t at = 0;
  for (size_t o = 0; o < k.outputs.size(); ++o) {
    const size_t n = static_cast<size_t>(k.outputs[o]->num_bytes());
    if (at + n > reply.blob.size()) return {ErrorKind::Internal, "the device sent fewer output bytes than the outputs hold"};
    outputs_[o].assign(reply.blob.begin() + at, reply.blob.begin() + at + n);
    at += n;
  }
  r.ms = static_cast<double>(reply.header.value("ns", int64_t{0})) * 1e-6;
  return r;
}

CallResult RemoteKernelSession::call(int slot, const Trial& trial, const CallSpec& spec) {
  // A random trial's inputs are made on the device from its seed (only the seed travels); other
  // trials' (edge values, branch trials: derived here from the compute layer) are sent.
  std::string mode;
  if (inputs_on_device_ == &trial.inputs) {
    mode = inputs_pending_ ? "blob" : "kept";
  } else if (trial.kind == "random") {
    mode = "seed";
  } else {
    write_inputs(trial.inputs);
    mode = "blob";
  }
  CallResult r = remote_call(slot, spec, mode, trial.seed);
  // The device made a seed's inputs itself: no verdict on them counts unless they are this host's
  // (a failure before the inputs were written has no hashes, and says nothing of them).
  if (mode == "seed" && (r.ok() || !input_hashes_.empty())) {
    for (size_t i = 0; i < trial.inputs.size(); ++i)
      if (i >= input_hashes_.size() || input_hashes_[i] != hash_of(trial.inputs[i]))
        return {ErrorKind::Internal, "the device made other inputs from seed " + std::to_string(trial.seed) +
                                         " than this host (input '" + ref_.interface().inputs[i]->decl->name +
                                         "'): ir/inputs.h's generator differs there"};
  }
  if (!r.ok()) return r;
  inputs_on_device_ = &trial.inputs;
  const double ms = r.ms;
  std::vector<const uint8_t*> outputs;
  for (const auto& o : outputs_) outputs.push_back(o.data());
  r = compare_with_reference(ref_.interface(), outputs, trial, spec.poison_pattern);
  r.ms = ms;
  return r;
}

void RemoteKernelSession::write_inputs(const InputBuffers& inputs) {
  inputs_blob_.clear();
  for (const auto& b : inputs) inputs_blob_.append(reinterpret_cast<const char*>(b.data()), b.size());
  inputs_pending_ = true;
  inputs_on_device_ = &inputs;  // once the next call has sent them
}

void RemoteKernelSession::write_fresh_inputs(const FreshInputs& fresh, const FreshInputs::Draw& draw,
                                             InputBuffers& copy) {
  fresh.write(draw, copy);
  write_inputs(copy);
}

CallResult RemoteKernelSession::call_on(int slot, const CallSpec& spec, InputBuffers* outputs) {
  if (!inputs_on_device_) return {ErrorKind::Internal, "call_on before write_inputs"};
  CallResult r = remote_call(slot, spec, inputs_pending_ ? "blob" : "kept", 0);
  if (r.ok() && outputs) *outputs = outputs_;
  return r;
}

SessionFactory remote_session_factory(const std::unique_ptr<runtime::DeviceLink>& link) {
  return [&link](WorkloadReference& reference, const SessionOptions& options) -> std::unique_ptr<KernelSession> {
    if (!link) throw runtime::DeviceLost("not connected to the device");
    return std::make_unique<RemoteKernelSession>(*link, reference, options);
  };
}

}  // namespace ekb::eval
