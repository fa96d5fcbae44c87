#include "runtime/tensor_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ekb::runtime {

namespace {
size_t round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }
size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }
// Canary bytes vary with their position so that a kernel writing a constant (zeros, a fill value)
// past its buffer changes at least one of them.
uint8_t canary_byte(size_t offset) { return static_cast<uint8_t>((offset * 131u + 0x5Bu) ^ (offset >> 8)); }
}  // namespace

std::string_view buffer_role_name(BufferRole r) {
  switch (r) {
    case BufferRole::Input: return "input";
    case BufferRole::Output: return "output";
    case BufferRole::Scratch: return "scratch";
  }
  return "buffer";
}

size_t TensorArena::guard_bytes() { return std::max<size_t>(64 << 10, page_size()); }

TensorArena::TensorArena(std::vector<BufferSpec> buffers) {
  const size_t page = page_size(), guard = guard_bytes();
  size_t at = guard;
  for (BufferSpec& spec : buffers) {
    BufferPlacement p;
    size_t data_bytes = round_up(std::max<size_t>(spec.bytes, 1), 64);
    p.region_begin = at;
    p.region_end = at + round_up(data_bytes, page);
    p.data_offset = p.region_end - data_bytes;
    p.spec = std::move(spec);
    at = p.region_end + guard;
    buffers_.push_back(std::move(p));
  }
  size_ = at;
  fd_ = static_cast<int>(::memfd_create("ekb-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (fd_ < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0 ||
      ::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    int e = errno;
    ::close(fd_);
    throw std::runtime_error(std::string("cannot size or seal the tensor arena: ") + std::strerror(e));
  }
  void* m = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (m == MAP_FAILED) {
    int e = errno;
    ::close(fd_);
    throw std::runtime_error("cannot map a tensor arena of " + std::to_string(size_) +
                             " bytes: " + std::strerror(e));
  }
  base_ = static_cast<uint8_t*>(m);
  fill_canaries();
}

TensorArena::~TensorArena() {
  if (base_) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void TensorArena::fill_canaries() {
  for (const BufferPlacement& p : buffers_) {
    for (size_t o = p.region_begin; o < p.data_offset; ++o) base_[o] = canary_byte(o);
    for (size_t o = p.data_offset + p.spec.bytes; o < p.region_end; ++o) base_[o] = canary_byte(o);
  }
}

std::optional<AddressInfo> TensorArena::find_damaged_canary() const {
  for (size_t b = 0; b < buffers_.size(); ++b) {
    const BufferPlacement& p = buffers_[b];
    // Nearest to the data first: the likeliest first damaged byte of an overrun or underrun.
    for (size_t o = p.data_offset + p.spec.bytes; o < p.region_end; ++o)
      if (base_[o] != canary_byte(o))
        return AddressInfo{AddressInfo::Kind::Slack, static_cast<int>(b),
                           static_cast<int64_t>(o) - static_cast<int64_t>(p.data_offset)};
    for (size_t o = p.data_offset; o-- > p.region_begin;)
      if (base_[o] != canary_byte(o))
        return AddressInfo{AddressInfo::Kind::Slack, static_cast<int>(b),
                           static_cast<int64_t>(o) - static_cast<int64_t>(p.data_offset)};
  }
  return std::nullopt;
}

AddressInfo TensorArena::classify(uint64_t offset) const {
  if (offset >= size_) return {};
  int before = -1;
  for (size_t b = 0; b < buffers_.size(); ++b) {
    const BufferPlacement& p = buffers_[b];
    int64_t rel = static_cast<int64_t>(offset) - static_cast<int64_t>(p.data_offset);
    if (offset < p.region_begin) {
      // In the gap before this region: attribute it to the nearer buffer.
      if (before >= 0) {
        const BufferPlacement& q = buffers_[before];
        if (offset - q.region_end < p.region_begin - offset)
          return {AddressInfo::Kind::Guard, before,
                  static_cast<int64_t>(offset) - static_cast<int64_t>(q.data_offset)};
      }
      return {AddressInfo::Kind::Guard, static_cast<int>(b), rel};
    }
    if (offset < p.region_end) {
      bool in_data = offset >= p.data_offset && offset < p.data_offset + p.spec.bytes;
      return {in_data ? AddressInfo::Kind::Data : AddressInfo::Kind::Slack, static_cast<int>(b), rel};
    }
    before = static_cast<int>(b);
  }
  if (before >= 0)
    return {AddressInfo::Kind::Guard, before,
            static_cast<int64_t>(offset) - static_cast<int64_t>(buffers_[before].data_offset)};
  return {};
}

std::string TensorArena::describe(const AddressInfo& a) const {
  if (a.kind == AddressInfo::Kind::Outside || a.buffer < 0) return "outside the kernel's buffers";
  const BufferSpec& s = buffers_[a.buffer].spec;
  std::string who = std::string(buffer_role_name(s.role)) + " '" + s.name + "'";
  if (a.kind == AddressInfo::Kind::Data) return "inside " + who + " (byte " + std::to_string(a.offset) + ")";
  // Counted so that the first byte after the end (or before the start) is "1 byte".
  auto bytes = [](int64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); };
  if (a.offset < 0) return bytes(-a.offset) + " before the start of " + who;
  return bytes(a.offset - static_cast<int64_t>(s.bytes) + 1) + " past the end of " + who + " (" +
         bytes(static_cast<int64_t>(s.bytes)) + ")";
}

}  // namespace ekb::runtime
