// A three-pattern suite written to a scratch directory, whose counts are known by construction:
// used by the tests of suite::compute_stats and of `ekb suite stats`.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ekb::testing_stats {

//   nn.t_a     operator, f32/f16: a1 micro N=4, a2 mobile N=8, a3 mobile heldout N=8 f16 (same shape)
//   qnn.t_b    fused, i8:         b1 micro N=2, b2 micro heldout N=3 (a new shape)
//   graph.t_c  graph, f32:        c1 mobile N=1 (no held-out workload)
inline std::string write_stats_fixture() {
  std::string dir = ::testing::TempDir() + "ekb_stats_fixture_" + std::to_string(getpid());
  std::filesystem::create_directories(dir + "/nn");
  std::filesystem::create_directories(dir + "/qnn");
  std::filesystem::create_directories(dir + "/graph");
  std::ofstream(dir + "/nn/t_a.ekb") << R"(pattern nn.t_a {
  level operator
  source "test fixture"
  summary "Doubling."
  types T
  params N
  input  x : T[N] in [-1, 1]
  output y : T[N]
  y[i] = x[i] * 2.0
}
workload a1 micro { N = 4, T = f32 }
workload a2 mobile { N = 8, T = f32 }
workload a3 mobile heldout { N = 8, T = f16 }
)";
  std::ofstream(dir + "/qnn/t_b.ekb") << R"(pattern qnn.t_b {
  level fused
  source "test fixture"
  summary "Copy."
  params N
  input  x : i8[N] in [-5, 5]
  output y : i8[N]
  y[i] = x[i]
}
workload b1 micro { N = 2 }
workload b2 micro heldout { N = 3 }
)";
  std::ofstream(dir + "/graph/t_c.ekb") << R"(pattern graph.t_c {
  level graph
  source "test fixture"
  summary "Negation."
  params N
  input  x : f32[N] in [-1, 1]
  output y : f32[N]
  y[i] = -x[i]
}
workload c1 mobile { N = 1 }
)";
  return dir;
}

}  // namespace ekb::testing_stats
