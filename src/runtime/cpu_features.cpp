#include "runtime/cpu_features.h"

#include <sys/auxv.h>
#include <sys/prctl.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#if defined(__riscv)
#include <setjmp.h>
#include <signal.h>
#endif

namespace ekb::runtime {

namespace {

using json = nlohmann::json;

// SVE's vector length in bits for this process (PR_SVE_GET_VL); null without SVE.
json sve_vector_bits() {
#if defined(__aarch64__) && defined(PR_SVE_GET_VL) && defined(PR_SVE_VL_LEN_MASK)
  const int r = ::prctl(PR_SVE_GET_VL, 0, 0, 0, 0);
  if (r > 0) return (r & PR_SVE_VL_LEN_MASK) * 8;
#endif
  return nullptr;
}

#if defined(__riscv)
sigjmp_buf g_no_vector;
void on_sigill(int) { siglongjmp(g_no_vector, 1); }
#endif

// RVV's VLEN in bits (the vlenb CSR times 8); null without the V extension. Read, not taken from
// AT_HWCAP, which qemu-user does not set for V: an illegal-instruction trap means no V.
json rvv_vector_bits() {
#if defined(__riscv) && __riscv_xlen == 64
  struct sigaction trap = {}, old = {};
  trap.sa_handler = on_sigill;
  sigemptyset(&trap.sa_mask);
  if (::sigaction(SIGILL, &trap, &old) != 0) return nullptr;
  unsigned long vlenb = 0;
  if (sigsetjmp(g_no_vector, 1) == 0) asm volatile("csrr %0, 0xc22" : "=r"(vlenb));  // 0xc22: vlenb
  ::sigaction(SIGILL, &old, nullptr);
  if (vlenb) return static_cast<uint64_t>(vlenb) * 8;
#endif
  return nullptr;
}

// The features compiled code may depend on, from what this architecture's kernel (or qemu-user)
// reports: the flags that -march=native turns into instructions on x86-64, the hwcaps elsewhere.
std::set<std::string> features(const std::string& cpuinfo) {
  std::set<std::string> out;
#if defined(__x86_64__)
  static const std::vector<std::string> kPrefixes = {"sse", "ssse3", "avx", "fma", "f16c", "bmi", "amx", "gfni",
                                                     "vaes", "vpclmulqdq", "popcnt", "movbe", "abm", "adx"};
  std::istringstream flags(cpuinfo_field(cpuinfo, "flags"));
  for (std::string f; flags >> f;)
    if (std::any_of(kPrefixes.begin(), kPrefixes.end(), [&](const std::string& p) { return f.rfind(p, 0) == 0; }))
      out.insert(f);
#elif defined(__aarch64__)
  (void)cpuinfo;
  const unsigned long hwcap = ::getauxval(AT_HWCAP);
  [[maybe_unused]] const unsigned long hwcap2 = ::getauxval(AT_HWCAP2);
  const std::pair<unsigned long, const char*> caps[] = {
#ifdef HWCAP_ASIMD
      {HWCAP_ASIMD, "neon"},
#endif
#ifdef HWCAP_ASIMDHP
      {HWCAP_ASIMDHP, "fp16"},
#endif
#ifdef HWCAP_ASIMDDP
      {HWCAP_ASIMDDP, "dotprod"},
#endif
#ifdef HWCAP_SVE
      {HWCAP_SVE, "sve"},
#endif
      {0, ""}};
  for (const auto& [bit, name] : caps)
    if (bit && (hwcap & bit)) out.insert(name);
#ifdef HWCAP2_SVE2
  if (hwcap2 & HWCAP2_SVE2) out.insert("sve2");
#endif
#ifdef HWCAP2_I8MM
  if (hwcap2 & HWCAP2_I8MM) out.insert("i8mm");
#endif
#ifdef HWCAP2_BF16
  if (hwcap2 & HWCAP2_BF16) out.insert("bf16");
#endif
#elif defined(__riscv)
  (void)cpuinfo;
  const unsigned long hwcap = ::getauxval(AT_HWCAP);  // bit N: the single-letter extension 'a' + N
  for (int bit = 0; bit < 26; ++bit)
    if (hwcap & (1UL << bit)) out.insert(std::string(1, static_cast<char>('a' + bit)));
  if (!rvv_vector_bits().is_null()) out.insert("v");
#else
  (void)cpuinfo;
#endif
  return out;
}

}  // namespace

std::string read_cpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string cpuinfo_field(const std::string& cpuinfo, const std::string& key) {
  std::istringstream in(cpuinfo);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t b = line.find_first_not_of(" \t", colon + 1);
    return b == std::string::npos ? "" : line.substr(b);
  }
  return "";
}

json this_cpu_facts() {
  const std::string info = read_cpuinfo();
  json j;
  json model = nullptr;
  for (const char* key : {"model name", "Model", "uarch", "CPU part"})
    if (std::string m = cpuinfo_field(info, key); !m.empty()) {
      model = m;
      break;
    }
  j["cpu_model"] = model;
  j["features"] = features(info);
  j["sve_vl_bits"] = sve_vector_bits();
  j["rvv_vlen_bits"] = rvv_vector_bits();
  return j;
}

std::string unmet_requirement(const CpuTarget& target, const json& facts) {
  const std::string triple = facts.value("triple", "");
  if (triple != target.system_triple) return "it runs " + triple + " code, not " + target.system_triple;
  const auto have_features = facts.find("features");
  if (have_features == facts.end() || !have_features->is_array())
    return "it reports no CPU features (an ekb-device older than this ekb: install this version's)";
  const std::set<std::string> have = have_features->get<std::set<std::string>>();
  // The host's code is built with -march=native: a device needs every feature of this CPU.
  const std::vector<std::string> needed = target.is_host() ? this_cpu_facts()["features"].get<std::vector<std::string>>()
                                                           : target.required_features;
  std::string missing;
  for (const std::string& f : needed)
    if (!have.count(f)) missing += (missing.empty() ? "" : ", ") + f;
  if (!missing.empty())
    return "it lacks " + missing + (target.is_host() ? " (this host's code is built with -march=native)" : "");
  // Fixed-length vector code computes wrong results at any other length.
  auto length = [&](const char* key) { return facts.contains(key) && facts[key].is_number() ? facts[key].get<int>() : 0; };
  auto bits = [](int n) { return n ? std::to_string(n) + "-bit" : std::string("no"); };
  if (target.sve_vector_bits && length("sve_vl_bits") != target.sve_vector_bits)
    return "it has " + bits(length("sve_vl_bits")) + " SVE vectors; " + target.triple + "'s code is fixed to " +
           std::to_string(target.sve_vector_bits);
  if (target.rvv_vector_bits && length("rvv_vlen_bits") != target.rvv_vector_bits)
    return "it has " + bits(length("rvv_vlen_bits")) + " RVV vectors (VLEN); " + target.triple + "'s code is fixed to " +
           std::to_string(target.rvv_vector_bits);
  return "";
}

}  // namespace ekb::runtime
