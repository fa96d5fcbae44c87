// How one workload's kernels sit in a tensor arena (runtime/tensor_arena.h), and the byte compare
// of the checks after a call: shared by the evaluator's session on this machine
// (eval/kernel_session.h) and a device's agent (`ekb-device serve`, src/device/serve.cpp), which
// lay out and check the same arena on either side of an ssh connection.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "runtime/tensor_arena.h"
#include "runtime/worker.h"

namespace ekb::runtime {

struct ArenaLayout {
  std::vector<BufferSpec> buffers;   // the tensors (inputs, then outputs), then each slot's scratch
  std::vector<SlotBinding> slots;    // each slot's ABI arguments: every tensor, the params, its scratch
  std::map<int, int> scratch_buffer; // slot -> its scratch buffer's index
};

// `tensors`: inputs then outputs, in ABI order; `declared_scratch`: slot -> the bytes its
// ekb_scratch_bytes declared (-1: none, so no scratch argument).
ArenaLayout lay_out_arena(std::vector<BufferSpec> tensors, const std::vector<int64_t>& params,
                          const std::map<int, int64_t>& declared_scratch);

// The first byte at which two buffers differ, or -1.
int64_t first_difference(const uint8_t* a, const uint8_t* b, size_t n);

}  // namespace ekb::runtime
