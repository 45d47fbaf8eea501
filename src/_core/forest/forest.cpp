#include "forest.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <stdexcept>

#include "../common/parallel.hpp"
#include "../common/rng.hpp"
#include "../data/column_codes.hpp"
#include "builder.hpp"
#include "column_blocks.hpp"
#include "descent.hpp"
#include "prune.hpp"

namespace pyinterp {
namespace {

// Rows for tree t: counts[i] = times row i is drawn (with replacement, or 0/1 without). With
// replacement and sample weights (cumulative, cum_weight[i] = w_0 + ... + w_i), row i is drawn with
// probability w_i / W, as scikit-learn 1.9 draws them.
void draw_rows(Rng& rng, const ForestParams& params, int64_t n, const std::vector<double>& cum_weight,
               uint32_t* counts, std::vector<uint32_t>& perm) {
  std::fill(counts, counts + n, 0u);
  if (params.bootstrap && !cum_weight.empty()) {
    for (int64_t k = 0; k < params.n_draws; ++k) {
      const double u = rng.uniform() * cum_weight.back();
      // The first row whose cumulative weight exceeds u: never a row of weight 0.
      const auto row = std::upper_bound(cum_weight.begin(), cum_weight.end(), u) - cum_weight.begin();
      ++counts[std::min<int64_t>(row, n - 1)];
    }
  } else if (params.bootstrap) {
    for (int64_t k = 0; k < params.n_draws; ++k) ++counts[rng.below(static_cast<uint64_t>(n))];
  } else if (params.n_draws >= n) {
    std::fill(counts, counts + n, 1u);
  } else {
    perm.resize(n);
    std::iota(perm.begin(), perm.end(), 0u);
    for (int64_t k = 0; k < params.n_draws; ++k) {
      const int64_t j = k + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - k)));
      std::swap(perm[k], perm[j]);
      counts[perm[k]] = 1;
    }
  }
}

// Row weights of one tree: the draw count, times the sample weight unless the weights chose the
// draws (bootstrap), times the per-tree class balance if asked.
void tree_weights(const TrainingSet& data, const ForestParams& params, const uint32_t* counts, int64_t n,
                  std::vector<double>& w) {
  const bool weighted = data.sample_weight && !params.bootstrap;
  for (int64_t i = 0; i < n; ++i) w[i] = counts[i] * (weighted ? data.sample_weight[i] : 1.0);
  if (!params.balanced_subsample) return;
  // Per output, as scikit-learn's compute_sample_weight: the weights of the outputs multiply.
  const FitTargets& t = data.targets;
  std::vector<double> drawn(t.n_classes);
  for (int32_t k = 0; k < t.n_outputs; ++k) {
    std::fill(drawn.begin(), drawn.end(), 0.0);
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      drawn[t.class_at(i, k)] += counts[i];
      total += counts[i];
    }
    const double present = static_cast<double>(std::count_if(drawn.begin(), drawn.end(), [](double c) { return c > 0; }));
    for (int64_t i = 0; i < n; ++i)
      if (counts[i] > 0) w[i] *= total / (present * drawn[t.class_at(i, k)]);
  }
}

// One id per distinct row of classes (several outputs): rows with the same ids are pure together.
std::vector<int32_t> label_ids(const FitTargets& t, int64_t n) {
  std::vector<int32_t> order(n), ids(n);
  std::iota(order.begin(), order.end(), 0);
  auto row = [&](int32_t i) { return t.classes + static_cast<int64_t>(i) * t.n_outputs; };
  auto less = [&](int32_t a, int32_t b) { return std::lexicographical_compare(row(a), row(a) + t.n_outputs, row(b), row(b) + t.n_outputs); };
  std::sort(order.begin(), order.end(), less);
  int32_t id = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (k > 0 && less(order[k - 1], order[k])) ++id;
    ids[order[k]] = id;
  }
  return ids;
}

struct FitWorker {
  TreeBuilder builder;
  std::vector<double> w;
  std::vector<uint32_t> perm;
};

// FitTargets and weights whose largest magnitude lies outside [2^-256, 2^256] are fitted scaled by
// 2^-e, e that magnitude's exponent, which brings it into [1/2, 1): then no sum of w y^2 overflows
// or underflows for finite input. Scaling by a power of two is exact (ldexp), so the trees are
// those of the unscaled data, and what they record is scaled back exactly (unscale). 0: no scaling.
int extreme_exponent(const double* v, int64_t n) {
  double largest = 0.0;
  for (int64_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(v[i]));
  int exponent = 0;
  std::frexp(largest, &exponent);
  return std::abs(exponent) <= 256 ? 0 : exponent;
}

