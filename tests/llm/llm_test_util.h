// Helpers shared by the tests of src/llm and `ekb generate`.
#pragma once
#include <string>

#include "llm/model_profile.h"

namespace ekb::testing_llm {

// A profile for the loopback server: retries after milliseconds, so that tests take no time.
inline llm::ModelProfile fast_profile(const std::string& name, llm::ApiKind api, const std::string& endpoint) {
  llm::ModelProfile p;
  p.name = name;
  p.api = api;
  p.endpoint = endpoint;
  p.model = "test-model";
  p.connect_timeout_s = 2;
  p.timeout_s = 5;
  p.concurrency = 4;
  p.max_retries = 3;
  p.backoff_initial_s = 0.001;
  p.backoff_max_s = 0.01;
  return p;
}

}  // namespace ekb::testing_llm
