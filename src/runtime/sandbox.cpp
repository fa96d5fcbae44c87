#include "runtime/sandbox.h"

#include <errno.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace ekb::runtime {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;  // seccomp filter not built for this architecture
#endif

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void set_limit(int resource, uint64_t value, const char* name) {
  struct rlimit rl = {value, value};
  if (::setrlimit(resource, &rl) != 0) throw std::runtime_error(errno_text(name));
}

// A classic-BPF program built instruction by instruction. Every rule loads what it needs; the
// syscall number is reloaded after a rule that loaded an argument.
class FilterBuilder {
 public:
  void load_nr() { stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)); }
  void load_arg0_low() {  // pid_t and the clone flags fit in the low 32 bits (little-endian)
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
  }
  // if (nr == syscall) return ret;
  void refuse(long syscall, uint32_t ret) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(syscall), 0, 1);
    stmt(BPF_RET | BPF_K, ret);
  }
  // if (nr == syscall) { if (arg0 & bit) allow else return ret; }
  void allow_if_arg0_has(long syscall, uint32_t bit, uint32_t ret) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(syscall), 0, 4);
    load_arg0_low();
    jump(BPF_JMP | BPF_JSET | BPF_K, bit, 0, 1);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(BPF_RET | BPF_K, ret);
    // falls through here only from the first jump (nr != syscall): A still holds nr
  }
  // if (nr == syscall) { if (arg0 is one of values) allow else return ret; }
  void allow_if_arg0_in(long syscall, const std::vector<uint32_t>& values, uint32_t ret) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(syscall), 0,
         static_cast<uint8_t>(values.size() * 2 + 2));
    load_arg0_low();
    for (uint32_t v : values) {
      jump(BPF_JMP | BPF_JEQ | BPF_K, v, 0, 1);
      stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    }
    stmt(BPF_RET | BPF_K, ret);
  }
  void stmt(uint16_t code, uint32_t k) { prog_.push_back(BPF_STMT(code, k)); }
  void jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { prog_.push_back(BPF_JUMP(code, k, jt, jf)); }
  std::vector<struct sock_filter>& program() { return prog_; }

 private:
  std::vector<struct sock_filter> prog_;
};

bool install_seccomp_filter(std::string& notes) {
  if (kAuditArch == 0) {
    notes += "seccomp: no filter for this architecture; ";
    return false;
  }
  const uint32_t eperm = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  const uint32_t enosys = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
  const uint32_t self = static_cast<uint32_t>(::getpid());
  FilterBuilder f;
  f.stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f.jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0);
  f.stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  f.load_nr();
#if defined(__x86_64__)
  f.jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);  // the x32 ABI: not ours
  f.stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  f.refuse(SYS_fork, eperm);
  f.refuse(SYS_vfork, eperm);
#endif
  for (long nr : {SYS_socket, SYS_socketpair, SYS_execve, SYS_execveat, SYS_ptrace,
                  SYS_process_vm_readv, SYS_process_vm_writev, SYS_tkill, SYS_unshare, SYS_setns,
                  SYS_mount, SYS_umount2, SYS_chroot, SYS_pivot_root, SYS_bpf, SYS_init_module,
                  SYS_finit_module, SYS_delete_module, SYS_kexec_load, SYS_reboot})
    f.refuse(nr, eperm);
  // Newer system calls, where the C library's headers know them.
#ifdef SYS_pidfd_open
  f.refuse(SYS_pidfd_open, eperm);
#endif
#ifdef SYS_pidfd_send_signal
  f.refuse(SYS_pidfd_send_signal, eperm);
#endif
#ifdef SYS_pidfd_getfd
  f.refuse(SYS_pidfd_getfd, eperm);
#endif
#ifdef SYS_io_uring_setup
  f.refuse(SYS_io_uring_setup, eperm);  // io_uring can open sockets without socket()
#endif
#ifdef SYS_clone3
  // clone3 hides its flags in memory a filter cannot read: ENOSYS makes glibc fall back to clone.
  f.refuse(SYS_clone3, enosys);
#endif
  f.allow_if_arg0_has(SYS_clone, CLONE_THREAD, eperm);  // threads yes, processes no
  f.allow_if_arg0_in(SYS_kill, {self, 0u, static_cast<uint32_t>(-static_cast<int32_t>(self))}, eperm);
  f.allow_if_arg0_in(SYS_tgkill, {self}, eperm);
  f.stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

  struct sock_fprog prog = {static_cast<unsigned short>(f.program().size()), f.program().data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    notes += errno_text("no_new_privs") + "; ";
    return false;
  }
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0 &&
      ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
    notes += errno_text("seccomp") + "; ";
    return false;
  }
  return true;
}

void arm_parent_death_signal(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (parent > 0 && ::getppid() != parent) ::_exit(0);  // the parent died before we armed it
}

}  // namespace

SandboxReport enter_sandbox(const SandboxConfig& config) {
  SandboxReport report;
  arm_parent_death_signal(config.parent_pid);

  // Network first: creating a namespace needs the privileges dropped below.
  if (::unshare(CLONE_NEWNET) == 0) {
    report.network_namespace = true;
  } else {
    std::string why = errno_text("unshare(CLONE_NEWNET)");
    if (::geteuid() != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0)
      report.network_namespace = true;
    else
      report.notes += why + "; ";
  }

  if (!config.scratch_dir.empty()) {
    if (::chdir(config.scratch_dir.c_str()) != 0) throw std::runtime_error(errno_text("chdir(scratch)"));
    for (const char* v : {"TMPDIR", "TMP", "TEMP", "HOME"}) ::setenv(v, config.scratch_dir.c_str(), 1);
  }

  set_limit(RLIMIT_CORE, 0, "RLIMIT_CORE");
  set_limit(RLIMIT_FSIZE, config.file_size_limit_bytes, "RLIMIT_FSIZE");
  if (config.memory_limit_bytes) set_limit(RLIMIT_AS, config.memory_limit_bytes, "RLIMIT_AS");

  if (config.uid >= 0 && ::geteuid() == 0) {
    gid_t gid = static_cast<gid_t>(config.gid >= 0 ? config.gid : config.uid);
    if (::setgroups(0, nullptr) == 0 && ::setgid(gid) == 0 && ::setuid(static_cast<uid_t>(config.uid)) == 0) {
      report.dropped_privileges = true;
      // A uid change clears the parent-death signal and makes the process non-dumpable, which would
      // hide /proc/self/fd (artifacts are loaded through it). Core dumps stay off (RLIMIT_CORE).
      arm_parent_death_signal(config.parent_pid);
      ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    } else {
      report.notes += errno_text("dropping privileges") + "; ";
    }
  }

  if (config.seccomp) report.seccomp = install_seccomp_filter(report.notes);
  return report;
}

}  // namespace ekb::runtime
