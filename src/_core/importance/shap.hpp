// Exact path-dependent TreeSHAP (the values of Lundberg et al. 2020, Algorithm 2, computed as
// Gauss-Legendre integrals of each path's product, see shap.cpp) and SHAP interaction values
// (their Section 4.2) of a forest's mean prediction, and interventional TreeSHAP against background
// rows (their Algorithm 3). Node covers are weighted_n_node_samples. Rows are routed as
// Tree::child_of routes them (missing values included). Every row sums its trees in an order fixed
// by the input sizes alone, so results are bit-identical for any number of threads.
#pragma once
#include <cstdint>
#include <vector>

#include "../data/matrix.hpp"
#include "../forest/forest.hpp"

namespace pyinterp {

// What a feature is credited with: its Shapley value, or its Banzhaf value (the mean marginal
// contribution over all coalitions, each counted once: Banzhaf 1965; the two differ only in how
// coalitions of each size are weighted).
enum class Attribution { shapley, banzhaf };

// expected: n_values, the mean over trees of the cover-weighted mean leaf value (the value with no
// feature known). Every row's values sum to its prediction minus expected.
std::vector<double> shap_expected_value(const Forest& forest);

// How each tree is read: per tree the form of less work for the call's row counts (automatic), or
// one form for every tree (patterns: std::invalid_argument for a tree whose leaves have more than
// kMaxPatternWidth distinct features on their paths).
enum class ShapAlgorithm { automatic, patterns, walk };
constexpr int32_t kMaxPatternWidth = 14;

// out: n_rows x n_features x n_values (every entry written). Banzhaf values are the integrand of the
// Shapley integral at t = 1/2 (each path factor o t + z (1 - t) there), so the same walk gives them
// with a one-node rule. Shallow trees are read from leaf pattern tables (leaf_patterns.hpp), the
// others walked.
void shap_values(const Forest& forest, const MatrixView& X, double* out, int n_threads,
                 Attribution kind = Attribution::shapley, ShapAlgorithm algorithm = ShapAlgorithm::automatic);

// The bytes of leaf pattern tables shap_values keeps with the forest for its later calls (at most
// 32 MB a forest; the trees' summaries are kept beside them).
int64_t shap_kept_table_bytes(const Forest& forest);

// out: n_rows x n_features x n_features x n_values, zeros on entry (the values are added: the caller's
// zeroed memory can stay untouched where trees put nothing); out[i, a, b] (a != b)
// is half the Shapley interaction index of (a, b), out[i, a, a] the main effect, so out[i, a, :]
// sums to the SHAP value of a.
void shap_interaction_values(const Forest& forest, const MatrixView& X, double* out, int n_threads);

// The mean over rows of |interaction value| per (a, b) pair (diagonal included), without the
// per-row tensor: only pairs of features that share a tree, sorted by (a, b); mean_abs is
// (pairs x n_values).
struct PairMeans {
  std::vector<int32_t> a, b;
  std::vector<double> mean_abs;
};
PairMeans shap_interaction_mean_abs(const Forest& forest, const MatrixView& X, int n_threads);

// Each row's k largest interaction values by magnitude among the pairs a < b (entry [a, b] of
// shap_interaction_values), per value: pairs n_rows x n_values x k x 2, values n_rows x n_values x k.
// Ties, and the pairs of value 0 that fill a row with fewer nonzero pairs, go by (a, b). Memory per
// row: the pairs that share a tree, never p x p.
void shap_interaction_top_k(const Forest& forest, const MatrixView& X, int64_t k, int32_t* pairs, double* values,
                            int n_threads);

// Interventional TreeSHAP (Lundberg et al. 2020, Algorithm 3): the Shapley (or Banzhaf) values of
// v(S) = mean over background rows r of f(x_S, r_rest), each row's trees added in tree order. Per
// tree from leaf pattern tables (O(n + m) in the n rows and m background rows) or by the grouped
// walk (O(n m)), whichever costs less (shap_background.cpp). out: n_rows x n_features x n_values
// (every entry written); returns the expected value, the mean prediction over the background rows.
std::vector<double> shap_values_interventional(const Forest& forest, const MatrixView& X, const MatrixView& background,
                                               double* out, int n_threads, Attribution kind = Attribution::shapley,
                                               ShapAlgorithm algorithm = ShapAlgorithm::automatic);

// The interaction values of the same games (as shap_interaction_values: off the diagonal half the
// interaction index, on it the value minus its row's pairs). out: n_rows x n_features x n_features x
// n_values, zeros on entry.
std::vector<double> shap_interaction_values_interventional(const Forest& forest, const MatrixView& X,
                                                           const MatrixView& background, double* out, int n_threads,
                                                           Attribution kind = Attribution::shapley,
                                                           ShapAlgorithm algorithm = ShapAlgorithm::automatic);

}  // namespace pyinterp
