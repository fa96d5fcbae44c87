// What the tvm tests share: a workload of the embedded suite bound to its instance, and a
// substring check for TVM's messages and generated sources.
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen/suite_params.h"
#include "suite/suite.h"

namespace ekb::tvm::testing {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline ir::Instance bind(const std::string& name) { return codegen::testing::bound_workload(name); }

// A stand-in for the bridge package: root/ekb_tvm speaking the serve protocol (tvm/bridge_server.h),
// answering each request with `answer`, Python lines run with `request` and `result` (the two
// paths) and `json` and `sys` imported. Point TvmOptions::bridge_dir (or $EKB_TVM_BRIDGE) at root.
inline void write_stand_in_bridge(const std::filesystem::path& root, const std::string& answer) {
  std::filesystem::create_directories(root / "ekb_tvm");
  std::ofstream(root / "ekb_tvm" / "__init__.py") << "";
  std::ostringstream body;
  std::istringstream lines(answer);
  for (std::string line; std::getline(lines, line);) body << "    " << line << "\n";
  std::ofstream(root / "ekb_tvm" / "__main__.py")
      << "import json, sys\n"
         "def answer(request, result):\n"
      << body.str()
      << "for line in sys.stdin:\n"
         "    answer(*line.rstrip('\\n').split('\\t'))\n"
         "    print('done', flush=True)\n";
}

}  // namespace ekb::tvm::testing
