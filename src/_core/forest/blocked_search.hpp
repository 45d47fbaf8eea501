// The split search over columns held apart in blocks: the feature-parallel builder's search, here
// with the blocks in one process. Each block (an ExactSplitSearch over its own columns' codes)
// gives the candidates it holds their own best splits; the node's draws, from the node's stream,
// and the pick among the answers (CandidatePick, in draw order) are made here. The split is the
// exact search's on the whole matrix (tests/test_split_search.py), so a driver that asks blocks
// on other machines grows the trees one process grows.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "../data/column_source.hpp"
#include "exact_search.hpp"
#include "feature_sampler.hpp"
#include "split_search.hpp"

namespace pyinterp {

// Columns [first, first + n_cols) of another source, as a source of their own.
class ColumnRangeSource final : public ColumnSource {
 public:
  ColumnRangeSource(const ColumnSource& whole, int64_t first, int64_t n_cols);
  int64_t panel_end(int64_t c0, int n_threads) const override;
  MatrixView read(int64_t c0, int64_t c1, std::vector<uint8_t>& buffer) const override;
  double value(int64_t i, int64_t j) const override { return whole_.value(i, first_ + j); }

 private:
  const ColumnSource& whole_;
  int64_t first_;
};

class BlockedSplitSearch final : public SplitSearch {
 public:
  // data: the whole matrix's training set; its columns are cut into params.column_blocks blocks
  // of consecutive columns, each encoded on its own.
  BlockedSplitSearch(const TrainingSet& data, const ForestParams& params);
  void begin_tree(const double* w, double min_weight_leaf) override;
  Split find(const SearchNode& node) override;

 private:
  struct Block {
    int64_t first;  // its first column in the whole matrix
    std::unique_ptr<ColumnRangeSource> source;
    std::unique_ptr<ColumnCodes> codes;
    TrainingSet data;
    ForestParams params;
    std::unique_ptr<ExactSplitSearch> search;
  };
  // The candidates' own splits (features of the whole matrix) and whether each varies, asked of
  // the blocks that hold them; returns the node's `reachable` (ExactSplitSearch::evaluate_features).
  double answer(const SearchNode& node, const std::vector<int64_t>& features);

  const ForestParams& params_;
  std::vector<Block> blocks_;
  std::vector<int32_t> owner_;  // the block of each column
  FeatureSampler sampler_;
  std::vector<int64_t> batch_, local_;
  std::vector<int64_t> positions_;
  std::vector<Split> splits_, block_splits_;
  std::vector<uint8_t> varies_, block_varies_;
};

}  // namespace pyinterp
