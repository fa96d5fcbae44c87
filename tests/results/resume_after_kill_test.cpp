// A run killed with SIGKILL at any moment and started again resumes without losing or duplicating
// a result: child processes run the evaluation loop an `ekb eval` runs and are killed mid-write.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include "results/result_store.h"
#include "results_test_util.h"

namespace ekb::results {
namespace {

using testing_util::fresh_db_path;
using testing_util::make_result;
using testing_util::make_spec;

std::vector<ResultKey> all_keys() {
  std::vector<ResultKey> keys;
  for (int w = 0; w < 10; ++w)
    for (const char* solution : {"gen/a.c", "gen/b.c"})
      for (int s = 0; s < 20; ++s) keys.push_back({"nn.p" + std::to_string(w) + "/1", solution, s});
  return keys;
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (int w = 0; w < 10; ++w) names.push_back("nn.p" + std::to_string(w) + "/1");
  return names;
}

// What a result for `k` must look like, so that a torn or mixed-up row would be noticed.
eval::CandidateResult expected_result(const ResultKey& k) {
  return make_result(k.workload, k.sample, k.sample % 3 == 0, 1.0 + k.sample, k.solution);
}

// The loop of an evaluation: resume the run, skip what is done, store each new result at once.
void evaluate_all(const std::string& path, int pause_us) {
  ResultStore store = ResultStore::open(path);
  std::string run = store.begin_or_resume_run(make_spec(workload_names()));
  std::set<ResultKey> done = store.done(run);
  for (const auto& k : all_keys()) {
    if (done.count(k)) continue;
    store.add(run, expected_result(k));
    if (pause_us) usleep(pause_us);
  }
  store.finish_run(run);
}

int stored_count(const std::string& path) {
  ResultStore store = ResultStore::open(path);
  auto runs = store.runs();
  return runs.empty() ? 0 : runs.front().results;
}

// Forks a child running evaluate_all, waits until at least `kill_after` results are stored, then
// SIGKILLs it. Returns the number stored before the kill was sent (the child may add one more).
int run_child_and_kill(const std::string& path, int pause_us, int kill_after) {
  pid_t pid = fork();
  if (pid == 0) {
    try {
      evaluate_all(path, pause_us);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "evaluating child failed: %s\n", e.what());
      _exit(3);
    }
    _exit(0);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int count = 0;
  while ((count = stored_count(path)) < kill_after && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child finished before it was killed";
  return count;
}

TEST(ResumeAfterKill, NoResultLostNoneDuplicated) {
  const std::string path = fresh_db_path("resume.db");
  const size_t total = all_keys().size();

  // A slow child killed between results, then a tight-looping one killed in the middle of writes.
  int first = run_child_and_kill(path, 2000, 20);
  int after_first = stored_count(path);
  EXPECT_GE(after_first, first);
  EXPECT_LT(after_first, static_cast<int>(total));
  int second = run_child_and_kill(path, 0, after_first + 10);
  int after_second = stored_count(path);
  EXPECT_GE(after_second, second);
  EXPECT_LT(after_second, static_cast<int>(total));

  // A third start resumes and completes the same run.
  evaluate_all(path, 0);

  ResultStore store = ResultStore::open(path);
  ASSERT_EQ(store.runs().size(), 1u) << "every start resumed the one unfinished run";
  const std::string run = store.runs().front().id;
  EXPECT_TRUE(store.run(run)->finished);
  std::vector<eval::CandidateResult> results = store.results(run);
  EXPECT_EQ(results.size(), total);
  std::set<ResultKey> seen;
  for (const auto& r : results) {
    ResultKey k{r.workload, r.solution, r.sample};
    EXPECT_TRUE(seen.insert(k).second) << "duplicate " << r.workload << " " << r.solution << "#" << r.sample;
    eval::CandidateResult want = expected_result(k);
    EXPECT_EQ(r.correct, want.correct);
    EXPECT_EQ(r.speedup.has_value(), want.speedup.has_value());
    if (r.speedup) {
      EXPECT_DOUBLE_EQ(*r.speedup, *want.speedup);
    }
    EXPECT_EQ(r.message, want.message);
  }
  std::vector<ResultKey> expected = all_keys();
  EXPECT_EQ(seen, std::set<ResultKey>(expected.begin(), expected.end()));

  SQLite::Database db(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "wal");
}

}  // namespace
}  // namespace ekb::results
