// A scratch path private to the running test: ctest runs tests of one binary in parallel
// processes, so a fixed name under TempDir() would be shared, and overwritten, between them.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace ekb::testing {

inline std::string private_temp_path(const std::string& stem, const std::string& ext = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  for (char& c : name)
    if (c == '/') c = '_';
  return ::testing::TempDir() + "/" + stem + "_" + name + "_" + std::to_string(::getpid()) + ext;
}

}  // namespace ekb::testing
