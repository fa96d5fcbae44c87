// The kernel's buffers, in one shared-memory file (memfd) that the parent and the worker both map:
// the parent writes inputs and poison and reads outputs in place, so a large tensor costs no copy
// between the processes.
//
// Layout: every buffer gets its own region between guard gaps that are never mapped accessible
//
//   | guard | slack+canary | data (64-byte aligned) | canary (< 64 B) | guard | slack ... | guard |
//
// Data sits at the END of its region, so a small overrun lands in the canary bytes (checked after
// every call) and a larger one in the guard gap, which faults in the worker; a fault address inside
// a guard gap or slack is reported as an out-of-bounds access of the neighbouring buffer. The
// worker maps input regions read-only, so a write to an input faults too (and is named as such).
// The file is sealed against resizing: a candidate cannot shrink it under the parent's mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ekb::runtime {

enum class BufferRole { Input, Output, Scratch };

struct BufferSpec {
  std::string name;  // tensor name, or "scratch"
  BufferRole role = BufferRole::Input;
  size_t bytes = 0;
};

struct BufferPlacement {
  BufferSpec spec;
  size_t region_begin = 0;  // page aligned; [region_begin, region_end) is mapped accessible
  size_t region_end = 0;
  size_t data_offset = 0;   // 64-byte aligned; the data ends at most 63 bytes before region_end
};

// Where an address of the arena falls.
struct AddressInfo {
  enum class Kind { Outside, Data, Slack, Guard } kind = Kind::Outside;
  int buffer = -1;       // Data, Slack: that buffer; Guard: the buffer before the gap (-1: none)
  int64_t offset = 0;    // byte offset from the buffer's data start (negative before it)
};

class TensorArena {
 public:
  // Creates the memfd with one region per buffer and maps it read-write in this process; canaries
  // are filled. Throws std::runtime_error when shared memory cannot be created.
  explicit TensorArena(std::vector<BufferSpec> buffers);
  ~TensorArena();
  TensorArena(const TensorArena&) = delete;
  TensorArena& operator=(const TensorArena&) = delete;

  int fd() const { return fd_; }
  size_t size() const { return size_; }
  size_t num_buffers() const { return buffers_.size(); }
  const BufferPlacement& placement(size_t i) const { return buffers_[i]; }
  uint8_t* data(size_t i) const { return base_ + buffers_[i].data_offset; }

  // Rewrites every canary byte.
  void fill_canaries();
  // The first buffer whose canary bytes changed, and where (offset relative to its data), if any.
  std::optional<AddressInfo> find_damaged_canary() const;
  AddressInfo classify(uint64_t offset) const;
  // "3 bytes past the end of output 'y'", "inside input 'x' (byte 16)", for messages.
  std::string describe(const AddressInfo& a) const;

  static size_t guard_bytes();  // the gap between regions (64 KiB, or one page if larger)

 private:
  std::vector<BufferPlacement> buffers_;
  int fd_ = -1;
  size_t size_ = 0;
  uint8_t* base_ = nullptr;
};

std::string_view buffer_role_name(BufferRole r);  // "input", "output", "scratch"

}  // namespace ekb::runtime
