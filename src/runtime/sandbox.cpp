#include "runtime/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <vector>

#include "runtime/paths.h"

namespace ekb::runtime {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#elif defined(__riscv) && __riscv_xlen == 64 && defined(AUDIT_ARCH_RISCV64)
constexpr uint32_t kAuditArch = AUDIT_ARCH_RISCV64;
#else
constexpr uint32_t kAuditArch = 0;  // seccomp filter not built for this architecture
#endif

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// What a worker may read besides its scratch directory, and why: each is bind-mounted read-only
// into the private root and readable under Landlock. A path this system lacks is skipped; a
// symbolic link (/lib -> usr/lib where /usr is merged) is recreated as a link. Nothing of ekb's own
// (its cache, results, solutions, source tree) lives beneath these.
struct SystemPath {
  const char* path;
  const char* why;
};
constexpr SystemPath kSystemPaths[] = {
    {"/usr", "the libraries kernels link (libc, libm, libmvec, libgomp, libstdc++), PoCL's runtime"},
    {"/lib", "the same where /usr is not merged"},
    {"/lib64", "the dynamic loader (x86-64)"},
    {"/etc", "ld.so.cache and ld.so.conf, read by dlopen for a kernel's dependencies"},
    {"/proc", "/proc/self: fd (artifacts are loaded through it), maps and status (glibc, OpenMP); "
              "/proc/driver (GPU drivers)"},
    {"/sys", "the CPU topology (OpenMP's thread count), device attributes (GPU drivers)"},
    {"/dev", "null, zero, urandom; GPU device files (nvidia*, dri/) that a driver opens after its "
             "start (Landlock grants only character devices and kGpuDeviceDirs)"},
};
// Under /dev: directories of device files a GPU driver may open once candidate code runs.
constexpr const char* kGpuDeviceDirs[] = {"/dev/dri", "/dev/nvidia-caps"};
// Mounts inside the system paths whose contents are other processes' files (a memo left by an
// earlier worker, data planted for a later one): covered by an empty read-only tmpfs. /tmp and
// /var/tmp are empty directories of the read-only root.
constexpr const char* kCoveredMounts[] = {"/dev/mqueue", "/dev/hugepages"};
// Except /dev/shm, covered by an empty writable tmpfs of this worker's own: LLVM's OpenMP runtime
// (clang -fopenmp) registers itself there at start-up and aborts when it cannot.
constexpr const char* kPrivateShm = "/dev/shm";

bool is_beneath(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

// Directories of the shared libraries mapped now, outside the system paths: a GPU driver installed
// elsewhere (/usr/local/nvidia/lib64, /opt/...) dlopens more of its own libraries later (the PTX
// JIT compiler). The executable's own directory (a build tree) is left out.
std::vector<std::string> loaded_library_dirs(const std::string& scratch_dir) {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> dirs;
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos || line.find(" (deleted)") != std::string::npos) continue;
    const std::string dir = std::filesystem::path(line.substr(slash)).parent_path().string();
    if (dir.empty() || dir == "/") continue;
    dirs.insert(dir);
  }
  const std::string own = executable_dir();
  std::vector<std::string> out;
  for (const std::string& d : dirs) {
    const bool known = std::any_of(std::begin(kSystemPaths), std::end(kSystemPaths),
                                   [&](const SystemPath& s) { return is_beneath(d, s.path); });
    if (known || d == own || is_beneath(d, scratch_dir) || is_beneath(scratch_dir, d)) continue;
    out.push_back(d);
  }
  return out;
}

// --- Namespaces -------------------------------------------------------------------------------

bool write_proc_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// As root: new network and mount namespaces. Otherwise both inside a new user namespace in which
// the user is itself (so its files stay its own) with the capabilities to mount. Returns whether a
// mount namespace was made; a refused layer lands in the notes.
bool enter_namespaces(SandboxReport& report) {
  const bool root = ::geteuid() == 0;
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWNET | CLONE_NEWNS | (root ? 0 : CLONE_NEWUSER)) == 0) {
    report.network_namespace = true;
    if (root) return true;
    report.user_namespace = true;
    if (write_proc_file("/proc/self/setgroups", "deny") &&
        write_proc_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") &&
        write_proc_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"))
      return true;
    report.notes += errno_text("mapping the user namespace's ids") + "; ";
    return false;
  }
  report.notes += errno_text(root ? "unshare(CLONE_NEWNET | CLONE_NEWNS)"
                                  : "unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS)") + "; ";
  if (::unshare(CLONE_NEWNET) == 0) report.network_namespace = true;
  return false;
}

// The user namespace's capabilities served only to build the private root.
void drop_capabilities() {
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  ::syscall(SYS_capset, &header, data);
}

// --- The private root ---------------------------------------------------------------------------

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442  // the same number on every architecture
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
struct MountAttr {  // struct mount_attr of <linux/mount.h>, which clashes with <sys/mount.h>
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};
constexpr uint64_t kMountAttrReadOnly = 0x1;

