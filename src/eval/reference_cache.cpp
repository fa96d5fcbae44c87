#include "eval/reference_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "eval/kernel_interface.h"
#include "ir/printer.h"
#include "runtime/paths.h"

namespace ekb::eval {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'E', 'K', 'B', 'R', 'E', 'F', '1', '\n'};
constexpr std::string_view kExt = ".ref";

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads from a byte string, failing (not throwing) past its end.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  template <class T>
  bool get(T& v) {
    if (s_.size() - pos_ < sizeof v) return false;
    std::memcpy(&v, s_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return true;
  }
  bool bytes(void* dst, size_t n) {
    if (s_.size() - pos_ < n) return false;
    std::memcpy(dst, s_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == s_.size(); }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

std::string serialize(const StoredReference& ref) {
  std::string out(kMagic, sizeof kMagic);
  put(out, static_cast<uint32_t>(ref.expected.size()));
  for (size_t o = 0; o < ref.expected.size(); ++o) {
    const ir::TensorData& t = ref.expected[o];
    put(out, static_cast<uint8_t>(t.type));
    put(out, static_cast<uint64_t>(t.num_elements()));
    put(out, o < ref.rms.size() ? ref.rms[o] : 0.0);
    if (t.is_float()) {
      // The f64 answer itself: rounding it to the output's type would change the reference.
      out.append(reinterpret_cast<const char*>(t.f.data()), t.f.size() * sizeof(double));
    } else {
      // Integer answers are exact values of their type, so its own width holds them.
      std::vector<uint8_t> b = ir::to_bytes(t);
      out.append(reinterpret_cast<const char*>(b.data()), b.size());
    }
  }
  put(out, static_cast<uint32_t>(ref.reference_error.size()));
  out += ref.reference_error;
  put(out, static_cast<uint64_t>(XXH3_64bits(out.data(), out.size())));
  return out;
}

std::optional<StoredReference> deserialize(std::string_view s, const ir::Instance& inst) {
  if (s.size() < sizeof kMagic + sizeof(uint64_t) || std::memcmp(s.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  uint64_t sum = 0;
  std::memcpy(&sum, s.data() + s.size() - sizeof sum, sizeof sum);
  s.remove_suffix(sizeof sum);
  if (XXH3_64bits(s.data(), s.size()) != sum) return std::nullopt;
  s.remove_prefix(sizeof kMagic);

  const KernelInterface k = kernel_interface(inst);
  Reader in(s);
  uint32_t n = 0;
  if (!in.get(n) || n != k.outputs.size()) return std::nullopt;
  StoredReference ref;
  for (const ir::TensorInstance* decl : k.outputs) {
    uint8_t type = 0;
    uint64_t count = 0;
    double rms = 0;
    if (!in.get(type) || !in.get(count) || !in.get(rms)) return std::nullopt;
    if (type != static_cast<uint8_t>(decl->type) || count != static_cast<uint64_t>(decl->num_elements()))
      return std::nullopt;
    ir::TensorData t;
    if (ir::is_float(decl->type)) {
      t = ir::TensorData(decl->type, decl->shape);
      if (!in.bytes(t.f.data(), count * sizeof(double))) return std::nullopt;
    } else {
      std::vector<uint8_t> b(count * ir::byte_size(decl->type));
      if (!in.bytes(b.data(), b.size())) return std::nullopt;
      t = ir::from_bytes(decl->type, decl->shape, b.data(), b.size());
    }
    ref.expected.push_back(std::move(t));
    ref.rms.push_back(rms);
  }
  uint32_t len = 0;
  if (!in.get(len)) return std::nullopt;
  ref.reference_error.resize(len);
  if (!in.bytes(ref.reference_error.data(), len) || !in.at_end()) return std::nullopt;
  return ref;
}

}  // namespace

ReferenceCache::ReferenceCache(const std::string& cache_root, uint64_t max_bytes)
    : files_(cache_root, "reference"), max_bytes_(max_bytes) {}

std::optional<ReferenceCache> ReferenceCache::default_cache() {
  uint64_t mb = 4096;
  if (const char* env = std::getenv("EKB_REFERENCE_CACHE_MB"); env && *env) mb = std::strtoull(env, nullptr, 10);
  if (mb == 0) return std::nullopt;
  return ReferenceCache(runtime::default_cache_dir(), mb << 20);
}

std::string ReferenceCache::key(const ir::Instance& inst, uint64_t seed, const std::string& kind) {
  return runtime::content_key({"ekb.reference/1", runtime::executable_content_key(),
                               ir::print_pattern(inst.pattern()), ir::print_workload(*inst.workload),
                               kind, std::to_string(seed)});
}

std::optional<StoredReference> ReferenceCache::load(const std::string& key, const ir::Instance& inst) const {
  const std::string path = files_.artifact_path(key, kExt);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::optional<StoredReference> ref = deserialize(bytes, inst);
  std::error_code ec;
  if (!ref) {
    fs::remove(path, ec);
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used: evicted last
  return ref;
}

void ReferenceCache::store(const std::string& key, const StoredReference& ref) const {
  const std::string bytes = serialize(ref);
  if (bytes.size() > max_bytes_ / 4) return;  // one answer may not crowd out the rest
  try {
    const std::string tmp = files_.temporary_path(kExt);
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        std::error_code ec;
        fs::remove(tmp, ec);
        return;
      }
    }
    files_.publish(tmp, key, kExt);
    evict_if_over_budget();
  } catch (const std::exception&) {
    // best effort
  }
}

void ReferenceCache::evict_if_over_budget() const {
  struct Entry {
    fs::file_time_type used;
    uint64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(files_.directory(), ec)) {
    if (e.path().extension() != kExt) continue;
    std::error_code ec2;
    uint64_t bytes = e.file_size(ec2);
    fs::file_time_type used = e.last_write_time(ec2);
    if (ec2) continue;
    entries.push_back({used, bytes, e.path()});
    total += bytes;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  // Down to 90% of the budget, so that the next few stores do not each rescan the directory.
  for (const Entry& e : entries) {
    if (total <= max_bytes_ / 10 * 9) break;
    std::error_code ec2;
    if (fs::remove(e.path, ec2)) total -= e.bytes;
  }
}

}  // namespace ekb::eval
