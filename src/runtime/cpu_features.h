// What a CPU is and which vector code it runs, as this process sees it: the facts ekb-device's
// `hello` reports (docs/DEVICES.md), and the check that a device can run a target's code.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/cpu_target.h"

namespace ekb::runtime {

// /proc/cpuinfo's text ("" where it cannot be read), and the value of its first "key : value" line
// with this key ("" if none).
std::string read_cpuinfo();
std::string cpuinfo_field(const std::string& cpuinfo, const std::string& key);

// This CPU's facts:
//   "cpu_model"      /proc/cpuinfo's model name ("Model", "uarch" or "CPU part" where a board gives
//                    no name); null when there is none
//   "features"       the vector and ISA features code may use, sorted: x86-64 from /proc/cpuinfo's
//                    flags (sse*, avx*, fma, f16c, bmi*, ...); aarch64 from AT_HWCAP/AT_HWCAP2 (neon,
//                    fp16, dotprod, sve, sve2, i8mm, bf16); riscv64 the single-letter extensions of
//                    AT_HWCAP, and v where the vlenb CSR reads
//   "sve_vl_bits"    aarch64: SVE's vector length for this process (PR_SVE_GET_VL); null without SVE
//   "rvv_vlen_bits"  riscv64: VLEN (the vlenb CSR times 8, read under a SIGILL guard since qemu-user
//                    does not report V in AT_HWCAP); null without V
// Under qemu-user the features and lengths are the emulated CPU's (-cpu max,sve256=on: sve, 256);
// /proc/cpuinfo, and so cpu_model, may be the host's.
nlohmann::json this_cpu_facts();

// Why a device whose `hello` reported `facts` cannot run code built for `target`: another triple,
// a feature it lacks, another fixed vector length. "" when it can.
std::string unmet_requirement(const CpuTarget& target, const nlohmann::json& facts);

}  // namespace ekb::runtime
