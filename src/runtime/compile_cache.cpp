#include "runtime/compile_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <system_error>

#define XXH_INLINE_ALL  // header-only use: nothing extra to link
#include <xxhash.h>

#include "runtime/paths.h"

namespace ekb::runtime {

std::string content_key(std::initializer_list<std::string_view> parts) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (std::string_view p : parts) {
    uint64_t n = p.size();
    XXH3_128bits_update(state, &n, sizeof n);
    XXH3_128bits_update(state, p.data(), p.size());
  }
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return hex;
}

const std::string& executable_content_key() {
  static const std::string key = [] {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw std::runtime_error("cannot read the running executable");
    return content_key({bytes});
  }();
  return key;
}

CompileCache::CompileCache(std::string dir, std::string backend)
    : backend_dir_(std::move(dir) + "/" + std::move(backend)) {}

std::string CompileCache::artifact_path(const std::string& key, std::string_view ext) const {
  return backend_dir_ + "/" + key + std::string(ext);
}

bool CompileCache::contains(const std::string& key, std::string_view ext) const {
  std::error_code ec;
  return std::filesystem::is_regular_file(artifact_path(key, ext), ec);
}

std::string CompileCache::temporary_path(std::string_view ext) const {
  make_directories(backend_dir_);
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  char name[96];
  std::snprintf(name, sizeof name, "/tmp-%d-%llx-%llu", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(salt),
                static_cast<unsigned long long>(counter.fetch_add(1)));
  return backend_dir_ + name + std::string(ext);
}

std::string CompileCache::publish(const std::string& temporary, const std::string& key,
                                  std::string_view ext) const {
  std::string final_path = artifact_path(key, ext);
  ::chmod(temporary.c_str(), 0755);
  if (std::rename(temporary.c_str(), final_path.c_str()) != 0) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    throw std::runtime_error("cannot move " + temporary + " into the compile cache at " + final_path);
  }
  return final_path;
}

void CompileCache::store_source(const std::string& key, std::string_view text) const {
  std::string tmp = temporary_path(".src");
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) return;
  }
  std::rename(tmp.c_str(), (backend_dir_ + "/" + key + ".src").c_str());
}

}  // namespace ekb::runtime
