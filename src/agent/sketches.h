// The search policy's sketches (docs/AGENT.md, "The search policy"): for each class of pattern,
// read from the compute layer's stages, a parametrised schedule and memory layer, as a list of
// genes (each a name, the layer it changes and the values it may take) and a renderer from a
// choice of values to the layers' texts. The search (search_policy.h) chooses the values.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/policy.h"
#include "ir/target.h"

namespace ekb::agent {

// How the output stage computes, which decides the sketch:
//  - elementwise: no stage reduces;
//  - stencil: the output reduces over a small window (each reduction loop at most kStencilExtent
//    iterations: 3x3, 5x5, 7x7) and no other stage reduces;
//  - contraction: the output reduces over a longer loop and has two or more pure loops (GEMM, conv);
//  - reduction: any other reduction (row reductions as in softmax and norms, GEMV).
enum class PatternClass { Elementwise, Stencil, Contraction, Reduction };
inline constexpr int64_t kStencilExtent = 8;
std::string_view pattern_class_name(PatternClass c);
PatternClass classify(const std::vector<StageFacts>& stages);

struct Gene {
  std::string name;
  Layer layer = Layer::Schedule;
  std::vector<int> values;  // the first is the sketch's starting choice
};

// One choice per gene, by name.
using GeneValues = std::map<std::string, int>;

class Sketch {
 public:
  // The sketch of `analysis`'s pattern class for its backend. Its output stage is the last output
  // among the stages.
  explicit Sketch(const WorkloadAnalysis& analysis);
  PatternClass pattern_class() const { return class_; }
  const std::vector<Gene>& genes() const { return genes_; }
  GeneValues initial() const;
  // Whether a choice can be written as directives the verifier may accept: on a GPU, a block of at
  // most 1024 threads and a register tile no larger than the block's tile.
  bool feasible(const GeneValues& v) const;
  // The `schedule TARGET { ... }` block, and the memory layer (with the schedule block of the
  // buffers its caches create, when it creates any); empty text: no directive.
  std::string schedule(const GeneValues& v) const;
  std::string memory(const GeneValues& v) const;

 private:
  void add(std::string name, Layer layer, std::vector<int> values);
  std::string schedule_cpu(const GeneValues& v) const;
  std::string schedule_gpu(const GeneValues& v) const;
  std::string memory_gpu(const GeneValues& v) const;
  // The GPU contraction's loops (a block tile of outputs, each thread a register tile, the
  // reduction in steps staged through shared memory); appends its directives.
  struct GpuTileLoops {
    std::string thread_j;  // the loop bound to thread.x: where the register tile is cached
    std::string stage_k;   // the reduction loop whose each step copies the inputs into shared memory
  };
  GpuTileLoops gpu_tile(const GeneValues& v, std::vector<std::string>* directives) const;
  // A contraction's tiling directives (appended to `directives`) and the loop order they make.
  struct ContractionLoops {
    std::vector<std::string> order;  // outermost first
    std::string inner_reduction;     // the innermost reduction loop
    // The outer reduction loop when it runs inside the column panels and outside the row tiles
    // (order 1: j_o, k_o, i_o, k_i, ...): where a panel of the j-side operand can be packed.
    std::string panel_reduction;
  };
  ContractionLoops contraction(const GeneValues& v, std::vector<std::string>* directives) const;

  // The layout directives that store the operands of `s` read across its last pure loop (the
  // vector loop) with that dimension last.
  std::vector<std::string> transposes(const StageFacts& s) const;
  // A stencil's weights (read in its window, indexed by no output loop but the vector loop) and
  // the prefetch of its window input's row that is new to each output row.
  void find_stencil_operands();

  PatternClass class_ = PatternClass::Elementwise;
  bool gpu_ = false;
  // How the GPU sketch maps the output stage: a flat grid of threads over its pure loops; 2D block
  // tiles with register tiles (contractions); one block per row, its reduction shared by the block's
  // threads (the output's own single reduction loop, or the temps' over the output's last loop).
  enum class GpuForm { Flat, Tiled, RowReduction, RowTemps };
  GpuForm gpu_form_ = GpuForm::Flat;
  std::vector<StageFacts> stages_;
  size_t out_ = 0;  // the output stage's index in stages_
  std::string input_;  // an input the output's computation reads (for prefetch), or empty
  std::string prefetch_stage_;  // the stage that reads input_ first
  std::vector<Gene> genes_;
  // Contractions: the temps that are contractions too (sdpa's scores), computed as a sum of outer
  // products (the reduction outside the vector loop); and every operand's transposing layout.
  std::vector<std::string> outer_product_;
  std::vector<std::string> transposes_;
  // Contractions: the operand indexed by j and not i, contiguous along j (a GEMM's B), which a
  // panel-ordered tiling packs per panel and reduction block.
  std::string packable_;
  size_t packable_rank_ = 0;
  // Stencils: the loop of output rows (the parallel one), where the weights are cached in `local`;
  // and the window input's prefetch along the loop of columns, `ahead` columns past the window's
  // first tap in its last row, which no earlier output row of the thread has read.
  std::string row_loop_;
  std::string weights_;
  struct RowPrefetch {
    std::string column_loop;
    std::string tensor;
    int64_t last_row_offset = 0;  // elements from the window's first tap to its last row
    int64_t column_stride = 0;    // elements per column
    int lines = 1;                // cache lines prefetched per column
  };
  std::optional<RowPrefetch> row_prefetch_;
};

}  // namespace ekb::agent