std::vector<double> scaled(const double* v, int64_t n, int exponent) {
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = std::ldexp(v[i], -exponent);
  return out;
}

// Undoes the fitting scales: values by 2^y_exp, impurities and their decreases by 2^(k y_exp)
// for an impurity of power k in y (inf where the true value is beyond double range), weighted
// sizes by 2^w_exp.
void unscale(Tree& tree, int y_exp, int w_exp, int impurity_power) {
  for (double& w : tree.weighted_n_node_samples) w = std::ldexp(w, w_exp);
  for (double& v : tree.value) v = std::ldexp(v, y_exp);
  for (double& v : tree.impurity) v = std::ldexp(v, impurity_power * y_exp);
  for (double& v : tree.impurity_decrease) v = std::ldexp(v, impurity_power * y_exp);
}

void check_width(const Forest& forest, const MatrixView& X) {
  if (X.n_cols != forest.n_features) throw std::invalid_argument("X has a different number of features than the forest");
}

}  // namespace

void check_feature_params(const ForestParams& params, int64_t n_features) {
  if (!params.monotonic_cst.empty()) {
    if (static_cast<int64_t>(params.monotonic_cst.size()) != n_features)
      throw std::invalid_argument("monotonic_cst must have one entry per feature");
    for (int8_t c : params.monotonic_cst)
      if (c < -1 || c > 1) throw std::invalid_argument("monotonic_cst entries must be -1, 0 or 1");
  }
  auto check_indices = [&](const std::vector<int64_t>& features, const std::string& name) {
    for (size_t k = 0; k < features.size(); ++k) {
      if (features[k] < 0 || features[k] >= n_features)
        throw std::invalid_argument(name + ": feature " + std::to_string(features[k]) + " is out of range");
      if (k > 0 && features[k] <= features[k - 1]) throw std::invalid_argument(name + " must be ascending and distinct");
    }
  };
  check_indices(params.always_features, "always_features");
  check_indices(params.categorical_features, "categorical_features");
  if (!params.monotonic_cst.empty())
    for (const int64_t f : params.categorical_features)
      if (params.monotonic_cst[f] != 0)
        throw std::invalid_argument("monotonic_cst: feature " + std::to_string(f) +
                                    " is categorical; categories have no order to be monotonic in");
}

std::vector<std::vector<uint8_t>> categories_of_codes(const ColumnSource& X, const ColumnCodes& codes,
                                                      const std::vector<int64_t>& categorical, int64_t first) {
  std::vector<std::vector<uint8_t>> out;
  if (categorical.empty()) return out;
  out.resize(X.n_cols());
  for (const int64_t j : categorical) {
    std::vector<uint8_t>& category = out[j];
    category.assign(codes.n_codes(j), 0);
    std::vector<uint8_t> seen(codes.n_codes(j), 0);
    for (int64_t i = 0; i < X.n_rows(); ++i) {
      const uint32_t c = codes.code(j, i);
      if (c >= codes.n_codes(j) || seen[c]) continue;  // missing, or known
      const double v = X.value(i, j);
      if (!(v >= 0.0 && v < kMaxCategories) || v != std::floor(v))
        throw std::invalid_argument("categorical feature " + std::to_string(first + j) + ": value " +
                                    std::to_string(v) + " (row " + std::to_string(i) +
                                    ") is not a category code, an integer in [0, " + std::to_string(kMaxCategories) +
                                    ")");
      category[c] = static_cast<uint8_t>(v);
      seen[c] = 1;
    }
    // A column of missing values alone has no codes: an empty table would read as not categorical.
    if (category.empty()) category.push_back(0);
  }
  return out;
}

FitData::FitData(const FitTargets& raw, int64_t n) : targets(raw) {
  const int64_t n_y = n * raw.n_outputs;
  y_exp = raw.y ? extreme_exponent(raw.y, n_y) : 0;
  if (y_exp) {
    y_scaled = scaled(raw.y, n_y, y_exp);
    targets.y = y_scaled.data();
  }
  if (raw.classes && raw.n_outputs > 1) {
    labels = label_ids(raw, n);
    targets.labels = labels.data();
  }
}