// Read-only with every mount beneath it. Without mount_setattr (before Linux 5.12) only the top
// one, remounted with the flags the kernel locks on a mount from another user namespace kept.
bool make_read_only(const std::string& path) {
  MountAttr attr = {kMountAttrReadOnly, 0, 0, 0};
  if (::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(), AT_RECURSIVE, &attr, sizeof attr) == 0) return true;
  struct statvfs st;
  if (::statvfs(path.c_str(), &st) != 0) return false;
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  const std::pair<unsigned long, unsigned long> kept[] = {{ST_NOSUID, MS_NOSUID}, {ST_NODEV, MS_NODEV},
      {ST_NOEXEC, MS_NOEXEC}, {ST_NOATIME, MS_NOATIME}, {ST_NODIRATIME, MS_NODIRATIME}, {ST_RELATIME, MS_RELATIME}};
  for (auto [st_flag, ms_flag] : kept)
    if (st.f_flag & st_flag) flags |= ms_flag;
  return ::mount(nullptr, path.c_str(), nullptr, flags, nullptr) == 0;
}

// `source` at the same path under `root`, read-only (or read-write), or the link it is.
bool place(const std::string& source, const std::string& root, bool writable, std::string& failed) {
  struct stat st;
  if (::lstat(source.c_str(), &st) != 0) return true;  // this system has none
  const std::string target = root + source;
  std::error_code ec;
  if (S_ISLNK(st.st_mode)) {
    std::filesystem::create_directories(std::filesystem::path(target).parent_path(), ec);
    std::error_code link_ec;
    const auto link = std::filesystem::read_symlink(source, link_ec);
    if (!link_ec && ::symlink(link.c_str(), target.c_str()) == 0) return true;
    failed = errno_text("symlink " + target);
    return false;
  }
  std::filesystem::create_directories(target, ec);
  if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    failed = errno_text("bind " + source);
    return false;
  }
  if (!writable && !make_read_only(target)) {
    failed = errno_text("read-only " + target);
    return false;
  }
  return true;
}

