// The search policy (agent/search_policy.h, agent/sketches.h): its sketch per pattern class, the
// same proposals for the same seed and outcomes, and — through the loop — every candidate it keeps
// correct under the full protocol.
#include "agent/search_policy.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "agent/agent_loop.h"
#include "agent/layered_program.h"
#include "ir/printer.h"
#include "agent/workload_analysis.h"
#include "eval/candidate_evaluation.h"
#include "agent/agent_test_util.h"
#include "eval/eval_test_util.h"
#include "test_paths.h"

namespace ekb::agent {
namespace {

namespace fs = std::filesystem;

WorkloadAnalysis analysis_of(const std::string& workload, ir::Target target = ir::Target::Cpu) {
  static suite::Suite suite = suite::Suite::load();
  const suite::WorkloadEntry w = *suite.find_workload(workload);
  const ir::Instance inst = suite::bind_workload(w);
  return analyse_workload(w, inst, target, std::nullopt);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Sketches, EachPatternClassIsReadFromTheComputeLayer) {
  EXPECT_EQ(classify(analysis_of("linalg.gemm/mini").stages), PatternClass::Contraction);
  EXPECT_EQ(classify(analysis_of("nn.softmax/kws_1x12").stages), PatternClass::Reduction);
  EXPECT_EQ(classify(analysis_of("nn.relu6/mbv2_035_96_48x48x48").stages), PatternClass::Elementwise);
  EXPECT_EQ(classify(analysis_of("img.gaussian3x3/vww_96x96_u8").stages), PatternClass::Stencil);
  // A convolution of three input channels reduces over a 3x3x3 window, but its weights are
  // indexed by the output channel: a contraction. A depthwise one's are not: a stencil.
  EXPECT_EQ(classify(analysis_of("nn.conv2d/ic_resnet8_32x32x3").stages), PatternClass::Contraction);
  EXPECT_EQ(classify(analysis_of("nn.dwconv3x3/kws_25x5x64").stages), PatternClass::Stencil);
  // A GEMV reading its matrix's rows along the output is a contraction with a strip for a tile,
  // and so is a FIR (x[n + k] is contiguous along n); one reading them along the reduction (mvt's
  // x1 = A y1), and a decimating FIR (x[m * D + k]), stay reductions.
  EXPECT_EQ(classify(analysis_of("transformer.gemv_decode/tinyllama_kv_2048x256").stages), PatternClass::Contraction);
  EXPECT_EQ(classify(analysis_of("audio.fir/kws_320x64").stages), PatternClass::Contraction);
  EXPECT_EQ(classify(analysis_of("linalg.mvt/mini").stages), PatternClass::Reduction);
  EXPECT_EQ(classify(analysis_of("audio.fir_decimate/dec2_256x32").stages), PatternClass::Reduction);
}

// The operands read across the vector loop (a pointwise convolution's weights [K, C] under k) are
// stored transposed by the memory layer.
TEST(Sketches, AContractionsOperandsReadAcrossTheVectorLoopAreStoredTransposed) {
  const WorkloadAnalysis a = analysis_of("nn.pwconv/kws_25x5x64");
  Sketch sketch(a);
  GeneValues v = sketch.initial();
  ASSERT_EQ(v.count("transpose"), 1u);
  EXPECT_TRUE(has(sketch.memory(v), "layout(wt, order(1, 0))")) << sketch.memory(v);
  v["transpose"] = 0;
  EXPECT_FALSE(has(sketch.memory(v), "layout(")) << sketch.memory(v);
  EXPECT_TRUE(has(Sketch(analysis_of("nn.conv2d/ic_resnet8_32x32x3")).memory(sketch.initial()),
                  "layout(w, order(1, 2, 3, 0))"));
  // B [K, N] of a GEMM is read along j already.
  EXPECT_EQ(Sketch(analysis_of("linalg.gemm/small")).initial().count("transpose"), 0u);
}

// A GEMV: a strip of outputs on threads, the rows streaming past it, the strip vectorized.
TEST(Sketches, AGemvAccumulatesAStripOfOutputsWhileTheRowsStreamPast) {
  Sketch sketch(analysis_of("transformer.gemv_decode/tinyllama_kv_2048x256"));  // K 2048, N 256
  GeneValues v = sketch.initial();
  v["tile_j"] = 64;
  const std::string schedule = sketch.schedule(v);
  EXPECT_TRUE(has(schedule, "split(y, n, 64, n_o, n_i)")) << schedule;
  EXPECT_TRUE(has(schedule, "reorder(y, n_o, k, n_i)")) << schedule;
  EXPECT_TRUE(has(schedule, "parallel(y, n_o)")) << schedule;
  EXPECT_TRUE(has(schedule, "vectorize(y, n_i, 16)")) << schedule;
  // A FIR of 16000 outputs starts with a strip that divides them (256 would leave a ragged tail).
  const Sketch fir(analysis_of("audio.fir/asr_16000x255"));
  EXPECT_TRUE(has(fir.schedule(fir.initial()), "split(y, n, 64, n_o, n_i)")) << fir.schedule(fir.initial());
}

// sdpa: the output is the contraction; the scores, a contraction too, are computed as outer
// products with K stored transposed, and the row reductions into temps go through rfactor.
TEST(Sketches, AContractionsTempsAreScheduledToo) {
  Sketch sketch(analysis_of("transformer.sdpa/whisper_tiny_448x64"));
  ASSERT_EQ(sketch.pattern_class(), PatternClass::Contraction);
  const GeneValues v = sketch.initial();
  const std::string schedule = sketch.schedule(v);
  EXPECT_TRUE(has(schedule, "reorder(s, i, d, j)")) << schedule;
  EXPECT_TRUE(has(schedule, "vectorize(s, j, 16)")) << schedule;
  EXPECT_TRUE(has(schedule, "rfactor(m, ")) << schedule;
  EXPECT_TRUE(has(sketch.memory(v), "layout(k, order(1, 0))")) << sketch.memory(v);
}

// A depthwise conv: the 3x3xC weights cached per output row (the parallel loop), and the input
// row that is new to each output row (2 rows below the window's first tap) prefetched 16 columns
// ahead along ow; a column of 32 floats takes 2 lines, so 8 lines a step.
TEST(Sketches, AStencilCachesItsWeightsPerRowAndPrefetchesTheRowNewToEachOutputRow) {
  Sketch sketch(analysis_of("nn.dwconv3x3/mbv1_112x112x32"));
  ASSERT_EQ(sketch.pattern_class(), PatternClass::Stencil);
  GeneValues v = sketch.initial();
  const std::string memory = sketch.memory(v);
  EXPECT_TRUE(has(memory, "cache_read(w, y, oh, local, w_l)")) << memory;
  EXPECT_TRUE(has(memory, "prefetch(y, ow, x, 7680, lines=8)")) << memory;  // 2 * 112 * 32 + 16 * 32
  EXPECT_TRUE(has(sketch.schedule(v), "parallel(y, oh)")) << sketch.schedule(v);
  v["cache_weights"] = 0;
  v["prefetch_row"] = 0;
  EXPECT_FALSE(has(sketch.memory(v), "cache_read(")) << sketch.memory(v);
  EXPECT_FALSE(has(sketch.memory(v), "prefetch(")) << sketch.memory(v);
  // A single-channel image stencil has no weights tensor and no column loop outside the vector
  // loop: neither gene.
  const GeneValues g = Sketch(analysis_of("img.gaussian3x3/vww_96x96_u8")).initial();
  EXPECT_EQ(g.count("cache_weights") + g.count("prefetch_row"), 0u);
}

TEST(Sketches, TheContractionSketchTilesWithARegisterTileAndCachesItInTheMemoryLayer) {
  Sketch sketch(analysis_of("linalg.gemm/small"));
  GeneValues v = sketch.initial();
  const std::string schedule = sketch.schedule(v);
  EXPECT_NE(schedule.find("split(C, i, 4, i_o, i_i)"), std::string::npos) << schedule;
  EXPECT_NE(schedule.find("vectorize(C, j_i, 16)"), std::string::npos) << schedule;
  EXPECT_NE(schedule.find("parallel(C, i_o)"), std::string::npos) << schedule;
  v["cache_tile"] = 1;
  const std::string memory = sketch.memory(v);
  EXPECT_NE(memory.find("cache_write(C, "), std::string::npos) << memory;
  // With the reduction blocked inside the column panels, B's block of the panel can be packed. A
  // GEMM this large starts so, its tile cached; a small one starts from the plain order.
  EXPECT_EQ(v["order"], 0);
  EXPECT_EQ(sketch.initial()["pack"], 0);
  Sketch square(analysis_of("linalg.gemm/square_1024"));
  GeneValues p = square.initial();
  EXPECT_EQ(p["order"], 1);
  EXPECT_EQ(p["pack"], 1);
  EXPECT_EQ(p["cache_tile"], 1);
  EXPECT_TRUE(has(square.schedule(p), "reorder(C, j_o, k_o, i_o, k_i, i_i, j_i)")) << square.schedule(p);
  EXPECT_TRUE(has(square.memory(p), "cache_read(B, C, k_o, tile, B_p)")) << square.memory(p);
  EXPECT_TRUE(has(square.memory(p), "vectorize(B_p, c1, 16)")) << square.memory(p);
  p["order"] = 0;
  EXPECT_FALSE(has(square.memory(p), "cache_read(")) << square.memory(p);
}

TEST(Sketches, OnAGpuAContractionIsTiledOverBlocksAndThreadsWithSharedStagingInTheMemoryLayer) {
  Sketch sketch(analysis_of("linalg.gemm/medium", ir::Target::OpenCL));  // 200 x 220 x 240
  GeneValues v = sketch.initial();
  ASSERT_TRUE(sketch.feasible(v));
  // One output per thread: the reduction stays innermost and ragged edge tiles shift inwards.
  std::string schedule = sketch.schedule(v);
  EXPECT_TRUE(has(schedule, "split(C, i, 16, i_b, i_in, tail=shift_inwards)")) << schedule;
  EXPECT_TRUE(has(schedule, "reorder(C, i_b, j_b, i_t, j_t, i_r, j_r, k_o, k_i)")) << schedule;
  EXPECT_TRUE(has(schedule, "bind(C, i_t, thread.y)") && has(schedule, "bind(C, j_b, block.x)")) << schedule;
  EXPECT_TRUE(sketch.memory(v).empty()) << "the memory genes start off: the search turns them on";
  // A register tile: the reduction moves out of its statement, so edge tiles are guarded.
  v["block_i"] = 64, v["thread_i"] = 4, v["thread_j"] = 2;
  schedule = sketch.schedule(v);
  EXPECT_TRUE(has(schedule, "reorder(C, i_b, j_b, i_t, j_t, k_o, k_i, i_r, j_r)")) << schedule;
  EXPECT_TRUE(has(schedule, "split(C, i, 64, i_b, i_in)\n")) << schedule;
  EXPECT_TRUE(has(schedule, "unroll(C, i_r, 4)")) << schedule;
  v["shared"] = 1, v["local"] = 1;
  const std::string memory = sketch.memory(v);
  // Only the inputs read inside the reduction are staged (C_in is read once per output).
  EXPECT_TRUE(has(memory, "cache_read(A, C, k_o, shared, A_s)") && has(memory, "cache_read(B, C, k_o, shared, B_s)")) << memory;
  EXPECT_FALSE(has(memory, "C_in")) << memory;
  EXPECT_TRUE(has(memory, "cache_write(C, j_t, local, C_l)")) << memory;
  // More than 1024 threads in a block is never proposed.
  v["block_i"] = 128, v["block_j"] = 128, v["thread_i"] = 1, v["thread_j"] = 1;
  EXPECT_FALSE(sketch.feasible(v));
}

TEST(Sketches, OnAGpuARowReductionTakesABlockPerRowAndItsThreadsShareTheReduction) {
  // The output's own reduction (a GEMV): the rows on blocks, the reduction on the block's threads.
  const std::string gemv = Sketch(analysis_of("transformer.gemv_decode/tinyllama_kv_2048x256", ir::Target::Cuda))
                               .schedule(Sketch(analysis_of("transformer.gemv_decode/tinyllama_kv_2048x256", ir::Target::Cuda)).initial());
  EXPECT_TRUE(has(gemv, "bind(y, k_t, thread.x)") && has(gemv, "block.x")) << gemv;
  // The temps' reductions over the output's rows (softmax): computed at the row's block.
  Sketch softmax(analysis_of("nn.softmax/kws_1x12", ir::Target::Cuda));
  GeneValues v = softmax.initial();
  const std::string schedule = softmax.schedule(v);
  EXPECT_TRUE(has(schedule, "compute_at(s, y, r)") && has(schedule, "compute_at(m, y, r)")) << schedule;
  EXPECT_TRUE(has(schedule, "bind(y, r, block.x)")) << schedule;
  v["shared"] = 1;
  EXPECT_TRUE(has(softmax.memory(v), "cache_read(x, y, r, shared, x_s)")) << softmax.memory(v);
  // A temp the output reads only through a stage computed elsewhere (an LSTM's gates through its
  // recurrence) cannot be computed at the output's rows: a flat grid instead.
  const Sketch lstm(analysis_of("nn.lstm_sequence/kws_98x40x256", ir::Target::Cuda));
  EXPECT_FALSE(has(lstm.schedule(lstm.initial()), "compute_at(")) << lstm.schedule(lstm.initial());
}

TEST(Sketches, OnAGpuAFlatGridFusesBeforeItSplitsAndKeepsWithinTheGridsLimits) {
  // A ragged split of the innermost loop first would leave a tail outside the loops to fuse.
  Sketch relu6(analysis_of("nn.relu6/mbv2_035_96_48x48x48", ir::Target::Cuda));  // [1, 48, 48, 48]
  GeneValues v = relu6.initial();
  v["threads"] = 32;
  const std::string schedule = relu6.schedule(v);
  ASSERT_TRUE(has(schedule, "split(")) << schedule;
  EXPECT_LT(schedule.find("fuse("), schedule.find("split(")) << schedule;
  // 1 x 1080 x 1920 rows cannot be blocks along y (at most 65535): the start is the fused grid.
  Sketch d2s(analysis_of("nn.depth_to_space/espcn_360x640x9", ir::Target::Cuda));
  const GeneValues start = d2s.initial();
  EXPECT_TRUE(d2s.feasible(start));
  EXPECT_FALSE(has(d2s.schedule(start), "block.y")) << d2s.schedule(start);
}

// Every GPU form, at its starting point and with its memory genes on and register tiles, is
// correct on an OpenCL device (PoCL here and in CI) under the full protocol.
class GpuSketchesAreCorrect : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuSketchesAreCorrect, OnOpenCl) {
  std::string why;
  runtime::OpenCLBackend* cl = ekb::testing::test_opencl_backend(&why);
  if (!cl) GTEST_SKIP() << "no OpenCL device: " << why;
  static suite::Suite suite = suite::Suite::load();
  const suite::WorkloadEntry w = *suite.find_workload(GetParam());
  const ir::Instance inst = suite::bind_workload(w);
  const WorkloadAnalysis analysis = analyse_workload(w, inst, ir::Target::OpenCL, std::nullopt);
  Sketch sketch(analysis);
  GeneValues full = sketch.initial();
  for (const auto& g : sketch.genes())
    if (g.layer == Layer::Memory) full[g.name] = 1;
  // A register tile and a reduction step that leaves a ragged tail on most shapes (a peeled one).
  if (full.count("thread_i"))
    full["thread_i"] = 2, full["thread_j"] = 4, full["block_i"] = 32, full["block_j"] = 32, full["tile_k"] = 32;
  ASSERT_TRUE(sketch.feasible(full));
  eval::WorkloadReference reference(inst);
  const eval::Baseline baseline = eval::make_baseline(inst, ir::Target::OpenCL);
  eval::EvalOptions options = ekb::testing::fast_options();
  options.time = false;
  const std::string dir = ekb::testing::private_temp_path("gpu_sketches");
  fs::create_directories(dir);
  int n = 0;
  for (const GeneValues& v : {sketch.initial(), full}) {
    LayeredProgram program;
    program.compute = ir::print_pattern(inst.pattern());
    program.schedule = sketch.schedule(v);
    program.memory = sketch.memory(v);
    eval::CandidateRef c;
    c.workload = w;
    c.path = dir + "/" + std::to_string(n++) + ".ekb";
    c.solution = c.path;
    std::ofstream(c.path) << program.ir_text();
    const eval::CandidateResult result = eval::evaluate_candidate(*cl, reference, baseline, c, options);
    EXPECT_TRUE(result.correct) << program.ir_text() << "\n" << result.message;
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Forms, GpuSketchesAreCorrect,
                         ::testing::Values("linalg.gemm/medium", "nn.softmax/kws_1x12",
                                           "transformer.gemv_decode/tinyllama_kv_2048x256", "nn.relu6/mbv2_035_96_48x48x48",
                                           // batch loops outside the tile, a ragged reduction split (48 by 32)
                                           "nn.pwconv_residual/mbv2_035_96_24x24x48_p8"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// Feeds a policy states whose outcomes are a fixed function of the step, as the loop would: by
// default every third step kept and the memory layer suggested after the fourth. Each proposal as
// "LAYER: ACTION\nTEXT".
std::vector<std::string> actions_with_outcomes(uint64_t seed, const WorkloadAnalysis& analysis, int steps,
                                               bool keep_only_the_first = false) {
  SearchPolicy policy(seed);
  AgentState state;
  state.analysis = &analysis;
  Step start;
  start.outcome = "kept";
  state.history.push_back(start);
  std::vector<std::string> actions;
  for (int i = 1; i <= steps; ++i) {
    Proposal p = policy.propose(state);
    if (p.stop) break;
    actions.push_back(std::string(layer_name(p.layer)) + ": " + p.action + "\n" + p.text);
    Step s;
    s.index = i;
    s.layer = p.layer;
    s.action = p.action;
    s.outcome = (keep_only_the_first ? i == 1 : i % 3 == 1) ? "kept" : "slower";
    state.history.push_back(s);
    if (!keep_only_the_first) state.layer = i > 4 ? Layer::Memory : Layer::Schedule;
  }
  return actions;
}

TEST(SearchPolicy, TheSameSeedAndOutcomesGiveTheSameProposals) {
  const WorkloadAnalysis a = analysis_of("linalg.gemm/small");
  const auto first = actions_with_outcomes(7, a, 12);
  ASSERT_GE(first.size(), 6u);
  EXPECT_EQ(first, actions_with_outcomes(7, a, 12));
  EXPECT_NE(first, actions_with_outcomes(8, a, 12));
  // No proposal repeats one already tried.
  std::set<std::string> distinct(first.begin(), first.end());
  EXPECT_EQ(distinct.size(), first.size());
}

// A sketch's memory layer that starts with directives (operands stored transposed) is the second
// proposal, right after its schedule is kept: it changes which schedules are fast.
TEST(SearchPolicy, TheSketchsMemoryLayerComesRightAfterItsSchedule) {
  const auto actions = actions_with_outcomes(1, analysis_of("nn.pwconv/kws_25x5x64"), 2, true);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].rfind("schedule: sketch contraction", 0), 0u) << actions[0];
  EXPECT_EQ(actions[1].rfind("memory: sketch contraction memory", 0), 0u) << actions[1];
  EXPECT_TRUE(has(actions[1], "layout(wt, order(1, 0))")) << actions[1];
}

// Nothing after the sketch is faster: the search goes on past the near neighbours of the start
// (one or two genes changed) to farther points instead of stopping with budget left.
TEST(SearchPolicy, WhenTheNearNeighboursRunOutItGoesFartherInsteadOfStopping) {
  for (const auto& [workload, target] : {std::pair{"linalg.gemm/small", ir::Target::Cpu},
                                         std::pair{"linalg.gemm/small", ir::Target::Cuda}}) {
    const WorkloadAnalysis a = analysis_of(workload, target);
    const Sketch sketch(a);
    std::vector<size_t> choices;  // of each schedule gene
    for (const Gene& g : sketch.genes())
      if (g.layer == Layer::Schedule && g.values.size() > 1) choices.push_back(g.values.size());
    ASSERT_GE(choices.size(), 3u) << workload << ": too few genes for points beyond two changes";
    size_t near = 0;  // points one or two genes away from the start
    for (size_t i = 0; i < choices.size(); ++i) {
      near += choices[i] - 1;
      for (size_t j = i + 1; j < choices.size(); ++j) near += (choices[i] - 1) * (choices[j] - 1);
    }
    std::set<std::string> schedules;
    for (const std::string& p : actions_with_outcomes(3, a, static_cast<int>(near) + 64, true))
      if (p.rfind("schedule:", 0) == 0) schedules.insert(p.substr(p.find('\n') + 1));
    EXPECT_GT(schedules.size(), near + 1) << workload << ": stopped within the near neighbours";
  }
}

// A gene value that alone made the best much slower (threads off) is not chosen again, alone or
// with others, while the rest of the neighbourhood is explored.
TEST(SearchPolicy, AGeneValueThatAloneMadeTheBestMuchSlowerIsNotTriedAgain) {
  const WorkloadAnalysis a = analysis_of("nn.dwconv3x3/mbv1_112x112x32");
  SearchPolicy policy(5);
  AgentState state;
  state.analysis = &a;
  state.layer = Layer::Schedule;
  state.history.push_back(Step{});  // the default lowering
  int threads_off = 0, after_the_first = 0;
  for (int i = 1; i <= 48; ++i) {
    const Proposal p = policy.propose(state);
    if (p.stop) break;
    const bool off = has(p.action, "parallel=0");
    threads_off += off;
    if (off && threads_off > 1) ++after_the_first;
    Step s;
    s.index = i;
    s.layer = p.layer;
    s.action = p.action;
    s.outcome = i == 1 ? "kept" : "slower";
    s.speedup = i == 1 ? 2.0 : off ? 0.5 : 1.9;
    if (i == 1) state.best_speedup = 2.0;
    state.history.push_back(s);
  }
  EXPECT_EQ(threads_off, 1) << "threads turned off once, then never again";
  EXPECT_EQ(after_the_first, 0);
}

// A change the layer's text does not show (pack without the panel order writes no directive) is
// not proposed: it would measure the best again.
TEST(SearchPolicy, AProposalIsNeverTheBestsOwnText) {
  const WorkloadAnalysis a = analysis_of("linalg.gemm/square_1024");
  SearchPolicy policy(2);
  AgentState state;
  state.analysis = &a;
  state.history.push_back(Step{});
  std::string best_schedule, best_memory;
  for (int i = 1; i <= 40; ++i) {
    state.layer = i % 2 ? Layer::Schedule : Layer::Memory;
    const Proposal p = policy.propose(state);
    if (p.stop) break;
    std::string& best = p.layer == Layer::Memory ? best_memory : best_schedule;
    EXPECT_NE(p.text, best) << "step " << i << ": " << p.action;
    Step s;
    s.index = i;
    s.layer = p.layer;
    s.action = p.action;
    s.outcome = i == 1 ? "kept" : "slower";  // the sketch's schedule; no memory layer kept
    s.speedup = 1.0;
    if (i == 1) best = p.text;
    state.history.push_back(s);
  }
}

class SearchKeepsOnlyCorrectCandidates : public ::testing::TestWithParam<const char*> {};

TEST_P(SearchKeepsOnlyCorrectCandidates, UnderTheFullProtocol) {
  static suite::Suite suite = suite::Suite::load();
  const suite::WorkloadEntry w = *suite.find_workload(GetParam());
  const std::string out = ekb::testing::private_temp_path("search_policy");
  fs::remove_all(out);
  // Every correct candidate kept, so that there are some to check.
  AgentOptions options = ekb::testing::agent_test_options(out, 4);
  options.final_eval.time = false;
  SearchPolicy policy(1);
  AgentRun r = run_agent(policy, ekb::testing::test_backend(), w, options);
  EXPECT_TRUE(r.final.correct) << r.final.message;
  EXPECT_GT(r.steps.size(), 1u);

  const ir::Instance inst = suite::bind_workload(w);
  eval::WorkloadReference reference(inst);
  const eval::Baseline baseline = eval::make_baseline(inst, ir::Target::Cpu);
  eval::EvalOptions full = ekb::testing::fast_options();
  full.time = false;
  int kept = 0;
  for (const auto& s : r.steps) {
    if (s.index == 0 || s.outcome != "kept") continue;
    ++kept;
    eval::CandidateRef c;
    c.workload = w;
    c.path = (fs::path(out) / w.pattern->name() / (w.workload->name + ".steps") / (std::to_string(s.index) + ".ekb")).string();
    c.solution = c.path;
    const eval::CandidateResult result = eval::evaluate_candidate(ekb::testing::test_backend(), reference, baseline, c, full);
    EXPECT_TRUE(result.correct) << "step " << s.index << " (" << s.action << "): " << result.message;
  }
  EXPECT_GT(kept, 0) << "the search kept nothing on " << GetParam();
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(PatternClasses, SearchKeepsOnlyCorrectCandidates,
                         ::testing::Values("linalg.gemm/mini", "nn.softmax/kws_1x12", "nn.relu6/mbv2_035_96_48x48x48",
                                           "img.gaussian3x3/vww_96x96_u8", "nn.conv2d/ic_resnet8_32x32x3",
                                           // cached weights and the row prefetch
                                           "nn.dwconv3x3/vww_mbv1_025_48x48x8",
                                           "transformer.gemv_decode/tinyllama_kv_2048x256", "audio.fir/kws_320x64"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace ekb::agent
