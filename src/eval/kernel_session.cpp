#include "eval/kernel_session.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "eval/output_check.h"
#include "eval/poison.h"
#include "runtime/arena_layout.h"

namespace ekb::eval {

using runtime::first_difference;

LocalKernelSession::LocalKernelSession(WorkloadReference& reference, const SessionOptions& options)
    : ref_(reference), options_(options), worker_(std::make_unique<runtime::Worker>(options.worker)) {}

LocalKernelSession::~LocalKernelSession() {
  worker_.reset();  // the worker goes before the arena it maps
  arena_.reset();
}

CallResult LocalKernelSession::load(int slot, const runtime::Artifact& artifact) {
  int64_t scratch = -1;
  runtime::WorkerStatus s = worker_->load(slot, artifact, ref_.interface().params, options_.call_timeout_s, &scratch);
  if (!s.ok()) return {s.error, s.message};
  const uint64_t limit = options_.worker.memory_limit_bytes;  // 0: none
  if (scratch > 0 && limit && static_cast<uint64_t>(scratch) > limit / 2)
    return {ErrorKind::Memory, "ekb_scratch_bytes declares " + std::to_string(scratch) +
                                   " bytes of scratch memory, more than half the worker's memory limit"};
  declared_scratch_[slot] = scratch;
  return {};
}

CallResult LocalKernelSession::bind() {
  const KernelInterface& k = ref_.interface();
  std::vector<runtime::BufferSpec> tensors;
  for (const auto* t : k.inputs)
    tensors.push_back({t->decl->name, runtime::BufferRole::Input, static_cast<size_t>(t->num_bytes())});
  for (const auto* t : k.outputs)
    tensors.push_back({t->decl->name, runtime::BufferRole::Output, static_cast<size_t>(t->num_bytes())});
  runtime::ArenaLayout layout = runtime::lay_out_arena(std::move(tensors), k.params, declared_scratch_);
  scratch_buffer_ = std::move(layout.scratch_buffer);
  std::vector<runtime::BufferSpec> buffers = std::move(layout.buffers);
  std::vector<runtime::SlotBinding> slots = std::move(layout.slots);
  try {
    arena_ = std::make_unique<runtime::TensorArena>(std::move(buffers));
  } catch (const std::exception& e) {
    return {ErrorKind::Internal, e.what()};
  }
  inputs_in_arena_ = nullptr;
  runtime::WorkerStatus s = worker_->attach(*arena_, slots, options_.call_timeout_s);
  if (!s.ok()) return {s.error, s.message};
  return {};
}

void LocalKernelSession::write_inputs(const InputBuffers& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) std::memcpy(arena_->data(i), inputs[i].data(), inputs[i].size());
  inputs_in_arena_ = &inputs;
}

void LocalKernelSession::write_fresh_inputs(const FreshInputs& fresh, const FreshInputs::Draw& draw, InputBuffers& copy) {
  std::vector<uint8_t*> dest(ref_.interface().inputs.size());
  for (size_t i = 0; i < dest.size(); ++i) dest[i] = arena_->data(i);
  fresh.write(draw, dest, &copy);
  inputs_in_arena_ = &copy;
}

CallResult LocalKernelSession::run(int slot, const CallSpec& spec) {
  const KernelInterface& k = ref_.interface();
  for (size_t o = 0; o < k.outputs.size(); ++o)
    fill_poison(k.outputs[o]->type, spec.poison_pattern, arena_->data(k.inputs.size() + o),
                static_cast<size_t>(k.outputs[o]->num_elements()));
  if (auto it = scratch_buffer_.find(slot); it != scratch_buffer_.end())
    fill_scratch_junk(arena_->data(it->second), arena_->placement(it->second).spec.bytes, calls_);
  ++calls_;

  int64_t ns = 0;
  runtime::WorkerStatus s = worker_->run(slot, spec.flush, spec.scrub_bytes, options_.call_timeout_s, &ns);
  if (!s.ok()) return {s.error, s.message};
  CallResult r;
  r.ms = static_cast<double>(ns) * 1e-6;
  return r;
}

CallResult LocalKernelSession::call(int slot, const Trial& trial, const CallSpec& spec) {
  if (!arena_) return {ErrorKind::Internal, "call before bind"};
  if (inputs_in_arena_ != &trial.inputs) write_inputs(trial.inputs);
  CallResult r = run(slot, spec);
  if (!r.ok()) return r;
  const double ms = r.ms;
  r = check_after_call(slot, &trial, spec, nullptr);
  r.ms = ms;
  return r;
}

