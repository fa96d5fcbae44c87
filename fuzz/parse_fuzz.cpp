// Fuzzes the IR front end: any byte string must either be rejected with a diagnostic or parse,
// verify without crashing, and survive a print -> parse round trip unchanged.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string_view>

#include "ir/instance.h"
#include "ir/parser.h"
#include "ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ekb::ir::Module m;
  try {
    m = ekb::ir::parse_module(text, "fuzz.ekb");
  } catch (const ekb::ir::ParseError&) {
    return 0;
  }
  std::string printed = ekb::ir::print_module(m);
  ekb::ir::Module again;
  try {
    again = ekb::ir::parse_module(printed, "printed.ekb");
  } catch (const ekb::ir::ParseError& e) {
    std::fprintf(stderr, "printed form does not parse: %s\n%s\n", e.what(), printed.c_str());
    std::abort();
  }
  if (!ekb::ir::equal(m, again)) {
    std::fprintf(stderr, "round trip changed the module:\n%s\n", printed.c_str());
    std::abort();
  }
  ekb::ir::Diagnostics diags("fuzz.ekb");
  ekb::ir::verify_module(m, diags);
  return 0;
}
