// ekb generate --model PROFILE --backend B --samples N --temperature T [selection] --out DIR:
// direct generation. Each selected workload's task statement (`ekb prompt`) goes to the model N
// times; the code block of each reply becomes DIR/PATTERN/WORKLOAD.sN.EXT (docs/SOLUTIONS.md) with
// its record WORKLOAD.sN.meta.json (docs/GENERATION.md). Samples already recorded are skipped (a
// killed run resumes), requests run in parallel within the profile's concurrency, and a sample that
// fails (server down, no code) is recorded as such while the run goes on.
#include <fmt/core.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/progress.h"
#include "llm/code_extraction.h"
#include "llm/llm_client.h"
#include "eval/solution_meta.h"
#include "llm/sample_files.h"
#include "runtime/paths.h"
#include "suite/selection.h"
#include "suite/task_statement.h"

namespace ekb::cli {

namespace {

struct GenerateOptions {
  std::string profile;
  std::string models_path;  // default: llm::default_models_path()
  ir::Target backend = ir::Target::Cpu;
  int samples = 1;
  std::optional<double> temperature;  // default: the profile's
  suite::Selection selection;
  bool exclude_heldout = false;
  std::string out;
  bool replay = false;
  bool no_cache = false;
  std::string cache_dir;  // default: runtime::default_cache_dir()
  std::string log_path;   // default: OUT/llm-requests.jsonl
  eval::Shard shard;      // --shard I/N: the samples this process generates
};

// One prompt, shared by the samples of its workload.
struct WorkloadPrompt {
  std::string workload;  // pattern/workload
  std::string text;
  std::string hash;
};

struct SampleJob {
  const WorkloadPrompt* prompt;
  int sample;
};

struct Totals {
  int ok = 0, no_code = 0, failed = 0, cached = 0;
  long long llm_calls = 0, input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;
};

// Whether sample `sample` of `p` is already done. A record made for another profile, prompt or
// temperature means DIR holds another experiment: refuse rather than mix them. A failed sample is
// tried again (an outage should not be permanent); ok and no_code ones are kept.
bool already_recorded(const GenerateOptions& o, const llm::ModelProfile& profile, double temperature,
                      const WorkloadPrompt& p, int sample) {
  const std::string path = llm::sample_meta_path(o.out, p.workload, sample);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return false;
  eval::SolutionMeta r;
  try {
    r = eval::read_solution_meta(path);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(e.what()) + "\n  hint: delete it to generate that sample again");
  }
  if (r.profile != profile.name || r.prompt_hash != p.hash || r.temperature != temperature)
    throw UsageError(fmt::format(
        "{} was generated with profile '{}', prompt {} at temperature {}, not '{}', prompt {} at {:g}\n"
        "  hint: one --out directory holds one experiment (profile, backend, temperature); choose another",
        path, r.profile, r.prompt_hash, r.temperature ? fmt::format("{:g}", *r.temperature) : "(none)", profile.name,
        p.hash, temperature));
  return r.status != "failed";
}

eval::SolutionMeta generate_sample(llm::LlmClient& client, const GenerateOptions& o, double temperature,
                                  const SampleJob& job) {
  const llm::ModelProfile& profile = client.profile();
  llm::ChatRequest request{profile.system_prompt, job.prompt->text, temperature, profile.max_tokens, job.sample};
  eval::SolutionMeta r;
  r.method = "direct";
  r.profile = profile.name;
  r.model = profile.model;
  r.endpoint_kind = std::string(llm::api_kind_name(profile.api));
  r.prompt_hash = job.prompt->hash;
  r.sample = job.sample;
  r.temperature = temperature;

  llm::CallOutcome call = client.complete(request, job.sample);  // throws ReplayMiss only
  r.ledger.llm_calls = call.llm_calls;
  r.ledger.input_tokens = call.input_tokens;
  r.ledger.output_tokens = call.output_tokens;
  r.ledger.cost_usd = call.cost_usd;
  r.ledger.wall_s = call.wall_s;  // evaluations: none, direct generation compiles nothing
  r.latency_s = call.latency_s;
  r.cached = call.cached;
  llm::remove_sample_code(o.out, job.prompt->workload, job.sample);
  if (!call.ok) {
    r.status = "failed";
    r.error = call.error;
  } else if (llm::Extraction e = llm::extract_code(call.reply.text, o.backend); !e.code) {
    r.status = "no_code";
    r.error = e.no_code_reason;
  } else {
    runtime::write_file_atomically(llm::sample_code_path(o.out, job.prompt->workload, job.sample, e.code->extension),
                               e.code->code);
    r.status = "ok";
  }
  // The record last: it is what marks the sample done for a resumed run.
  runtime::write_file_atomically(llm::sample_meta_path(o.out, job.prompt->workload, job.sample), eval::to_json(r).dump(1) + "\n");
  return r;
}

std::string outcome_text(const SampleJob& job, const eval::SolutionMeta& r) {
  std::string who = fmt::format("{} #{}", job.prompt->workload, job.sample);
  if (r.status == "ok")
    return fmt::format("{}  ok{} ({} tokens out, {:.1f} s)", who, r.cached ? " cached" : "", r.ledger.output_tokens,
                       r.latency_s);
  return fmt::format("{}  {}: {}", who, r.status, r.error.substr(0, 160));
}

void run_generate(Context& ctx, GenerateOptions& o) {
  if (o.replay && o.no_cache) throw UsageError("--replay reads the response cache: it cannot go with --no-cache");
  o.selection.include_heldout = !o.exclude_heldout;
  std::vector<suite::WorkloadEntry> selected = selected_workloads(ctx, o.selection);
  llm::ModelProfile profile;
  try {
    profile = llm::load_model_profile(o.models_path.empty() ? llm::default_models_path() : o.models_path, o.profile);
  } catch (const llm::ConfigError& e) {
    throw UsageError(e.what());
  }
  const double temperature = o.temperature.value_or(profile.temperature);

  llm::ClientOptions client_options;
  client_options.cache_mode = o.replay ? llm::CacheMode::Replay : o.no_cache ? llm::CacheMode::Off : llm::CacheMode::ReadWrite;
  client_options.cache_root = o.cache_dir.empty() ? runtime::default_cache_dir() : o.cache_dir;
  client_options.log_path = o.log_path.empty() ? o.out + "/llm-requests.jsonl" : o.log_path;
  runtime::make_directories(o.out);
  std::optional<llm::LlmClient> client;
  try {
    client.emplace(profile, client_options);
  } catch (const llm::MissingApiKey& e) {
    throw UsageError(e.what());
  }

  std::vector<WorkloadPrompt> prompts;
  prompts.reserve(selected.size());
  for (const auto& w : selected) {
    ir::Instance inst = suite::bind_workload(w);
    std::string text = suite::task_statement(w, inst, o.backend);
    prompts.push_back({w.full_name(), text, llm::prompt_hash(text)});
  }
  std::vector<SampleJob> jobs;
  int already = 0;
  for (const auto& p : prompts)
    for (int s = 0; s < o.samples; ++s) {
      if (!o.shard.owns(p.workload, s)) continue;
      if (already_recorded(o, profile, temperature, p, s)) ++already;
      else jobs.push_back({&p, s});
    }
  const int owned = already + static_cast<int>(jobs.size());
  fmt::print(stderr, "generate: {} samples for {} workloads with '{}' ({} at {}), temperature {:g}{}{}\n", owned,
             prompts.size(), profile.name, profile.model, profile.endpoint, temperature,
             o.shard.whole() ? "" : ", shard " + o.shard.text(),
             already ? fmt::format(", resuming with {} done", already) : "");

  Progress progress(owned, already);
  std::mutex mutex;  // guards progress, totals and replay_miss
  Totals totals;
  std::optional<std::string> replay_miss;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      eval::SolutionMeta r;
      try {
        r = generate_sample(*client, o, temperature, jobs[i]);
      } catch (const llm::ReplayMiss& e) {
        std::lock_guard lock(mutex);
        if (!replay_miss) replay_miss = e.what();
        next = jobs.size();  // stop everyone: a replay is all or nothing
        return;
      } catch (const std::exception& e) {
        // Writing the files failed (disk full, permissions): this sample only.
        r.status = "failed";
        r.error = e.what();
      }
      std::lock_guard lock(mutex);
      totals.ok += r.status == "ok";
      totals.no_code += r.status == "no_code";
      totals.failed += r.status == "failed";
      totals.cached += r.cached;
      totals.llm_calls += r.ledger.llm_calls;
      totals.input_tokens += r.ledger.input_tokens;
      totals.output_tokens += r.ledger.output_tokens;
      totals.cost_usd += r.ledger.cost_usd;
      progress.step(outcome_text(jobs[i], r));
    }
  };
  const size_t threads = std::min<size_t>(static_cast<size_t>(profile.concurrency), jobs.size());
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  progress.finish();
  if (replay_miss) throw std::runtime_error(*replay_miss);

  fmt::print("generated {} samples: {} ok, {} no_code, {} failed{}; {} LLM calls, {} input and {} output tokens, "
             "${:.4f}\n",
             jobs.size(), totals.ok, totals.no_code, totals.failed,
             totals.cached ? fmt::format(" ({} from the cache)", totals.cached) : "", totals.llm_calls,
             totals.input_tokens, totals.output_tokens, totals.cost_usd);
  fmt::print("solutions: {} (log {})\nnext: ekb eval --backend {} --solutions {} ...\n", o.out,
             client_options.log_path, ir::target_name(o.backend), o.out);
  // Every request failed: most likely the server or the profile, worth a failing exit status.
  if (!jobs.empty() && totals.failed == static_cast<int>(jobs.size())) g_exit_code = 1;
}

}  // namespace