namespace {

// Checks the parameters against the task and X's width (p).
void check_fit(const FitTargets& targets, const ForestParams& params, int64_t p) {
  const int32_t n_classes = targets.n_classes;
  if (params.n_estimators < 1) throw std::invalid_argument("n_estimators must be at least 1");
  if (params.max_features < 1) throw std::invalid_argument("max_features must be at least 1");
  if (params.n_draws < 1) throw std::invalid_argument("max_samples must select at least one row");
  if (params.first_tree < 0) throw std::invalid_argument("first_tree must be >= 0");
  if (params.column_blocks < 0) throw std::invalid_argument("column_blocks must be >= 0");
  if ((n_classes > 0) != is_classification(params.criterion))
    throw std::invalid_argument("the criterion does not match the task");
  if (targets.n_outputs < 1) throw std::invalid_argument("the targets need at least one output");
  check_feature_params(params, p);
  if (!params.monotonic_cst.empty()) {
    if (n_classes > 2) throw std::invalid_argument("monotonic_cst needs regression or two classes");
    if (targets.n_outputs > 1) throw std::invalid_argument("monotonic_cst needs a single output");
  }
  // Breiman's ordering finds the best split of categories for these only.
  if (!params.categorical_features.empty() &&
      (n_classes > 2 || targets.n_outputs > 1 || params.criterion == Criterion::absolute_error))
    throw std::invalid_argument(
        "categorical_features needs one output and squared error, Poisson deviance or two classes (the best split of "
        "categories is then found by ordering them by their mean; for more classes or outputs, or absolute error, "
        "it is not)");
}

// The trees, on data whose columns (codes and source, or blocks) are set; the rest of it is set here.
Forest grow_forest(TrainingSet& data, const FitTargets& targets, const double* sample_weight,
                   const std::vector<double>& feature_weights, const ForestParams& params, int64_t n, int64_t p,
                   int n_threads) {
  const FitData fit(targets, n);
  const int w_exp = sample_weight ? extreme_exponent(sample_weight, n) : 0;
  const std::vector<double> w_scaled = w_exp ? scaled(sample_weight, n, w_exp) : std::vector<double>();
  const int y_exp = fit.y_exp;
  ForestParams fit_params = params;
  const int power = impurity_power(params.criterion);
  fit_params.min_impurity_decrease = std::ldexp(params.min_impurity_decrease, -power * y_exp);
  const double ccp_alpha = std::ldexp(params.ccp_alpha, -power * y_exp);

  data.targets = fit.targets;
  data.sample_weight = w_exp ? w_scaled.data() : sample_weight;
  data.feature_weights = feature_weights;

  std::vector<double> cum_weight;
  if (params.bootstrap && data.sample_weight) {
    cum_weight.assign(data.sample_weight, data.sample_weight + n);
    std::partial_sum(cum_weight.begin(), cum_weight.end(), cum_weight.begin());
    if (!(cum_weight.back() > 0.0)) throw std::invalid_argument("sample weights must not all be zero");
  }

  Forest forest;
  forest.n_features = p;
  forest.n_classes = targets.n_classes;
  forest.n_outputs = targets.n_outputs;
  forest.criterion = params.criterion;
  forest.n_samples = n;
  forest.trees.resize(params.n_estimators);
  forest.inbag.resize(static_cast<size_t>(params.n_estimators) * n);
  const bool record_oob = params.record_oob_leaves && ccp_alpha == 0.0;
  if (record_oob) forest.oob_leaves.resize(static_cast<size_t>(params.n_estimators) * n);

  parallel_for(
      params.n_estimators, n_threads,
      [&](int thread) { return FitWorker{TreeBuilder(data, fit_params, thread), std::vector<double>(n), {}}; },
      [&](int64_t t, int, FitWorker& worker) {
        Rng rng(params.seed, static_cast<uint64_t>(params.first_tree + t));
        uint32_t* counts = forest.inbag.data() + t * n;
        draw_rows(rng, params, n, cum_weight, counts, worker.perm);
        tree_weights(data, params, counts, n, worker.w);
        int32_t* oob_leaf = record_oob ? forest.oob_leaves.data() + t * n : nullptr;
        forest.trees[t] = worker.builder.build(worker.w, params.first_tree + t, counts, oob_leaf);
        if (ccp_alpha > 0.0) forest.trees[t] = prune_tree(forest.trees[t], ccp_alpha);
        // With bootstrap the weights only chose the rows: the trees' weights are counts.
        if (y_exp || w_exp) unscale(forest.trees[t], y_exp, params.bootstrap ? 0 : w_exp, power);
      },
      /*report_progress=*/true);
  return forest;
}

}  // namespace

