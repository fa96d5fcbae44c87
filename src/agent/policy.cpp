#include "agent/policy.h"

namespace ekb::agent {

namespace {
constexpr std::string_view kLayerNames[] = {"compute", "schedule", "memory", "source"};
}

std::string_view layer_name(Layer layer) { return kLayerNames[static_cast<size_t>(layer)]; }

std::optional<Layer> parse_layer(std::string_view name) {
  for (size_t i = 0; i < std::size(kLayerNames); ++i)
    if (kLayerNames[i] == name) return static_cast<Layer>(i);
  return std::nullopt;
}

}  // namespace ekb::agent
