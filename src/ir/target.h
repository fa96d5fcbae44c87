// The targets a workload is lowered, compiled and run for, and the sets of them that a schedule
// block or a directive applies to. The names ("cpu", "cuda", "opencl"; "gpu" for a layer block)
// are spelled only where text meets the program: the command line, file names, JSON and database
// values, the IR's `schedule cpu { ... }` header.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ekb::ir {

enum class Target : uint8_t { Cpu, Cuda, OpenCL };

inline constexpr std::array<Target, 3> kTargets{Target::Cpu, Target::Cuda, Target::OpenCL};

std::string_view target_name(Target t);  // "cpu", "cuda", "opencl"
std::optional<Target> parse_target(std::string_view name);
// parse_target, or std::invalid_argument "unknown target 'x'" naming the targets (and the nearest).
Target target_from_name(std::string_view name);
std::vector<std::string> target_names();  // "cpu", "cuda", "opencl"
bool is_gpu(Target t);                    // cuda and opencl

// A set of targets: those a layer block applies to, or a directive is allowed on.
class TargetSet {
 public:
  constexpr TargetSet() = default;
  constexpr TargetSet(std::initializer_list<Target> targets) {
    for (Target t : targets) bits_ |= bit(t);
  }
  constexpr bool contains(Target t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool contains(TargetSet s) const { return (bits_ & s.bits_) == s.bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(const TargetSet&) const = default;
  std::vector<Target> targets() const;

 private:
  static constexpr uint8_t bit(Target t) { return static_cast<uint8_t>(1u << static_cast<unsigned>(t)); }
  uint8_t bits_ = 0;
};

inline constexpr TargetSet kCpuTargets{Target::Cpu};
inline constexpr TargetSet kGpuTargets{Target::Cuda, Target::OpenCL};
inline constexpr TargetSet kAllTargets{Target::Cpu, Target::Cuda, Target::OpenCL};

// "cpu", "gpu" (cuda and opencl), "cpu, cuda or opencl": a set as the docs and messages say it.
std::string target_set_text(TargetSet s);

// The target of a `schedule`/`memory` block header (docs/IR.md): "cpu", "gpu" (every gpu
// target), or none (every target); nullopt for another name.
std::optional<TargetSet> parse_layer_target(std::string_view name);
std::vector<std::string> layer_target_names();  // "cpu", "gpu"

}  // namespace ekb::ir
