// The compile cache: artifacts stored under a content hash of everything that determines them
// (source text, language, compiler command and flags, compiler version, ABI header text), so a
// re-run, a repeated sample or the baseline of every candidate compiles once.
//
// Layout: <cache_dir>/<backend>/<key>.<ext> with the source beside it as <key>.src for debugging.
// Publishing is a rename of a finished file into place, so concurrent ekb processes sharing a
// cache never see a half-written artifact; the worst case is compiling the same key twice.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

namespace ekb::runtime {

// XXH3-128 of the parts, each length-prefixed (so ("ab","c") and ("a","bc") differ), as 32 hex digits.
std::string content_key(std::initializer_list<std::string_view> parts);

class CompileCache {
 public:
  // `dir` is the cache root (runtime::default_cache_dir() by default); `backend` a subdirectory.
  CompileCache(std::string dir, std::string backend);

  const std::string& directory() const { return backend_dir_; }
  // Where the artifact of `key` lives (whether or not it exists yet).
  std::string artifact_path(const std::string& key, std::string_view ext) const;
  bool contains(const std::string& key, std::string_view ext) const;
  // A fresh private path in the cache directory for a compiler to write to (same file system,
  // so publish() can rename it into place). Creates the directory on first use.
  std::string temporary_path(std::string_view ext) const;
  // Moves a finished file to artifact_path(key, ext), world-readable (workers may run as an
  // unprivileged user); returns that path. Throws std::runtime_error on failure.
  std::string publish(const std::string& temporary, const std::string& key, std::string_view ext) const;
  // Writes `text` beside the artifact as <key>.src (best effort: failures are ignored).
  void store_source(const std::string& key, std::string_view text) const;

 private:
  std::string backend_dir_;
};

}  // namespace ekb::runtime

namespace ekb::runtime {

// content_key() of the running executable's bytes, computed once: what a cache of answers the
// program itself computed (not a compiler) is keyed by.
const std::string& executable_content_key();

}  // namespace ekb::runtime
