// Signed leaf paths (paper 001 eq. 6): for every leaf, the set F_eps of signed features
// (feature k, -1 for the left branch x <= t / +1 for the right) of the path's inner nodes whose
// impurity decrease exceeds eps, each feature counted at its first occurrence, with the leaf's
// depth, tree and weight. Codes: 2k for (k, -1), 2k + 1 for (k, +1); sorted within a path.
// With feature groups, k is the split feature's group: a group counts as one feature.
// The codes of all leaves' paths grow as leaves x path length (quadratically in the depth of deep
// trees): past max_codes a reading stops with TooManyPathCodes before any output is built.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "../forest/forest.hpp"
#include "../forest/sklearn_trees.hpp"
#include "../common/csr.hpp"

namespace pyinterp {

// after_filter: drop nodes at or below eps, then keep each feature's first remaining node (the
// paper's text and its code); literal: a feature's first node decides, even if it fails eps;
// every: no first-occurrence rule, every (feature, side) of the remaining nodes once (so both
// sides of a feature can appear: the Python irf package's signed paths).
enum class FirstOccurrence { after_filter, literal, every };
// depth: 2^-D / n_trees (depth-weighted prevalence); samplesize: leaf weight / (root weight * n_trees).
enum class LeafWeight { depth, samplesize };
// weighted: (N_t I_t - N_l I_l - N_r I_r) / N_root, the recorded impurity_decrease; within_node:
// the same divided by N_t / N_root (eq. 5).
enum class DecreaseScale { weighted, within_node };
// The node sizes N in the decrease: weighted = weighted_n_node_samples (in-bag multiplicities
// times sample weights, what the impurities were computed with); distinct = n_node_samples (the
// count of distinct in-bag rows, as the lssfind and irf packages use).
enum class NodeCounts { weighted, distinct };

struct SignedPathOptions {
  double epsilon = 0.01;
  FirstOccurrence first_occurrence = FirstOccurrence::after_filter;
  LeafWeight weight = LeafWeight::depth;
  DecreaseScale scale = DecreaseScale::weighted;
  NodeCounts counts = NodeCounts::weighted;
  // Per feature, its group in [0, n_groups) (n_features values), or null: each feature alone.
  const int32_t* groups = nullptr;
  int32_t n_groups = 0;
  int64_t max_codes = INT64_MAX;  // codes over all leaves' paths before TooManyPathCodes (>= 1)
};

struct TooManyPathCodes : std::length_error {
  using std::length_error::length_error;
};

// One row per leaf, trees in order and leaves in node order within a tree (CSR).
struct SignedPaths {
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> codes;
  std::vector<double> weight;
  std::vector<int32_t> depth, tree, leaf;

  void clear() {
    indptr.assign(1, 0);
    codes.clear();
    weight.clear();
    depth.clear();
    tree.clear();
    leaf.clear();
  }
};

// From a core forest, or from a scikit-learn forest's node arrays in place (the same paths as its
// core copy would give, without making one; std::invalid_argument on links a tree cannot have).
SignedPaths signed_paths(const Forest& forest, const SignedPathOptions& options, int n_threads);
SignedPaths signed_paths(const SklearnForestNodes& forest, const SignedPathOptions& options, int n_threads);

// The distinct paths of the forest with their leaves' weights summed (rows in order of first
// occurrence, trees in order): all that prevalence needs, far smaller than one row per leaf
// once epsilon has filtered the paths. Output does not depend on n_threads.
WeightedCsr distinct_signed_paths(const Forest& forest, const SignedPathOptions& options, int n_threads);
WeightedCsr distinct_signed_paths(const SklearnForestNodes& forest, const SignedPathOptions& options, int n_threads);

}  // namespace pyinterp
