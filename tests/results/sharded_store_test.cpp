// Shards writing one run into a shared PostgreSQL store (docs/SCALE_OUT.md): 8 processes, each
// owning its part of the work by eval::Shard, store at once; one is killed with SIGKILL midway and
// started again. Every result is stored exactly once, and the run finishes with its last shard.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>

#include "eval/shard.h"
#include "results/result_store.h"
#include "results/run_report.h"
#include "results_test_util.h"
#include "suite/suite.h"

namespace ekb::results {
namespace {

using testing_util::make_result;
using testing_util::make_spec;

constexpr int kShards = 8;

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (int w = 0; w < 40; ++w) names.push_back("nn.p" + std::to_string(w) + "/1");
  return names;
}

std::vector<ResultKey> all_keys() {
  std::vector<ResultKey> keys;
  for (const auto& w : workload_names())
    for (int s = 0; s < 10; ++s) keys.push_back({w, "gen/a.c", s});
  return keys;
}

eval::CandidateResult expected_result(const ResultKey& k) {
  return make_result(k.workload, k.sample, k.sample % 3 == 0, 1.0 + k.sample, k.solution);
}

RunSpec shard_spec() {
  RunSpec spec = make_spec(workload_names());
  spec.id = "sharded";
  spec.sharded = true;
  return spec;
}

// What `ekb eval --shard I/N` does with the store: join the run, skip what is done, store each
// owned result at once, mark the shard finished.
void evaluate_shard(const std::string& url, eval::Shard shard, int pause_us) {
  ResultStore store = ResultStore::open(url);
  const std::string run = store.begin_or_resume_run(shard_spec());
  std::vector<ResultKey> owned;
  for (const auto& k : all_keys())
    if (shard.owns(k.workload, k.sample)) owned.push_back(k);
  store.begin_shard(run, shard, static_cast<int>(owned.size()), "host" + std::to_string(shard.index));
  const std::set<ResultKey> done = store.done(run);
  for (const auto& k : owned) {
    if (done.count(k)) continue;
    store.add(run, expected_result(k));
    if (pause_us) usleep(pause_us);
  }
  store.finish_shard(run, shard);
}

pid_t start_shard(const std::string& url, eval::Shard shard, int pause_us) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      evaluate_shard(url, shard, pause_us);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "shard %s failed: %s\n", shard.text().c_str(), e.what());
      _exit(3);
    }
    _exit(0);
  }
  return pid;
}

int stored_of(const std::string& url, eval::Shard shard) {
  ResultStore store = ResultStore::open(url);
  int n = 0;
  if (store.run("sharded"))
    for (const auto& k : store.done("sharded")) n += shard.owns(k.workload, k.sample) ? 1 : 0;
  return n;
}

