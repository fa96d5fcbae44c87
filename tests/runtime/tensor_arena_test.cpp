#include "runtime/tensor_arena.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace ekb::runtime {
namespace {

TEST(TensorArena, PlacesDataAlignedAtTheEndOfGuardedRegions) {
  TensorArena a({{"x", BufferRole::Input, 100}, {"y", BufferRole::Output, 4096}, {"s", BufferRole::Scratch, 0}});
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  ASSERT_EQ(a.num_buffers(), 3u);
  for (size_t b = 0; b < a.num_buffers(); ++b) {
    const BufferPlacement& p = a.placement(b);
    EXPECT_EQ(p.data_offset % 64, 0u);
    EXPECT_EQ(p.region_begin % page, 0u);
    EXPECT_EQ(p.region_end % page, 0u);
    EXPECT_LE(p.data_offset + p.spec.bytes, p.region_end);
    if (p.spec.bytes) EXPECT_LT(p.region_end - (p.data_offset + p.spec.bytes), 64u);  // overruns hit the canary first
    if (b > 0) EXPECT_GE(p.region_begin - a.placement(b - 1).region_end, TensorArena::guard_bytes());
  }
  EXPECT_GE(a.placement(0).region_begin, TensorArena::guard_bytes());
  EXPECT_GE(a.size() - a.placement(2).region_end, TensorArena::guard_bytes());
}

TEST(TensorArena, DetectsAWriteIntoTheCanaryBytes) {
  TensorArena a({{"x", BufferRole::Input, 100}, {"y", BufferRole::Output, 40}});
  EXPECT_FALSE(a.find_damaged_canary());
  a.data(1)[40] ^= 1;  // the first byte past y
  auto d = a.find_damaged_canary();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->buffer, 1);
  EXPECT_EQ(d->offset, 40);
  EXPECT_EQ(a.describe(*d), "1 byte past the end of output 'y' (40 bytes)");
  a.fill_canaries();
  EXPECT_FALSE(a.find_damaged_canary());
  a.data(0)[-3] = 0;
  d = a.find_damaged_canary();
  ASSERT_TRUE(d);
  EXPECT_EQ(a.describe(*d), "3 bytes before the start of input 'x'");
}

TEST(TensorArena, ClassifiesAddresses) {
  TensorArena a({{"x", BufferRole::Input, 4096}, {"y", BufferRole::Output, 4096}});
  const BufferPlacement& x = a.placement(0);
  const BufferPlacement& y = a.placement(1);
  EXPECT_EQ(a.classify(x.data_offset + 8).kind, AddressInfo::Kind::Data);
  EXPECT_EQ(a.classify(x.data_offset + 8).buffer, 0);
  AddressInfo past_x = a.classify(x.region_end + 100);
  EXPECT_EQ(past_x.kind, AddressInfo::Kind::Guard);
  EXPECT_EQ(past_x.buffer, 0);
  EXPECT_EQ(past_x.offset, 4096 + 100);
  AddressInfo before_y = a.classify(y.region_begin - 100);
  EXPECT_EQ(before_y.buffer, 1);
  EXPECT_EQ(before_y.offset, -100);
  EXPECT_EQ(a.classify(a.size() + 5).kind, AddressInfo::Kind::Outside);
}

}  // namespace
}  // namespace ekb::runtime
