// Confinement of a worker process, applied by the worker itself right after exec and before it
// loads any candidate (the parent's fork child only sets what must precede exec: its own process
// group, the parent-death signal, the descriptors).
//
// What a candidate running in a confined worker cannot do:
//  - use more than `memory_limit_bytes` of address space (RLIMIT_AS; malloc fails, which the crash
//    report turns into ErrorKind::Memory), write files larger than `file_size_limit_bytes`
//    (RLIMIT_FSIZE), dump core (RLIMIT_CORE = 0);
//  - see or write any file but its own scratch directory (cwd, HOME and TMPDIR) and system files
//    opened read-only (the list is kSystemPaths in sandbox.cpp), by two independent layers:
//     * a private root: a new mount namespace (as root; inside a new user namespace otherwise)
//       whose root is an empty read-only tmpfs holding read-only bind mounts of the system paths,
//       the scratch directory read-write, and empty read-only /tmp, /var/tmp, /dev/shm;
//     * Landlock: reads beneath the system paths, writes only beneath the scratch directory. It
//       needs no privilege, so it holds for an ordinary user where user namespaces are disabled, and
//       it also forbids reaching other processes through /proc (their root, cwd, memory).
//    Artifacts arrive as descriptors the parent opened (runtime/worker.h), so none of the cache is
//    visible;
//  - reach the network: the new network namespace, and a seccomp filter refusing socket();
//  - start processes or programs, signal or trace other processes, or share memory with a later
//    worker through System V IPC or POSIX message queues (seccomp; threads are allowed, OpenMP
//    needs them);
//  - keep root: when the parent runs as root, the worker drops to an unprivileged uid/gid (nobody);
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
  bool user_namespace = false;  // the namespaces were made inside a user namespace (not root)
  bool private_root = false;    // the file system is the private root described above
  int landlock_abi = 0;         // the Landlock ABI version of the ruleset in force; 0: none
  bool seccomp = false;
  bool dropped_privileges = false;
  std::string notes;  // why a layer is missing ("unshare: Operation not permitted")
};

// Applies every layer it can; a layer the system refuses is recorded in the report, not fatal.
// Throws std::runtime_error only when the scratch directory or the resource limits cannot be set.
SandboxReport enter_sandbox(const SandboxConfig& config);

}  // namespace ekb::runtime