// A new root holding only the system paths (read-only), the extra library directories
// (read-only) and the scratch directory (read-write), at their own paths; everything else, the
// user's home, caches, results and solutions, the source tree, /tmp's other files, is absent.
bool enter_private_root(const std::string& scratch, const std::vector<std::string>& library_dirs,
                        std::string& notes) {
  // Nothing mounted below reaches the parent's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    notes += errno_text("private root: making / private") + "; ";
    return false;
  }
  // The new root is built on a tmpfs mounted over the scratch directory (a directory sure to
  // exist, writable or not), which is bound back into it from a descriptor opened before.
  const int scratch_fd = ::open(scratch.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (scratch_fd < 0 || ::mount("ekb-root", scratch.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") != 0) {
    notes += errno_text("private root: tmpfs") + "; ";
    if (scratch_fd >= 0) ::close(scratch_fd);
    return false;
  }
  const std::string& root = scratch;
  std::string failed;
  bool ok = true;
  for (const SystemPath& p : kSystemPaths) ok = ok && place(p.path, root, false, failed);
  for (const std::string& d : library_dirs) ok = ok && place(d, root, false, failed);
  for (const char* covered : kCoveredMounts) {
    struct stat st;
    if (!ok || ::stat((root + covered).c_str(), &st) != 0) continue;
    if (::mount("ekb-empty", (root + covered).c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=4k,mode=0755") != 0) {
      failed = errno_text(std::string("covering ") + covered);
      ok = false;
    }
  }
  struct stat shm;
  if (ok && ::stat((root + kPrivateShm).c_str(), &shm) == 0 &&
      ::mount("ekb-shm", (root + kPrivateShm).c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=16m,mode=1777") != 0) {
    failed = errno_text(std::string("covering ") + kPrivateShm);
    ok = false;
  }
  std::error_code ec;
  for (const char* empty : {"/tmp", "/var/tmp"}) std::filesystem::create_directories(root + empty, ec);
  std::filesystem::create_directories(root + scratch, ec);
  const std::string scratch_source = "/proc/self/fd/" + std::to_string(scratch_fd);
  if (ok && ::mount(scratch_source.c_str(), (root + scratch).c_str(), nullptr, MS_BIND, nullptr) != 0) {
    failed = errno_text("bind the scratch directory");
    ok = false;
  }
  ::close(scratch_fd);
  // pivot_root(".", "."): the old root stacks under the new one and is then detached.
  if (ok && (::chdir(root.c_str()) != 0 || ::syscall(SYS_pivot_root, ".", ".") != 0)) {
    failed = errno_text("pivot_root");
    ok = false;
  }
  if (!ok) {
    ::umount2(scratch.c_str(), MNT_DETACH);  // the scratch directory visible again
    notes += "private root: " + failed + "; ";
    return false;
  }
  if (::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0) {
    notes += errno_text("private root: detaching the old root") + "; ";
    return false;
  }
  return true;
}

// --- Landlock -----------------------------------------------------------------------------------

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444  // the same numbers on every architecture
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
// <linux/landlock.h>, defined here: older headers lack the later access rights.
struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
};
struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};
constexpr uint32_t kLandlockCreateRulesetVersion = 1u << 0;
constexpr int kLandlockRulePathBeneath = 1;
namespace fs_access {
constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2, kReadDir = 1ull << 3;
constexpr uint64_t kAbi1 = (1ull << 13) - 1;  // also removing and making files, directories, links, ...
constexpr uint64_t kRefer = 1ull << 13;       // ABI 2: linking or renaming across directories
constexpr uint64_t kTruncate = 1ull << 14;    // ABI 3
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate;  // valid on a file
}  // namespace fs_access

class LandlockRuleset {
 public:
  LandlockRuleset(uint64_t handled) : handled_(handled) {
    LandlockRulesetAttr attr = {handled};
    fd_ = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  }
  ~LandlockRuleset() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool valid() const { return fd_ >= 0; }
  // Grants `access` beneath `path` (or on it, a file); a path this system lacks is skipped.
  bool allow(const std::string& path, uint64_t access) {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT;
    struct stat st;
    if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= fs_access::kFileRights;
    LandlockPathBeneathAttr rule = {access & handled_, fd};
    const bool ok = ::syscall(SYS_landlock_add_rule, fd_, kLandlockRulePathBeneath, &rule, 0) == 0;
    ::close(fd);
    return ok;
  }
  bool restrict_self() {
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::syscall(SYS_landlock_restrict_self, fd_, 0) == 0;
  }

 private:
  uint64_t handled_;
  int fd_ = -1;
};

// Reads beneath the system paths, reads and writes beneath the scratch directory, nothing else.
// Device ioctls (ABI 5) are not handled: descriptors a GPU driver opens later need them, and the
// character devices are chosen below.
int apply_landlock(const std::string& scratch, const std::vector<std::string>& library_dirs,
                   std::string& notes) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kLandlockCreateRulesetVersion);
  if (abi < 1) {
    notes += errno_text("landlock") + "; ";
    return 0;
  }
  uint64_t handled = fs_access::kAbi1;
  if (abi >= 2) handled |= fs_access::kRefer;
  if (abi >= 3) handled |= fs_access::kTruncate;
  const uint64_t read = fs_access::kReadFile | fs_access::kReadDir | fs_access::kExecute;
  const uint64_t device = fs_access::kReadFile | fs_access::kWriteFile | fs_access::kReadDir | fs_access::kTruncate;
  LandlockRuleset rules(handled);
  bool ok = rules.valid();
  for (const SystemPath& p : kSystemPaths)
    ok = ok && rules.allow(p.path, std::string(p.path) == "/dev" ? fs_access::kReadDir : read);
  for (const std::string& d : library_dirs) ok = ok && rules.allow(d, read);
  // Character devices directly in /dev (null, urandom, nvidia0, nvidiactl, nvidia-uvm, ...); not
  // /dev/shm or /dev/mqueue, where other processes' files are.
  if (DIR* dev = ::opendir("/dev")) {
    while (const struct dirent* e = ::readdir(dev)) {
      struct stat st;
      if (::fstatat(::dirfd(dev), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode))
        ok = ok && rules.allow(std::string("/dev/") + e->d_name, device);
    }
    ::closedir(dev);
  }
  for (const char* d : kGpuDeviceDirs) ok = ok && rules.allow(d, device);
  // OpenMP's registration file (kPrivateShm): the worker's own tmpfs under the private root; the
  // machine's /dev/shm where Landlock is the only layer (docs/EVALUATION.md, Known limits).
  struct stat shm;
  if (::stat(kPrivateShm, &shm) == 0) ok = ok && rules.allow(kPrivateShm, handled);
  ok = ok && rules.allow(scratch, handled);
  if (!ok || !rules.restrict_self()) {
    notes += errno_text("landlock") + "; ";
    return 0;
  }
  return static_cast<int>(abi);
}

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
  // System V IPC objects and POSIX message queues outlive the process: a later worker would find
  // what this one left (a memo, or data planted for another candidate).
  for (long nr : {SYS_shmget, SYS_msgget, SYS_semget, SYS_mq_open}) f.refuse(nr, eperm);
  // The new mount API, like mount(): the private root stays as built.
#ifdef SYS_open_tree
  for (long nr : {SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick})
    f.refuse(nr, eperm);
#endif
#ifdef SYS_mount_setattr
  f.refuse(SYS_mount_setattr, eperm);
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

  // Namespaces first: creating them needs the privileges dropped below. The libraries mapped now
  // (the GPU driver's) are listed before the root changes.
  const std::vector<std::string> library_dirs =
      config.scratch_dir.empty() ? std::vector<std::string>() : loaded_library_dirs(config.scratch_dir);
  const bool mount_namespace = enter_namespaces(report);
  if (mount_namespace && !config.scratch_dir.empty())
    report.private_root = enter_private_root(config.scratch_dir, library_dirs, report.notes);
  if (report.user_namespace) drop_capabilities();

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

  // Landlock after the private root, whose paths it names (the same files as outside it).
  if (!config.scratch_dir.empty()) report.landlock_abi = apply_landlock(config.scratch_dir, library_dirs, report.notes);
  if (config.seccomp) report.seccomp = install_seccomp_filter(report.notes);
  return report;
}

}  // namespace ekb::runtime
