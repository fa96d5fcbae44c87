#include "runtime/arena_layout.h"

#include <cstring>
#include <string>
#include <utility>

namespace ekb::runtime {

ArenaLayout lay_out_arena(std::vector<BufferSpec> tensors, const std::vector<int64_t>& params,
                          const std::map<int, int64_t>& declared_scratch) {
  ArenaLayout layout;
  const size_t n_tensors = tensors.size();
  layout.buffers = std::move(tensors);
  for (const auto& [slot, scratch] : declared_scratch) {
    SlotBinding b;
    b.slot = slot;
    for (size_t i = 0; i < n_tensors; ++i) b.args.push_back({static_cast<int>(i), 0});
    for (int64_t p : params) b.args.push_back({-1, p});
    if (scratch >= 0) {
      layout.scratch_buffer[slot] = static_cast<int>(layout.buffers.size());
      b.args.push_back({static_cast<int>(layout.buffers.size()), 0});
      layout.buffers.push_back(
          {"scratch of slot " + std::to_string(slot), BufferRole::Scratch, static_cast<size_t>(scratch)});
    }
    layout.slots.push_back(std::move(b));
  }
  return layout;
}

int64_t first_difference(const uint8_t* a, const uint8_t* b, size_t n) {
  if (std::memcmp(a, b, n) == 0) return -1;
  for (size_t k = 0; k < n; ++k)
    if (a[k] != b[k]) return static_cast<int64_t>(k);
  return -1;
}

}  // namespace ekb::runtime
