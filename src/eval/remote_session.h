// A KernelSession whose worker runs on a remote device, behind `ekb-device serve`
// (runtime/device_link.h, docs/DEVICES.md). The device writes each call's inputs (a random trial's
// from its seed, ir/inputs.h, and answers their hashes, which are checked here against this host's
// bytes; any other set as sent), poisons the outputs, runs the kernel and checks canaries, inputs
// and the window after the call; the outputs come back and are compared here with this host's
// reference, as LocalKernelSession compares them.
//
// The timing loop (eval/timing.h) runs here too, one request per call: times are measured by the
// worker on the device, so the round trips are not in them, only in the wall time.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "eval/kernel_session.h"
#include "runtime/device_link.h"

namespace ekb::eval {

class RemoteKernelSession final : public KernelSession {
 public:
  // Opens a session (a worker on the device for this workload). Throws runtime::DeviceLost when
  // the device is gone, std::runtime_error when it refuses.
  RemoteKernelSession(runtime::DeviceLink& link, WorkloadReference& reference, const SessionOptions& options);
  ~RemoteKernelSession() override;

  CallResult load(int slot, const runtime::Artifact& artifact) override;
  CallResult bind() override;
  CallResult call(int slot, const Trial& trial, const CallSpec& spec) override;
  void write_inputs(const InputBuffers& inputs) override;
  void write_fresh_inputs(const FreshInputs& fresh, const FreshInputs::Draw& draw, InputBuffers& copy) override;
  CallResult call_on(int slot, const CallSpec& spec, InputBuffers* outputs) override;
  const uint8_t* output_in_arena(size_t o) const override { return outputs_[o].data(); }
  bool alive() const override { return alive_ && !link_.lost(); }
  bool device_lost() const override { return link_.lost(); }

 private:
  // Sends one request; a broken link becomes a Device error, a refusal the kind the device names.
  CallResult request(nlohmann::json header, std::string_view blob, runtime::framed::Frame* reply);
  // One `call`, with the inputs as `mode` says ("seed", "blob": `inputs_blob_`, "kept").
  CallResult remote_call(int slot, const CallSpec& spec, const std::string& mode, uint64_t seed);

  runtime::DeviceLink& link_;
  WorkloadReference& ref_;
  SessionOptions options_;
  double timeout_s_;
  bool alive_ = true;
  std::string inputs_blob_;                 // the inputs the next call sends
  bool inputs_pending_ = false;             // inputs_blob_ is yet to be sent
  const InputBuffers* inputs_on_device_ = nullptr;  // the trial whose inputs the device's arena holds
  std::vector<std::string> input_hashes_;   // of the inputs the device reported for the last call
  std::vector<std::vector<uint8_t>> outputs_;  // the last call's outputs
};

// A SessionFactory (eval/kernel_session.h) for EvalOptions::session: every candidate's session on
// the device behind the link `link` holds at the time (a reconnection replaces it); `link` must
// outlive the evaluations.
SessionFactory remote_session_factory(const std::unique_ptr<runtime::DeviceLink>& link);

}  // namespace ekb::eval