Forest fit_forest(const ColumnSource& X, const FitTargets& targets, const double* sample_weight,
                  const std::vector<double>& feature_weights, const ForestParams& params, const ColumnCodes* codes) {
  check_fit(targets, params, X.n_cols());
  if (params.column_blocks > 0) {
    LocalBlocks blocks(X, targets, params, feature_weights);
    return fit_forest(blocks, targets, sample_weight, feature_weights, params);
  }
  std::optional<ColumnCodes> own_codes;
  if (codes == nullptr) codes = &own_codes.emplace(X, params.n_threads);
  if (codes->n_rows() != X.n_rows() || codes->n_cols() != X.n_cols())
    throw std::invalid_argument("the encoded columns are not those of X (their shapes differ)");
  TrainingSet data;
  data.codes = codes;
  data.source = &X;
  data.category_of_code = categories_of_codes(X, *codes, params.categorical_features);
  return grow_forest(data, targets, sample_weight, feature_weights, params, X.n_rows(), X.n_cols(), params.n_threads);
}

Forest fit_forest(ColumnBlocks& blocks, const FitTargets& targets, const double* sample_weight,
                  const std::vector<double>& feature_weights, const ForestParams& params) {
  check_fit(targets, params, blocks.n_cols());
  if (!feature_weights.empty() && static_cast<int64_t>(feature_weights.size()) != blocks.n_cols())
    throw std::invalid_argument("feature_weights must have one entry per feature");
  TrainingSet data;
  data.blocks = &blocks;
  // n_threads trees grow at once, each asking the blocks under its thread's slot: the blocks'
  // round trips overlap.
  if (params.n_threads > ColumnBlock::kMaxSlots)
    throw std::invalid_argument("a fit over column blocks grows at most " + std::to_string(ColumnBlock::kMaxSlots) +
                                " trees at once (n_threads)");
  return grow_forest(data, targets, sample_weight, feature_weights, params, blocks.n_rows(), blocks.n_cols(),
                     params.n_threads);
}

Forest join_forests(const std::vector<const Forest*>& parts) {
  if (parts.empty()) throw std::invalid_argument("join_forests needs at least one forest");
  const Forest& first = *parts.front();
  Forest joined;
  joined.criterion = first.criterion;
  joined.n_features = first.n_features;
  joined.n_classes = first.n_classes;
  joined.n_outputs = first.n_outputs;
  joined.n_samples = first.n_samples;
  for (const Forest* part : parts) {
    if (part->criterion != first.criterion || part->n_features != first.n_features ||
        part->n_classes != first.n_classes || part->n_outputs != first.n_outputs || part->n_samples != first.n_samples)
      throw std::invalid_argument("forests to join must share the criterion, classes, outputs and training rows' shape");
    joined.trees.insert(joined.trees.end(), part->trees.begin(), part->trees.end());
    joined.inbag.insert(joined.inbag.end(), part->inbag.begin(), part->inbag.end());
  }
  // Recorded out-of-bag leaves serve only if every part has them.
  if (std::all_of(parts.begin(), parts.end(), [](const Forest* part) { return !part->oob_leaves.empty(); }))
    for (const Forest* part : parts)
      joined.oob_leaves.insert(joined.oob_leaves.end(), part->oob_leaves.begin(), part->oob_leaves.end());
  return joined;
}

void predict(const Forest& forest, const MatrixView& X, double* out, int n_threads) {
  check_width(forest, X);
  const int32_t nv = forest.n_values();
  const int64_t n = X.n_rows;
  // A sum over the trees in their order, then one division: scikit-learn's arithmetic, so a
  // forest exported with to_sklearn predicts the same doubles.
  const double n_trees = static_cast<double>(forest.trees.size());
  for_row_blocks(n, n_threads, [&](int64_t begin, int64_t end) { std::fill(out + begin * nv, out + end * nv, 0.0); });
  with_row_reader(X, [&](const auto& x) {
    for_row_blocks(n, n_threads, [&](int64_t begin, int64_t end) {
      for (const Tree& tree : forest.trees) {
        for (int64_t i = begin; i < end; ++i) {
          const int32_t leaf = tree.leaf_of([&](int32_t j) { return x(i, j); });
          const double* v = tree.value.data() + static_cast<int64_t>(leaf) * nv;
          for (int32_t k = 0; k < nv; ++k) out[i * nv + k] += v[k];
        }
        checkpoint();
      }
    }, descent_block(n, n_threads, nv * int64_t{sizeof(double)}));
  });
  for_row_blocks(n, n_threads, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin * nv; k < end * nv; ++k) out[k] /= n_trees;
  });
}

