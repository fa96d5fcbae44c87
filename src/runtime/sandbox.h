// Confinement of a worker process, applied by the worker itself right after exec and before it
// loads any candidate (the parent's fork child only sets what must precede exec: its own process
// group, the parent-death signal, the descriptors).
//
// What a candidate running in a confined worker cannot do:
//  - use more than `memory_limit_bytes` of address space (RLIMIT_AS; malloc fails, which the crash
//    report turns into ErrorKind::Memory), write files larger than `file_size_limit_bytes`
//    (RLIMIT_FSIZE), dump core (RLIMIT_CORE = 0);
//  - reach the network: a fresh network namespace (unshare(CLONE_NEWNET) as root, else inside a
//    new user namespace when the kernel allows it), and a seccomp filter refusing socket();
//  - start processes or programs, signal or trace other processes (seccomp: fork/exec/ptrace/kill
//    of other pids refused; threads are allowed, OpenMP needs them);
//  - touch the harness's files, when the parent runs as root: the worker drops to an unprivileged
//    uid/gid (nobody) with a private scratch directory as cwd, HOME and TMPDIR;
//  - outlive the parent (PR_SET_PDEATHSIG, re-armed after the uid change).
// Time limits are the parent's job (it kills the process group at the deadline).
#pragma once
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ekb::runtime {

struct SandboxConfig {
  std::string scratch_dir;                   // cwd, HOME and TMPDIR of the worker
  uint64_t memory_limit_bytes = 8ull << 30;  // RLIMIT_AS; 0: none
  uint64_t file_size_limit_bytes = 1 << 20;  // RLIMIT_FSIZE
  int uid = -1;                              // when >= 0 and running as root: drop to it
  int gid = -1;
  pid_t parent_pid = 0;                      // exit at once if the parent is already gone
  bool seccomp = true;
};

struct SandboxReport {
  bool network_namespace = false;
  bool seccomp = false;
  bool dropped_privileges = false;
  std::string notes;  // why a layer is missing ("unshare: Operation not permitted")
};

// Applies every layer it can; a layer the system refuses is recorded in the report, not fatal.
// Throws std::runtime_error only when the scratch directory or the resource limits cannot be set.
SandboxReport enter_sandbox(const SandboxConfig& config);

}  // namespace ekb::runtime
