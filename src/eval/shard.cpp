#include "eval/shard.h"

#include <fmt/core.h>

#include <charconv>
#include <stdexcept>
#include <string>

#include "runtime/compile_cache.h"

namespace ekb::eval {

int shard_owner(std::string_view workload, int sample, int count) {
  if (count <= 1) return 0;
  // XXH3 is specified bit for bit: every machine and every build agrees on the owner (content_key's
  // length prefixes are 64-bit little-endian on every host ekb runs on).
  const std::string key = runtime::content_key({workload, std::to_string(sample)});
  const unsigned long long h = std::stoull(key.substr(0, 16), nullptr, 16);
  return static_cast<int>(h % static_cast<unsigned long long>(count));
}

bool Shard::owns(std::string_view workload, int sample) const {
  return shard_owner(workload, sample, count) == index;
}

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

Shard parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  Shard s;
  auto parse = [&](std::string_view part, int& out) {
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  if (slash == std::string_view::npos || !parse(text.substr(0, slash), s.index) ||
      !parse(text.substr(slash + 1), s.count))
    throw std::invalid_argument(fmt::format("shard '{}' is not I/N (e.g. 0/4)", text));
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    throw std::invalid_argument(fmt::format("shard '{}': needs 0 <= I < N", text));
  return s;
}

}  // namespace ekb::eval