TEST(ShardedPostgresStore, EightShardsOneKilledAndRerunEveryResultOnce) {
  std::string why;
  if (!testing_util::shared_postgres(&why)) GTEST_SKIP() << "no PostgreSQL server can run here: " << why;
  const std::string url = testing_util::fresh_store_location("postgres", "shards");
  ASSERT_FALSE(url.empty());

  // The shards partition the work: each key has exactly one owner.
  for (const auto& k : all_keys()) {
    int owners = 0;
    for (int i = 0; i < kShards; ++i) owners += eval::Shard{i, kShards}.owns(k.workload, k.sample) ? 1 : 0;
    ASSERT_EQ(owners, 1) << k.workload << "#" << k.sample;
  }

  // Shard 3 is slow, so that it is still writing when it is killed; the others run flat out.
  const eval::Shard victim{3, kShards};
  std::vector<pid_t> pids;
  for (int i = 0; i < kShards; ++i) pids.push_back(start_shard(url, {i, kShards}, i == victim.index ? 20000 : 0));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (stored_of(url, victim) < 10 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pids[victim.index], SIGKILL);
  for (int i = 0; i < kShards; ++i) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    if (i == victim.index) EXPECT_TRUE(WIFSIGNALED(status)) << "shard 3 finished before it was killed";
    else EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "shard " << i;
  }
  {
    ResultStore store = ResultStore::open(url);
    EXPECT_FALSE(store.run("sharded")->finished) << "a shard is missing: the run is not finished";
    const int partial = stored_of(url, victim);
    EXPECT_GE(partial, 10);
  }

  // The killed shard started again resumes: it stores only what it lacks, and finishes the run.
  evaluate_shard(url, victim, 0);

  ResultStore store = ResultStore::open(url);
  ASSERT_EQ(store.runs().size(), 1u);
  EXPECT_TRUE(store.run("sharded")->finished);
  std::vector<eval::CandidateResult> results = store.results("sharded");
  EXPECT_EQ(results.size(), all_keys().size());
  std::set<ResultKey> seen;
  for (const auto& r : results) {
    const ResultKey k{r.workload, r.solution, r.sample};
    EXPECT_TRUE(seen.insert(k).second) << "duplicate " << r.workload << "#" << r.sample;
    const eval::CandidateResult want = expected_result(k);
    EXPECT_EQ(r.correct, want.correct);
    EXPECT_EQ(r.speedup, want.speedup);
    EXPECT_EQ(r.message, want.message);
  }
  const std::vector<ResultKey> expected = all_keys();
  EXPECT_EQ(seen, std::set<ResultKey>(expected.begin(), expected.end()));
  const std::vector<ShardInfo> shards = store.shards("sharded");
  ASSERT_EQ(shards.size(), static_cast<size_t>(kShards));
  int planned = 0;
  for (const auto& s : shards) {
    EXPECT_TRUE(s.finished) << s.shard.text();
    EXPECT_EQ(s.host, "host" + std::to_string(s.shard.index));
    planned += s.planned;
  }
  EXPECT_EQ(planned, static_cast<int>(expected.size()));
}

// Shards on two machines: each result keeps its device, and the report groups by it rather than
// scoring the run as one machine.
TEST(ShardedRun, ResultsOfTwoDevicesAreGroupedByDevice) {
  const std::string path = testing_util::fresh_db_path("devices.db");
  for (const char* device : {"Node A CPU", "Node B CPU"}) {
    ResultStore store = ResultStore::open(path);
    RunSpec spec = make_spec({"linalg.gemm/mini", "linalg.atax/mini"}, device);
    spec.id = "two-nodes";
    spec.sharded = true;
    ASSERT_EQ(store.begin_or_resume_run(spec), "two-nodes");  // another device joins the same run
    const bool first = std::string(device) == "Node A CPU";
    store.add("two-nodes", make_result(first ? "linalg.gemm/mini" : "linalg.atax/mini", 0, true, first ? 2.0 : 0.5));
  }
  ResultStore store = ResultStore::open(path);
  const std::map<ResultKey, std::string> devices = store.devices("two-nodes");
  EXPECT_EQ(devices.at({"linalg.gemm/mini", "solutions/k.c", 0}), "Node A CPU");
  EXPECT_EQ(devices.at({"linalg.atax/mini", "solutions/k.c", 0}), "Node B CPU");

  const suite::Suite suite = suite::Suite::load();
  const RunReport report = build_run_report(store, "two-nodes", suite);
  EXPECT_EQ(report.devices(), (std::vector<std::string>{"Node A CPU", "Node B CPU"}));
  const std::vector<GroupSummary> by_device = report.by(GroupBy::Device);
  ASSERT_EQ(by_device.size(), 2u);
  EXPECT_EQ(by_device[0].key, "Node A CPU");
  EXPECT_EQ(by_device[0].summary.n, 1);
  ASSERT_TRUE(by_device[0].summary.geomean_speedup);
  EXPECT_DOUBLE_EQ(*by_device[0].summary.geomean_speedup, 2.0);
  EXPECT_DOUBLE_EQ(*by_device[1].summary.geomean_speedup, 0.5);

  // Unsharded, a run on another device is another run.
  RunSpec whole = make_spec({"linalg.gemm/mini"}, "Node A CPU");
  whole.id = "one-node";
  store.begin_or_resume_run(whole);
  whole.device["name"] = "Node B CPU";
  EXPECT_THROW(store.begin_or_resume_run(whole), StoreError);
}

