// Content-addressed store of model answers: the same request (protocol, endpoint, model, system
// and user prompt, temperature, max tokens) for the same sample index is answered from disk, with
// the usage and cost the original call had, so a re-run spends nothing and reports the same ledger.
// Entries live in <cache dir>/llm/<key>.json (the project's cache root, runtime::default_cache_dir())
// and are published by rename, so concurrent processes never read half an entry.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "llm/chat_api.h"
#include "llm/model_profile.h"
#include "runtime/compile_cache.h"

namespace ekb::llm {

// XXH3-64 of `text` as 16 hex digits: the prompt hash recorded with every generated sample
// (of the text `ekb prompt W --backend B` prints).
std::string prompt_hash(std::string_view text);

// One answered call as stored: the reply and what producing it cost.
struct StoredCall {
  ChatReply reply;
  int llm_calls = 1;  // attempts, retries included
  double latency_s = 0;
  double wall_s = 0;
  double cost_usd = 0;
};

class ResponseCache {
 public:
  // `cache_root` is the project's cache directory; entries go to its llm/ subdirectory.
  explicit ResponseCache(const std::string& cache_root);

  // `identity`, when not empty, stands for the user prompt: a caller whose prompt carries noise (an
  // agent's measured times) keys the answer on what it depends on, so that a replay whose
  // measurements differ still finds it.
  static std::string key(const ModelProfile& profile, const ChatRequest& request, int sample,
                         std::string_view identity = {});
  std::optional<StoredCall> find(const std::string& key) const;
  void store(const std::string& key, const StoredCall& call) const;  // best effort: failures are ignored
  const std::string& directory() const { return files_.directory(); }

 private:
  runtime::CompileCache files_;  // the same atomic content-addressed file store the compile cache uses
};

}  // namespace ekb::llm