namespace {

// The leaves the fit recorded for its out-of-bag rows when X is the training matrix itself
// (training) and the fit kept them, else nullptr: the rows are then run down the trees.
const int32_t* recorded_oob_leaves(const Forest& forest, bool training) {
  return training && !forest.oob_leaves.empty() ? forest.oob_leaves.data() : nullptr;
}

// fn(leaf) with leaf(t, i) the leaf row i of X reaches in tree t: recorded (X.n_rows per tree), or
// by running it down.
template <class Fn>
void with_leaves(const Forest& forest, const MatrixView& X, const int32_t* recorded, Fn fn) {
  with_row_reader(X, [&](const auto& x) {
    fn([&](int64_t t, int64_t i) {
      return recorded ? recorded[t * X.n_rows + i] : forest.trees[t].leaf_of([&](int32_t j) { return x(i, j); });
    });
  });
}

// Leaves of every row in every tree, or -1 where inbag (n_trees x n_rows, or nullptr) counts the row
// as drawn for the tree; recorded: the fit's out-of-bag leaves of X's rows (with inbag), or nullptr.
void leaves_of(const Forest& forest, const MatrixView& X, const uint32_t* inbag, const int32_t* recorded,
               int64_t* out, int n_threads) {
  const int64_t n_trees = static_cast<int64_t>(forest.trees.size()), n = X.n_rows;
  with_leaves(forest, X, recorded, [&](const auto& leaf) {
    for_row_blocks(n, n_threads, [&](int64_t begin, int64_t end) {
      for (int64_t t = 0; t < n_trees; ++t) {
        const uint32_t* counts = inbag ? inbag + t * n : nullptr;
        for (int64_t i = begin; i < end; ++i) out[i * n_trees + t] = counts && counts[i] != 0 ? -1 : leaf(t, i);
        checkpoint();
      }
    }, descent_block(n, n_threads, n_trees * int64_t{sizeof(int64_t)}));
  });
}

}  // namespace

void predict_oob(const Forest& forest, const MatrixView& X, double* out, int64_t* n_trees_out, int n_threads,
                 bool training) {
  check_width(forest, X);
  if (X.n_rows != forest.n_samples) throw std::invalid_argument("out-of-bag predictions need the training rows");
  const int32_t nv = forest.n_values();
  const int64_t n = forest.n_samples;
  for_row_blocks(n, n_threads, [&](int64_t begin, int64_t end) {
    std::fill(out + begin * nv, out + end * nv, 0.0);
    std::fill(n_trees_out + begin, n_trees_out + end, int64_t{0});
  });
  with_leaves(forest, X, recorded_oob_leaves(forest, training), [&](const auto& leaf) {
    for_row_blocks(n, n_threads, [&](int64_t begin, int64_t end) {
      for (int64_t t = 0; t < static_cast<int64_t>(forest.trees.size()); ++t) {
        const Tree& tree = forest.trees[t];
        const uint32_t* counts = forest.inbag.data() + t * n;
        for (int64_t i = begin; i < end; ++i) {
          if (counts[i] != 0) continue;
          const double* v = tree.value.data() + static_cast<int64_t>(leaf(t, i)) * nv;
          for (int32_t k = 0; k < nv; ++k) out[i * nv + k] += v[k];
          ++n_trees_out[i];
        }
        checkpoint();
      }
    }, descent_block(n, n_threads, nv * int64_t{sizeof(double)} + int64_t{sizeof(int64_t)}));
  });
  for_row_blocks(n, n_threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      if (n_trees_out[i] > 0)
        for (int32_t k = 0; k < nv; ++k) out[i * nv + k] /= static_cast<double>(n_trees_out[i]);
  });
}

void apply(const Forest& forest, const MatrixView& X, int64_t* out, int n_threads) {
  check_width(forest, X);
  leaves_of(forest, X, nullptr, nullptr, out, n_threads);
}

