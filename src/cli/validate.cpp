// ekb validate FILE...: parse and verify IR files; diagnostics with file:line:col; exit 1 on any error.
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "ir/instance.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace ekb::cli {

namespace {

struct ValidateOptions {
  std::vector<std::string> files;
  bool canonical = false;
  bool quiet = false;
};

// Reads a whole file; "-" is standard input. Returns false with a message on failure.
bool read_file(const std::string& path, std::string& text, std::string& error) {
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
    return true;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = "is a directory (pass the .ekb files inside it, e.g. " + path + "/*.ekb)";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open the file";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

void run_validate(const ValidateOptions& o) {
  int bad = 0;
  for (const auto& path : o.files) {
    std::string text, error;
    if (!read_file(path, text, error)) {
      fmt::print(stderr, "{}: error: {}\n", path, error);
      ++bad;
      continue;
    }
    ir::Module m;
    try {
      m = ir::parse_module(text, path);
    } catch (const ir::ParseError& e) {
      fmt::print(stderr, "{}\n", e.diagnostic().format());
      ++bad;
      continue;
    }
    ir::Diagnostics diags(path);
    if (!ir::verify_module(m, diags)) {
      fmt::print(stderr, "{}", diags.format());
      ++bad;
      continue;
    }
    if (o.canonical) {
      fmt::print("{}", ir::print_module(m));
    } else if (!o.quiet) {
      fmt::print("{}: ok: {} with {} workload{}\n", path, m.pattern.name, m.workloads.size(),
                 m.workloads.size() == 1 ? "" : "s");
    }
  }
  if (bad) {
    fmt::print(stderr, "{} of {} file{} failed validation\n", bad, o.files.size(), o.files.size() == 1 ? "" : "s");
    g_exit_code = 1;
  }
}

}  // namespace

void add_validate_command(CLI::App& app, Context&) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "Parse and verify IR files; non-zero exit on any error");
  cmd->add_option("files", o->files, "The .ekb files to check ('-' reads standard input)")->required();
  cmd->add_flag("--canonical", o->canonical, "Print each valid file in canonical form");
  cmd->add_flag("-q,--quiet", o->quiet, "Print only diagnostics");
  cmd->callback([o] { run_validate(*o); });
}

}  // namespace ekb::cli
