// `ekb worker`: the hidden subcommand the harness starts its sandboxed worker processes with
// (runtime/worker.h). Not for people: it speaks the worker protocol on an inherited socket.
// `ekb opencl-compile`: the hidden compile step of the opencl backend (runtime/opencl_program.h).
#include "cli/commands.h"
#include "runtime/opencl_program.h"
#include "runtime/worker_main.h"

namespace ekb::cli {

void add_worker_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  CLI::App* cmd = app.add_subcommand("worker", "Run kernels for the harness (internal)");
  cmd->group("");  // hidden from --help
  // Its arguments are read by runtime, beside the code that writes them (runtime/worker_main.h).
  cmd->allow_extras();
  cmd->callback([cmd] {
    try {
      g_exit_code = runtime::worker_main(runtime::parse_worker_arguments(cmd->remaining()));
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError(e.what());
    }
  });
}

void add_opencl_compile_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  auto req = std::make_shared<runtime::opencl::CompileRequest>();
  auto tensors = std::make_shared<std::string>(), params = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("opencl-compile", "Build an OpenCL solution into a program artifact (internal)");
  cmd->group("");  // hidden from --help
  cmd->add_option("--platform", req->platform);
  cmd->add_option("--device", req->device);
  cmd->add_option("--tensors", *tensors, "The kernel ABI's tensor names, comma-separated");
  cmd->add_option("--params", *params, "Its parameter names, comma-separated");
  cmd->add_option("--options", req->build_options);
  cmd->add_option("-o", req->output_path)->required();
  cmd->add_option("source", req->source_path)->required();
  cmd->callback([req, tensors, params] {
    auto split = [](const std::string& csv) {
      std::vector<std::string> out;
      for (size_t p = 0; p < csv.size();) {
        size_t e = csv.find(',', p);
        if (e == std::string::npos) e = csv.size();
        if (e > p) out.push_back(csv.substr(p, e - p));
        p = e + 1;
      }
      return out;
    };
    req->names.tensors = split(*tensors);
    req->names.params = split(*params);
    g_exit_code = runtime::opencl::compile_main(*req);
  });
}

}  // namespace ekb::cli