CallResult LocalKernelSession::call_on(int slot, const CallSpec& spec, InputBuffers* outputs) {
  if (!arena_) return {ErrorKind::Internal, "call before bind"};
  if (!inputs_in_arena_) return {ErrorKind::Internal, "call_on before write_inputs"};
  CallResult r = run(slot, spec);
  if (!r.ok()) return r;
  const double ms = r.ms;
  r = check_after_call(slot, nullptr, spec, outputs);
  r.ms = ms;
  return r;
}

CallResult LocalKernelSession::check_after_call(int slot, const Trial* trial, const CallSpec& spec, InputBuffers* copies) {
  const KernelInterface& k = ref_.interface();
  const size_t n_in = k.inputs.size();

  if (auto damaged = arena_->find_damaged_canary()) {
    inputs_in_arena_ = nullptr;
    arena_->fill_canaries();
    return {ErrorKind::OutOfBounds, "wrote " + arena_->describe(*damaged)};
  }
  const InputBuffers& inputs = *inputs_in_arena_;
  for (size_t i = 0; i < n_in; ++i) {
    int64_t at = first_difference(arena_->data(i), inputs[i].data(), inputs[i].size());
    if (at < 0) continue;
    inputs_in_arena_ = nullptr;
    const ir::TensorInstance* t = k.inputs[i];
    return {ErrorKind::InputModified,
            "input '" + t->decl->name + "' was modified at " +
                format_index(t->shape, at / ir::byte_size(t->type)) + " (inputs are read-only)"};
  }

  // What to compare: the outputs in place, or a snapshot taken right after the call when the
  // window after it is watched (re-poisoned outputs must then stay untouched).
  std::vector<const uint8_t*> outputs(k.outputs.size());
  std::vector<std::vector<uint8_t>> snapshot;
  for (size_t o = 0; o < k.outputs.size(); ++o) outputs[o] = arena_->data(n_in + o);
  if (spec.async_window_ms > 0) {
    for (size_t o = 0; o < k.outputs.size(); ++o) {
      const ir::TensorInstance* t = k.outputs[o];
      snapshot.emplace_back(outputs[o], outputs[o] + t->num_bytes());
      fill_poison(t->type, spec.poison_pattern, arena_->data(n_in + o), static_cast<size_t>(t->num_elements()));
    }
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(spec.async_window_ms));
    for (size_t o = 0; o < k.outputs.size(); ++o) {
      const ir::TensorInstance* t = k.outputs[o];
      std::vector<uint8_t> poison(static_cast<size_t>(t->num_bytes()));
      fill_poison(t->type, spec.poison_pattern, poison.data(), static_cast<size_t>(t->num_elements()));
      int64_t at = first_difference(arena_->data(n_in + o), poison.data(), poison.size());
      if (at >= 0)
        return {ErrorKind::AsyncWrite,
                "output '" + t->decl->name + "' at " + format_index(t->shape, at / ir::byte_size(t->type)) +
                    " was written after ekb_main returned (a thread still running?)"};
      outputs[o] = snapshot[o].data();
    }
    if (auto damaged = arena_->find_damaged_canary())
      return {ErrorKind::AsyncWrite, "wrote " + arena_->describe(*damaged) + " after ekb_main returned"};
  }

  if (!trial) {
    if (!copies) return {};
    copies->resize(outputs.size());
    for (size_t o = 0; o < outputs.size(); ++o)
      (*copies)[o].assign(outputs[o], outputs[o] + k.outputs[o]->num_bytes());
    return {};
  }
  return compare_with_reference(k, outputs, *trial, spec.poison_pattern);
}

CallResult compare_with_reference(const KernelInterface& k, const std::vector<const uint8_t*>& outputs,
                                  const Trial& trial, int poison_pattern) {
  CallResult r;
  for (size_t o = 0; o < k.outputs.size(); ++o) {
    OutputVerdict v = check_output(k.outputs[o]->decl->name, outputs[o], trial.expected[o], trial.rms[o], poison_pattern);
    r.max_abs_error = std::max(r.max_abs_error, v.max_abs_error);
    r.max_error_ratio = std::max(r.max_error_ratio, v.max_error_ratio);
    if (v.error != ErrorKind::None && r.ok()) {
      r.error = v.error;
      r.message = v.message;
    }
  }
  return r;
}

}  // namespace ekb::eval