void apply_oob(const Forest& forest, const MatrixView& X, int64_t* out, int n_threads, bool training) {
  check_width(forest, X);
  if (X.n_rows != forest.n_samples) throw std::invalid_argument("out-of-bag leaves need the training rows");
  leaves_of(forest, X, forest.inbag.data(), recorded_oob_leaves(forest, training), out, n_threads);
}

void record_oob_leaves(Forest& forest, const MatrixView& X, int64_t start, int n_threads) {
  check_width(forest, X);
  const int64_t n = forest.n_samples, n_trees = static_cast<int64_t>(forest.trees.size());
  if (start < 0 || start > n - X.n_rows)
    throw std::invalid_argument("record_oob_leaves: rows [start, start + len(X)) are not among the training rows");
  if (forest.oob_leaves.empty()) forest.oob_leaves.assign(static_cast<size_t>(n_trees * n), -1);
  with_leaves(forest, X, nullptr, [&](const auto& leaf) {
    for_row_blocks(X.n_rows, n_threads, [&](int64_t begin, int64_t end) {
      for (int64_t t = 0; t < n_trees; ++t) {
        const uint32_t* counts = forest.inbag.data() + t * n + start;
        int32_t* out = forest.oob_leaves.data() + t * n + start;
        for (int64_t i = begin; i < end; ++i)
          if (counts[i] == 0) out[i] = leaf(t, i);
        checkpoint();
      }
    }, descent_block(X.n_rows, n_threads, n_trees * int64_t{sizeof(int32_t)}));
  });
}

void leaf_sums(const Forest& forest, const MatrixView& X, const double* weight, bool oob, bool training,
               double* count, double* sum, int n_threads) {
  check_width(forest, X);
  const int64_t n = X.n_rows, n_trees = static_cast<int64_t>(forest.trees.size());
  if (oob && n != forest.n_samples) throw std::invalid_argument("out-of-bag leaves need the training rows");
  const int32_t* recorded = recorded_oob_leaves(forest, oob && training);
  std::vector<int64_t> offset(n_trees + 1, 0);
  for (int64_t t = 0; t < n_trees; ++t) offset[t + 1] = offset[t] + forest.trees[t].node_count();
  std::fill(count, count + offset[n_trees], 0.0);
  std::fill(sum, sum + offset[n_trees], 0.0);
  // A tree's nodes are its task's alone, and each sums its rows in order: any thread count agrees.
  with_leaves(forest, X, recorded, [&](const auto& leaf_in) {
    parallel_for(n_trees, n_threads, no_state, [&](int64_t t, int, NoState&) {
      const uint32_t* counts = oob ? forest.inbag.data() + t * n : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        if (counts && counts[i] != 0) continue;
        const int64_t leaf = offset[t] + leaf_in(t, i);
        count[leaf] += 1.0;
        sum[leaf] += weight[i];
      }
    });
  });
}

DecisionPaths decision_path(const Forest& forest, const MatrixView& X, int n_threads) {
  check_width(forest, X);
  DecisionPaths paths;
  const int64_t n_trees = static_cast<int64_t>(forest.trees.size());
  paths.node_offsets.resize(n_trees + 1, 0);
  for (int64_t t = 0; t < n_trees; ++t)
    paths.node_offsets[t + 1] = paths.node_offsets[t] + forest.trees[t].node_count();

  std::vector<int64_t> leaves(static_cast<size_t>(X.n_rows) * n_trees);
  apply(forest, X, leaves.data(), n_threads);
  paths.indptr.resize(X.n_rows + 1, 0);
  for (int64_t i = 0; i < X.n_rows; ++i) {
    int64_t length = 0;
    for (int64_t t = 0; t < n_trees; ++t) length += forest.trees[t].depth[leaves[i * n_trees + t]] + 1;
    paths.indptr[i + 1] = paths.indptr[i] + length;
  }
  paths.indices.resize(paths.indptr.back());
  for_row_blocks(X.n_rows, n_threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t k = paths.indptr[i];
      for (int64_t t = 0; t < n_trees; ++t) {
        const Tree& tree = forest.trees[t];
        // Walk up from the leaf, then write root-first so indices are sorted within each tree.
        const int64_t len = tree.depth[leaves[i * n_trees + t]] + 1;
        int64_t node = leaves[i * n_trees + t];
        for (int64_t d = len - 1; d >= 0; --d, node = tree.parent[node]) paths.indices[k + d] = paths.node_offsets[t] + node;
        k += len;
      }
    }
  });
  return paths;
}

}  // namespace pyinterp
