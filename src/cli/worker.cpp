// `ekb worker`: the hidden subcommand the harness starts its sandboxed worker processes with
// (runtime/worker.h). Not for people: it speaks the worker protocol on an inherited socket.
#include "cli/commands.h"
#include "runtime/worker_main.h"

namespace ekb::cli {

void add_worker_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  auto cfg = std::make_shared<runtime::WorkerConfig>();
  auto no_seccomp = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("worker", "Run kernels for the harness (internal)");
  cmd->group("");  // hidden from --help
  cmd->add_option("--fd", cfg->socket_fd)->required();
  cmd->add_option("--backend", cfg->backend);
  cmd->add_option("--scratch", cfg->sandbox.scratch_dir);
  cmd->add_option("--memory-limit", cfg->sandbox.memory_limit_bytes);
  cmd->add_option("--file-limit", cfg->sandbox.file_size_limit_bytes);
  cmd->add_option("--parent-pid", cfg->sandbox.parent_pid);
  cmd->add_option("--uid", cfg->sandbox.uid);
  cmd->add_option("--gid", cfg->sandbox.gid);
  cmd->add_flag("--no-seccomp", *no_seccomp);
  cmd->callback([cfg, no_seccomp] {
    cfg->sandbox.seccomp = !*no_seccomp;
    g_exit_code = runtime::worker_main(*cfg);
  });
}

}  // namespace ekb::cli
