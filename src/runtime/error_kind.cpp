#include "runtime/error_kind.h"

#include <array>
#include <utility>

namespace ekb::runtime {

namespace {
constexpr std::array<std::pair<ErrorKind, std::string_view>, 18> kNames{{
    {ErrorKind::None, "none"},
    {ErrorKind::Compile, "compile"},
    {ErrorKind::Load, "load"},
    {ErrorKind::Crash, "crash"},
    {ErrorKind::Exit, "exit"},
    {ErrorKind::Timeout, "timeout"},
    {ErrorKind::Memory, "memory"},
    {ErrorKind::Mismatch, "mismatch"},
    {ErrorKind::UnwrittenOutput, "unwritten_output"},
    {ErrorKind::InputModified, "input_modified"},
    {ErrorKind::OutOfBounds, "out_of_bounds"},
    {ErrorKind::AsyncWrite, "async_write"},
    {ErrorKind::Nondeterministic, "nondeterministic"},
    {ErrorKind::Missing, "missing"},
    {ErrorKind::NoCode, "no_code"},
    {ErrorKind::GenerationFailed, "generation_failed"},
    {ErrorKind::Internal, "internal"},
    {ErrorKind::Device, "device"},
}};
}  // namespace

std::string_view error_kind_name(ErrorKind k) {
  for (const auto& [kind, name] : kNames)
    if (kind == k) return name;
  return "internal";
}

std::optional<ErrorKind> parse_error_kind(std::string_view s) {
  for (const auto& [kind, name] : kNames)
    if (name == s) return kind;
  return std::nullopt;
}

}  // namespace ekb::runtime
