// One shard of a run's work (`--shard I/N`, docs/SCALE_OUT.md): shards split the selected work by
// (workload, sample) so that N processes, on any machines, each evaluate a disjoint part and
// together all of it. Ownership is a hash of the workload's full name and the sample index, not a
// position in a list: adding workloads to the suite moves none of the existing ones to another shard.
#pragma once
#include <string>
#include <string_view>

namespace ekb::eval {

struct Shard {
  int index = 0;  // I: 0 <= I < N
  int count = 1;  // N; 1: the whole run

  bool whole() const { return count == 1; }
  // Whether this shard evaluates `sample` of `workload` (its full name, PATTERN/WORKLOAD).
  bool owns(std::string_view workload, int sample) const;
  std::string text() const;  // "I/N"
};

// Which of `count` shards owns `sample` of `workload`: XXH3 of the two, modulo `count`.
int shard_owner(std::string_view workload, int sample, int count);

// "I/N" with 0 <= I < N; throws std::invalid_argument saying what is wrong.
Shard parse_shard(std::string_view text);

}  // namespace ekb::eval