void add_generate_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand("generate", "Ask a language model for solutions (direct generation, N samples)");
  cmd->add_option("-m,--model", o->profile, "Model profile name in the models file (docs/GENERATION.md)")->required();
  cmd->add_option("--models", o->models_path,
                  "Models file (TOML; default: $EKB_MODELS, else ./ekb-models.toml, else ~/.config/ekb/models.toml)");
  add_target_option(cmd, "-b,--backend", o->backend, "cpu, cuda or opencl");
  cmd->add_option("-n,--samples", o->samples, "Samples per workload")->check(CLI::Range(1, 10000))->capture_default_str();
  add_shard_option(cmd, o->shard);
  cmd->add_option("-t,--temperature", o->temperature, "Sampling temperature (default: the profile's)")
      ->check(CLI::Range(0.0, 2.0));
  cmd->add_option("names", o->selection.names, "Globs over PATTERN/WORKLOAD or pattern names (default: all)");
  add_selection_filters(cmd, o->selection);
  cmd->add_flag("--no-heldout", o->exclude_heldout, "Leave out held-out workloads");
  cmd->add_option("-o,--out", o->out, "Solutions directory to write (docs/SOLUTIONS.md layout)")->required();
  cmd->add_flag("--replay", o->replay,
                "Only answers stored in the response cache; a missing one is an error (reproducible runs)");
  cmd->add_flag("--no-cache", o->no_cache, "Ask the server every time and store nothing");
  cmd->add_option("--cache-dir", o->cache_dir, "Cache root (default: $EKB_CACHE_DIR, else ~/.cache/ekb); answers in llm/");
  cmd->add_option("--log", o->log_path, "JSONL log of every request and response (default: OUT/llm-requests.jsonl)");
  cmd->callback([&ctx, o] { run_generate(ctx, *o); });
}

}  // namespace ekb::cli
