// flatten_storage: row-major flat indices for loads and stores.
#include "lower/flatten_storage.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

TEST(FlattenStorage, RowMajorIndex) {
  ExprP i = var("i", ScalarType::Index), j = var("j", ScalarType::Index), k = var("k", ScalarType::Index);
  EXPECT_EQ(to_string(*flat_index({i, j, k}, {2, 3, 4})), "((i * 12) + ((j * 4) + k))");
  EXPECT_EQ(to_string(*flat_index({i}, {7})), "i");
}

TEST(FlattenStorage, LoadsAndStores) {
  auto l = lower_text(pattern(R"(
  params N
  input  x : f32[N, 3, 2]
  output y : f32[N, 2]
  y[i, j] = x[i, 2, j]
)",
                                                "N = 4"),
                               "flatten_storage");
  EXPECT_EQ(l.body,
            "for i in [0, +4) {\n"
            "  for j in [0, +2) {\n"
            "    y[((i * 2) + j)] = x[((i * 6) + ((2 * 2) + j))]\n"
            "  }\n"
            "}\n");
}

}  // namespace
}  // namespace ekb::lower::testing
