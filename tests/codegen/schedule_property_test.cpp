// Property: a random *legal* schedule never changes results. For a spread of small workloads from
// every suite domain, seeded random directive sequences are grown one directive at a time: a
// directive the verifier or the schedule passes reject (with a diagnostic, never a crash) is
// dropped, an accepted one kept. Every final schedule is compiled (several kernels per clang run,
// entry points renamed) and must match the reference. The directives include placements
// (compute_at/inline/root) and the memory layer (cache_read/write, layout, align), each
// consecutive run of memory directives in a `memory cpu` block. $EKB_SCHEDULE_SEED varies the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>

#include "../lower/lower_test_util.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "lower/lower.h"
#include "suite/suite.h"

namespace ekb::codegen {
namespace {

constexpr int kPatternsPerDomain = 4;
constexpr int kSchedulesPerWorkload = 8;
constexpr int kMaxElements = 200000;  // keeps the reference interpreter fast

const suite::Suite& embedded() {
  static const suite::Suite s = suite::Suite::load();
  return s;
}

int64_t total_elements(const ir::Instance& inst) {
  int64_t n = 0;
  for (const auto& t : inst.tensors) n += t.num_elements();
  return n;
}

// The smallest micro workload of each of the first patterns of every domain.
std::vector<suite::WorkloadEntry> spread() {
  std::map<std::string, std::vector<suite::WorkloadEntry>> by_domain;
  for (const auto& w : embedded().workloads()) {
    if (!w.workload->has_tag("micro")) continue;
    auto& ws = by_domain[w.pattern->module.pattern.domain()];
    int64_t n = total_elements(suite::bind_workload(w));
    if (n > kMaxElements) continue;
    auto same = std::find_if(ws.begin(), ws.end(), [&](const auto& x) { return x.pattern == w.pattern; });
    if (same == ws.end()) ws.push_back(w);
    else if (n < total_elements(suite::bind_workload(*same))) *same = w;
  }
  std::vector<suite::WorkloadEntry> out;
  for (auto& [domain, ws] : by_domain) {
    std::sort(ws.begin(), ws.end(), [](const auto& a, const auto& b) { return a.full_name() < b.full_name(); });
    for (size_t i = 0; i < ws.size() && i < kPatternsPerDomain; ++i) out.push_back(ws[i]);
  }
  return out;
}

// A module (the suite pattern plus a schedule) bound to the workload.
struct Scheduled {
  std::unique_ptr<ir::Module> module;
  std::optional<ir::Instance> inst;
  std::string error;  // verifier or schedule diagnostic; empty when it lowers
  lir::Func func;     // after apply_schedule
};

bool is_memory_directive(const std::string& d) {
  for (const char* verb : {"cache_read(", "cache_write(", "layout(", "align("})
    if (d.rfind(verb, 0) == 0) return true;
  return false;
}

Scheduled schedule_module(const suite::WorkloadEntry& w, const std::vector<std::string>& directives) {
  Scheduled s;
  // Directives in order, consecutive ones of a layer in one block (blocks apply in file order).
  std::string text = ir::print_pattern(w.pattern->module.pattern) + "\n", open;
  for (const std::string& d : directives) {
    std::string block = is_memory_directive(d) ? "memory" : "schedule";
    if (block != open) text += (open.empty() ? "" : "}\n") + block + " cpu {\n";
    open = block;
    text += "  " + d + "\n";
  }
  if (!open.empty()) text += "}\n";
  s.module = std::make_unique<ir::Module>(ir::parse_module(text, "random.ekb"));
  s.module->workloads = {*w.workload};
  ir::Diagnostics diags("random.ekb");
  s.inst = ir::instantiate(*s.module, s.module->workloads[0], diags);
  if (!s.inst) {
    s.error = diags.format();
    return s;
  }
  lower::LowerOptions o;
  o.stop_after = "apply_schedule";
  try {
    s.func = lower::lower(*s.inst, o);
  } catch (const lower::ScheduleError& e) {
    s.error = e.what();
  }
  return s;
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  // One random directive for the stages as they are now (loops named by the schedule so far).
  std::string propose(const lir::Func& f) {
    const lir::Stage& st = f.stages[pick(f.stages.size())];
    std::vector<const lir::StageLoop*> loops, reductions;
    for (const auto& l : st.loops)
      if (l.name.find('.') == std::string::npos) {
        loops.push_back(&l);
        if (l.role == lir::LoopRole::Reduction) reductions.push_back(&l);
      }
    if (loops.empty()) return "";
    std::string s = st.name, a = loops[pick(loops.size())]->name, b = loops[pick(loops.size())]->name;
    auto fresh = [&] { return "l" + std::to_string(counter_++); };
    static const char* tails[] = {"guard", "shift_inwards", "round_up", "peel"};
    static const int factors[] = {2, 3, 4, 8, 16};
    std::string tail = std::string(", tail=") + tails[pick(4)];
    switch (pick(12)) {
      case 9:
      case 10:
        if (std::string d = propose_memory(f, s, a); !d.empty()) return d;
        return "parallel(" + s + ", " + a + ")";
      case 0:
      case 1:
        return "split(" + s + ", " + a + ", " + std::to_string(factors[pick(5)]) + ", " + fresh() + ", " + fresh() +
               tail + ")";
      case 2:
        return "tile(" + s + ", " + a + ", " + b + ", " + std::to_string(factors[pick(5)]) + ", " +
               std::to_string(factors[pick(5)]) + ", " + fresh() + ", " + fresh() + ", " + fresh() + ", " + fresh() +
               tail + ")";
      case 3: {
        std::vector<const lir::StageLoop*> order = loops;
        std::shuffle(order.begin(), order.end(), rng_);
        order.resize(std::min<size_t>(order.size(), 2 + pick(2)));
        std::string out = "reorder(" + s;
        for (const auto* l : order) out += ", " + l->name;
        return out + ")";
      }
      case 4:
        return "fuse(" + s + ", " + a + ", " + b + ", " + fresh() + ")";
      case 5:
        return "parallel(" + s + ", " + a + ")";
      case 6:
        return "vectorize(" + s + ", " + a + ", " + std::to_string(pick(2) ? 8 : 4) + ")";
      case 7:
        return "unroll(" + s + ", " + a + ", " + std::to_string(2 + pick(3)) + ")";
      default:
        if (reductions.empty()) return "parallel(" + s + ", " + a + ")";
        return "rfactor(" + s + ", " + reductions[pick(reductions.size())]->name + ", rf" +
               std::to_string(counter_++) + ")";
    }
  }

  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

 private:
  // A placement or memory directive around stage s and its loop a: compute_at/inline/root of a
  // temp, cache_read of a tensor s may read, cache_write of s, layout or align of a tensor.
  std::string propose_memory(const lir::Func& f, const std::string& s, const std::string& a) {
    std::vector<const lir::Buffer*> temps, readable;
    for (const auto& b : f.buffers) {
      if (b.role == lir::BufferRole::Output) continue;
      if (b.role == lir::BufferRole::Temp && !f.packed_inputs.empty() && b.name.find("_packed") != std::string::npos)
        continue;
      readable.push_back(&b);
      const lir::Stage* st = nullptr;
      for (const auto& x : f.stages)
        if (x.name == b.name) st = &x;
      if (b.role == lir::BufferRole::Temp && st && st->placement.empty()) temps.push_back(&b);
    }
    static const char* scopes[] = {"tile", "local", "global"};
    std::string scope = scopes[pick(3)], name = "m" + std::to_string(counter_++);
    switch (pick(6)) {
      case 0:
        if (temps.empty()) return "";
        return "compute_at(" + temps[pick(temps.size())]->name + ", " + s + ", " + a + ")";
      case 1:
        if (temps.empty()) return "";
        return (pick(2) ? "compute_inline(" : "compute_root(") + temps[pick(temps.size())]->name + ")";
      case 2:
        if (readable.empty()) return "";
        return "cache_read(" + readable[pick(readable.size())]->name + ", " + s + ", " + a + ", " + scope + ", " +
               name + ")";
      case 3:
        return "cache_write(" + s + ", " + a + ", " + scope + ", " + name + ")";
      default: {
        if (readable.empty()) return "";
        const lir::Buffer& b = *readable[pick(readable.size())];
        size_t rank = b.shape.size();
        if (pick(4) == 0) return "align(" + b.name + ", " + std::to_string(pick(2) ? 64 : 16) + ")";
        if (pick(2)) return "layout(" + b.name + ", pack(" + std::to_string(pick(rank)) + ", " + std::to_string(2 + pick(7)) + "))";
        std::vector<size_t> order(rank);
        for (size_t d = 0; d < rank; ++d) order[d] = d;
        std::shuffle(order.begin(), order.end(), rng_);
        std::string out = "layout(" + b.name + ", order(";
        for (size_t d = 0; d < rank; ++d) out += (d ? ", " : "") + std::to_string(order[d]);
        return out + "))";
      }
    }
  }

  std::mt19937_64 rng_;
  int counter_ = 0;
};

TEST(ScheduleProperty, RandomLegalSchedulesMatchTheReference) {
  const char* env = std::getenv("EKB_SCHEDULE_SEED");
  uint64_t seed = env ? std::stoull(env) : 2024;
  int schedules = 0, directives = 0, rejected = 0, placements_and_memory = 0;
  std::set<std::string> domains;
  for (const suite::WorkloadEntry& w : spread()) {
    Generator gen(seed ^ std::hash<std::string>{}(w.full_name()));
    std::vector<Scheduled> batch;
    std::vector<std::string> sources, texts;
    for (int n = 0; n < kSchedulesPerWorkload; ++n) {
      std::vector<std::string> kept;
      Scheduled current = schedule_module(w, kept);
      ASSERT_EQ(current.error, "") << w.full_name();
      size_t want = 1 + gen.pick(5);
      for (int attempt = 0; attempt < 20 && kept.size() < want; ++attempt) {
        std::string d = gen.propose(current.func);
        if (d.empty()) continue;
        kept.push_back(d);
        Scheduled next = schedule_module(w, kept);
        if (!next.error.empty()) {
          ASSERT_NE(next.error.find("random.ekb:"), std::string::npos) << "an error without a location: " << next.error;
          kept.pop_back();
          ++rejected;
          continue;
        }
        current = std::move(next);
      }
      directives += static_cast<int>(kept.size());
      for (const auto& d : kept)
        placements_and_memory += is_memory_directive(d) || d.rfind("compute_", 0) == 0;
      std::string text;
      for (const auto& d : kept) text += d + "\n";
      CEmitOptions names{"ekb_s" + std::to_string(n), "ekb_scratch_s" + std::to_string(n)};
      sources.push_back(emit_c_source(lower::lower(*current.inst), names));
      texts.push_back(text);
      batch.push_back(std::move(current));
    }
    std::optional<testing::NativeKernel> compiled;
    try {
      compiled.emplace(sources, "-O1 -march=native -fopenmp");
    } catch (const std::exception& e) {
      std::string all;
      for (const auto& t : texts) all += "---\n" + t;
      FAIL() << w.full_name() << ": the scheduled kernels do not compile; schedules:\n" << all << e.what();
    }
    testing::NativeKernel& kernel = *compiled;
    const ir::Instance& inst = *batch[0].inst;
    auto inputs = ir::generate_inputs(inst, seed);
    auto want = ir::run_reference(inst, inputs);
    for (size_t n = 0; n < batch.size(); ++n) {
      auto got = testing::run_native(kernel, *batch[n].inst, inputs, "ekb_s" + std::to_string(n),
                                     "ekb_scratch_s" + std::to_string(n));
      EXPECT_EQ(testing::compare_outputs(inst, got, want), "")
          << w.full_name() << " with schedule\n" << texts[n] << "\n" << sources[n];
      ++schedules;
    }
    domains.insert(w.pattern->module.pattern.domain());
  }
  EXPECT_EQ(domains.size(), ir::pattern_domains().size());
  EXPECT_GE(schedules, 200);
  EXPECT_GE(directives, schedules);  // most schedules are not empty
  EXPECT_GE(placements_and_memory * 10, directives);  // the memory layer is exercised too
  std::printf("%d random schedules (%d directives kept, %d of them placements or memory; %d rejected as illegal) "
              "over %zu domains\n",
              schedules, directives, placements_and_memory, rejected, domains.size());
}

}  // namespace
}  // namespace ekb::codegen