TEST(Shard, ParsesAndPartitionsStably) {
  EXPECT_EQ(eval::parse_shard("2/4").index, 2);
  EXPECT_EQ(eval::parse_shard("2/4").count, 4);
  EXPECT_THROW(eval::parse_shard("4/4"), std::invalid_argument);
  EXPECT_THROW(eval::parse_shard("-1/4"), std::invalid_argument);
  EXPECT_THROW(eval::parse_shard("1"), std::invalid_argument);
  EXPECT_THROW(eval::parse_shard("1/0"), std::invalid_argument);
  EXPECT_TRUE(eval::Shard{}.owns("anything/at_all", 7));
  // A hash of the name and sample, not a position: these owners are fixed for good (every machine
  // and every suite agrees), and a roughly even split.
  EXPECT_EQ(eval::shard_owner("linalg.gemm/mini", 0, 4), eval::shard_owner("linalg.gemm/mini", 0, 4));
  std::vector<int> per_shard(4);
  for (int w = 0; w < 400; ++w) ++per_shard[eval::shard_owner("nn.p" + std::to_string(w) + "/1", 0, 4)];
  for (int n : per_shard) EXPECT_GT(n, 60);
}

}  // namespace
}  // namespace ekb::results

namespace ekb::results {
namespace {

// bench/store_throughput.sh: $EKB_BENCH_WRITERS processes each store $EKB_BENCH_RESULTS results
// into one run of an $EKB_BENCH_ENGINE store at once (sqlite; postgres with fsync off, as the
// tests run it; postgres-fsync, each commit flushed); prints results per second.
TEST(StoreThroughput, DISABLED_ConcurrentWriters) {
  const int writers = std::atoi(std::getenv("EKB_BENCH_WRITERS") ? std::getenv("EKB_BENCH_WRITERS") : "8");
  const int per_writer = std::atoi(std::getenv("EKB_BENCH_RESULTS") ? std::getenv("EKB_BENCH_RESULTS") : "200");
  const std::string engine = std::getenv("EKB_BENCH_ENGINE") ? std::getenv("EKB_BENCH_ENGINE") : "postgres";
  std::string why;
  ekb::testing::PostgresServer durable_server;
  std::string location;
  if (engine == "postgres-fsync") {
    if (!durable_server.start(&why, true)) GTEST_SKIP() << why;
    location = durable_server.url();
  } else {
    if (engine == "postgres" && !testing_util::shared_postgres(&why)) GTEST_SKIP() << why;
    location = testing_util::fresh_store_location(engine, "bench");
  }
  {
    ResultStore store = ResultStore::open(location);  // the schema, before the clock starts
    store.begin_or_resume_run(shard_spec());
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (int w = 0; w < writers; ++w) {
    const pid_t pid = fork();
    if (pid == 0) {
      try {
        ResultStore store = ResultStore::open(location);
        const std::string run = store.begin_or_resume_run(shard_spec());
        for (int i = 0; i < per_writer; ++i)
          store.add(run, make_result("nn.w" + std::to_string(w) + "/1", i, i % 3 == 0, 1.5));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer failed: %s\n", e.what());
        _exit(3);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(ResultStore::open(location).results("sharded").size(), static_cast<size_t>(writers * per_writer));
  std::printf("engine=%s writers=%d results=%d seconds=%.3f results_per_second=%.1f\n", engine.c_str(), writers,
              writers * per_writer, seconds, writers * per_writer / seconds);
}

}  // namespace
}  // namespace ekb::results
