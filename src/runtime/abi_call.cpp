#include "runtime/abi_call.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace ekb::runtime {

namespace {

template <size_t>
using U64 = uint64_t;

template <typename R, size_t... I>
R call_exact(void* fn, const uint64_t* a, std::index_sequence<I...>) {
  using Fn = R (*)(U64<I>...);
  return reinterpret_cast<Fn>(fn)(a[I]...);
}

template <typename R, size_t... N>
constexpr auto make_table(std::index_sequence<N...>) {
  return std::array<R (*)(void*, const uint64_t*), sizeof...(N)>{
      [](void* fn, const uint64_t* a) -> R { return call_exact<R>(fn, a, std::make_index_sequence<N>{}); }...};
}

template <typename R>
R dispatch(void* fn, const uint64_t* args, size_t n) {
  static constexpr auto table = make_table<R>(std::make_index_sequence<kMaxKernelArgs + 1>{});
  if (n > kMaxKernelArgs) throw std::runtime_error("kernel has more than 64 arguments");
  return table[n](fn, args);
}

}  // namespace

void call_void_u64(void* fn, const uint64_t* args, size_t n) { dispatch<void>(fn, args, n); }
int64_t call_i64_u64(void* fn, const uint64_t* args, size_t n) { return dispatch<int64_t>(fn, args, n); }

}  // namespace ekb::runtime
