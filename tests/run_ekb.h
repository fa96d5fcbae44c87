// Running the built `ekb` binary from a test: shell-text arguments, optional standard input, both
// output streams and the exit code captured. Shared by every test that drives the CLI.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ekb::testing_cli {

struct EkbResult {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `ekb ARGS` through the shell (ARGS is shell text), feeding `stdin_text` on standard input.
inline EkbResult run_ekb(const std::string& args, const std::string& stdin_text = "") {
  static int counter = 0;
  std::string base = ::testing::TempDir() + "ekb_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  std::ofstream(base + ".in") << stdin_text;
  std::string cmd = std::string(EKB_BINARY) + " " + args + " <" + base + ".in >" + base + ".out 2>" + base + ".err";
  int status = std::system(cmd.c_str());
  EkbResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

// A solution of linalg.gemm/mini that computes a wrong value but is a valid program: the native
// default lowering with 1 added to its last store, written as DIR/linalg.gemm/mini.c.
inline void write_wrong_gemm_mini(const std::string& dir) {
  EkbResult emitted = run_ekb("emit linalg.gemm/mini");
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  std::string text = emitted.out;
  const size_t at = text.rfind("] = ");
  ASSERT_NE(at, std::string::npos) << text;
  text.insert(at + 4, "1.0f + ");
  std::system(("mkdir -p '" + dir + "/linalg.gemm'").c_str());
  std::ofstream(dir + "/linalg.gemm/mini.c") << text;
}

}  // namespace ekb::testing_cli
