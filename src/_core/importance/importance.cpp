#include "importance.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "../common/parallel.hpp"
#include "../common/rng.hpp"
#include "oob_sums.hpp"

namespace pyinterp {
namespace {


// Sums the per-node scores of one tree by feature.
void collect(std::vector<std::pair<int32_t, double>>& node_scores, TreeScores& out) {
  std::stable_sort(node_scores.begin(), node_scores.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out.scores.clear();
  for (const auto& [feature, score] : node_scores) {
    if (!out.scores.empty() && out.scores.back().first == feature) {
      out.scores.back().second += score;
    } else {
      out.scores.emplace_back(feature, score);
    }
  }
  out.used = true;
}


template <class Trees>
void check_training_rows(const Trees& forest, const MatrixView& X) {
  if (X.n_cols != forest.n_features) throw std::invalid_argument("X has a different number of features than the forest");
  if (X.n_rows != forest.n_samples)
    throw std::invalid_argument("out-of-bag importances need the training rows: X has a different number of rows");
}

double oob_impurity(Criterion c, const NodeSums& s, int64_t node, int32_t nv) {
  return impurity_of_sums(c, s.w[node], s.wy.data() + node * nv, s.wyy[node], nv);
}

template <class Nodes>
double mixed_impurity(Criterion c, const Nodes& tree, const NodeSums& s, int64_t node, std::vector<double>& values) {
  const int32_t nv = tree.n_values;
  values.resize(nv);
  return mixed_impurity(c, tree.values(node, values.data()), s.w[node], s.wy.data() + node * nv, s.wyy[node], nv);
}

template <class Nodes>
void tree_oob_scores(const Nodes tree, const NodeSums& s, OobMeasure measure, Criterion c,
                     std::vector<std::pair<int32_t, double>>& node_scores, std::vector<double>& values) {
  const int32_t nv = tree.n_values;
  const double oob_total = s.w[0];
  const double inbag_total = tree.weighted(0);
  node_scores.clear();
  for (int64_t t = 0; t < tree.count(); ++t) {
    if (!tree.inner(t)) continue;
    const int64_t l = tree.left(t), r = tree.right(t);
    double score = 0.0;
    switch (measure) {
      case OobMeasure::mdi_oob: {
        // Thesis eq. (8.20) summed by node: sum over the OOB rows of each child of
        // <mu(child) - mu(t), y_i>.
        for (const int64_t c : {l, r}) {
          const double* wy = s.wy.data() + c * nv;
          for (int32_t v = 0; v < nv; ++v) score += (tree.value(c, v) - tree.value(t, v)) * wy[v];
        }
        score /= oob_total;
        break;
      }
      case OobMeasure::naive_oob:
        if (s.w[l] <= 0.0 || s.w[r] <= 0.0) continue;  // no OOB row on one side: no estimate
        score = (s.w[t] * oob_impurity(c, s, t, nv) - s.w[l] * oob_impurity(c, s, l, nv) -
                 s.w[r] * oob_impurity(c, s, r, nv)) /
                oob_total;
        break;
      case OobMeasure::ufi:
        if (s.w[l] <= 0.0 || s.w[r] <= 0.0) continue;
        score = (tree.weighted(t) * mixed_impurity(c, tree, s, t, values) -
                 tree.weighted(l) * mixed_impurity(c, tree, s, l, values) -
                 tree.weighted(r) * mixed_impurity(c, tree, s, r, values)) /
                inbag_total;
        break;
    }
    node_scores.emplace_back(tree.feature(t), score);
  }
}

struct OobWorker {
  NodeSums sums;
  std::vector<std::pair<int32_t, double>> node_scores;
  std::vector<double> values;   // one node's values (mixed impurity)
  std::vector<int32_t> parent;  // a node reader's buffer
};

// oob_leaves: the fit's recorded leaves (n_trees x n_samples), or null.
template <class Trees>
Importance oob_importance_of(const Trees& forest, const MatrixView& X, const Targets& targets, OobMeasure measure,
                             int n_threads, const int32_t* oob_leaves = nullptr) {
  check_training_rows(forest, X);
  const int64_t n_trees = tree_count(forest);
  std::vector<TreeScores> per_tree(n_trees);
  parallel_for(
      n_trees, n_threads, [](int) { return OobWorker{}; },
      [&](int64_t t, int, OobWorker& worker) {
        const auto tree = nodes(forest, t, worker.parent);
        oob_node_sums(tree, forest.inbag.data() + t * forest.n_samples, X, targets, worker.sums,
                      oob_leaves ? oob_leaves + t * forest.n_samples : nullptr);
        if (worker.sums.n_rows == 0) return;
        tree_oob_scores(tree, worker.sums, measure, forest.criterion, worker.node_scores, worker.values);
        collect(worker.node_scores, per_tree[t]);
      });
  return reduce_tree_scores(per_tree, forest.n_features);
}

// Loss of one row at a leaf: squared error, or 0/1 misclassification (argmax, first on ties).
double leaf_loss(const Tree& tree, int32_t leaf, const Targets& targets, int64_t i) {
  const int32_t nv = tree.n_values;
  const double* v = tree.value.data() + static_cast<int64_t>(leaf) * nv;
  if (targets.classes) return (std::max_element(v, v + nv) - v) == targets.classes[i] ? 0.0 : 1.0;
  const double d = targets.y[i] - v[0];
  return d * d;
}

struct PermutationWorker {
  std::vector<int64_t> rows, shuffled;
  std::vector<double> row_loss;                  // weight x loss of each scored row, unpermuted
  std::vector<std::pair<int32_t, int64_t>> hits;  // (feature, row position): the row's path splits on it
  std::vector<uint8_t> hit;                      // rows of the feature being permuted
  std::vector<std::pair<int32_t, double>> node_scores;
};

}  // namespace

Importance reduce_tree_scores(const std::vector<TreeScores>& trees, int64_t n_features) {
  Importance imp;
  imp.mean.assign(n_features, 0.0);
  imp.std_error.assign(n_features, 0.0);
  for (const TreeScores& t : trees) {
    if (!t.used) continue;
    ++imp.n_trees;
    for (const auto& [f, s] : t.scores) imp.mean[f] += s;
  }
  if (imp.n_trees == 0) return imp;
  const double count = static_cast<double>(imp.n_trees);
  for (double& m : imp.mean) m /= count;
  // Two-pass variance: trees where a feature is absent each contribute mean^2.
  std::vector<double> sq(n_features, 0.0);
  std::vector<int64_t> present(n_features, 0);
  for (const TreeScores& t : trees) {
    if (!t.used) continue;
    for (const auto& [f, s] : t.scores) {
      sq[f] += (s - imp.mean[f]) * (s - imp.mean[f]);
      ++present[f];
    }
  }
  if (imp.n_trees < 2) return imp;
  for (int64_t f = 0; f < n_features; ++f) {
    const double ss = sq[f] + static_cast<double>(imp.n_trees - present[f]) * imp.mean[f] * imp.mean[f];
    imp.std_error[f] = std::sqrt(ss / (count - 1.0)) / std::sqrt(count);
  }
  return imp;
}

Importance oob_importance(const Forest& forest, const MatrixView& X, const Targets& targets, OobMeasure measure,
                          int n_threads, bool recorded) {
  if (recorded && forest.oob_leaves.empty()) throw std::invalid_argument("the forest has no recorded out-of-bag leaves");
  return oob_importance_of(forest, X, targets, measure, n_threads, recorded ? forest.oob_leaves.data() : nullptr);
}

Importance oob_importance(const SklearnForestNodes& forest, const MatrixView& X, const Targets& targets,
                          OobMeasure measure, int n_threads) {
  return oob_importance_of(forest, X, targets, measure, n_threads);
}

Importance permutation_importance(const Forest& forest, const MatrixView& X, const Targets& targets, int n_repeats,
                                  uint64_t seed, int n_threads, bool held_out) {
  const int64_t n_trees = static_cast<int64_t>(forest.trees.size());
  return reduce_tree_scores(
      permutation_tree_scores(forest, X, targets, n_repeats, seed, 0, n_trees, n_threads, held_out),
      forest.n_features);
}

std::vector<TreeScores> permutation_tree_scores(const Forest& forest, const MatrixView& X, const Targets& targets,
                                                int n_repeats, uint64_t seed, int64_t first_tree, int64_t n_trees,
                                                int n_threads, bool held_out, int64_t stream_offset) {
  if (held_out) {
    if (X.n_cols != forest.n_features)
      throw std::invalid_argument("X has a different number of features than the forest");
  } else {
    check_training_rows(forest, X);
  }
  if (n_repeats < 1) throw std::invalid_argument("n_repeats must be at least 1");
  if (stream_offset < 0) throw std::invalid_argument("stream_offset must be non-negative");
  if (first_tree < 0 || n_trees < 0 || first_tree + n_trees > static_cast<int64_t>(forest.trees.size()))
    throw std::invalid_argument("the trees to score are not all in the forest");
  std::vector<TreeScores> per_tree(n_trees);
  parallel_for(
      n_trees, n_threads, [](int) { return PermutationWorker{}; },
      [&](int64_t chunk_t, int, PermutationWorker& worker) {
        const int64_t t = first_tree + chunk_t;
        const Tree& tree = forest.trees[t];
        const uint32_t* counts = held_out ? nullptr : forest.inbag.data() + t * forest.n_samples;
        auto& rows = worker.rows;
        auto& row_loss = worker.row_loss;
        auto& hits = worker.hits;
        rows.clear();
        row_loss.clear();
        hits.clear();
        double total_w = 0.0, base = 0.0;
        for (int64_t i = 0; i < X.n_rows; ++i) {
          if ((counts && counts[i] != 0) || targets.weight(i) <= 0.0) continue;
          const int64_t a = static_cast<int64_t>(rows.size());
          rows.push_back(i);
          total_w += targets.weight(i);
          int32_t node = 0;
          for (; !tree.is_leaf(node); node = tree.child_of(node, X.at(i, tree.feature[node])))
            hits.emplace_back(tree.feature[node], a);
          row_loss.push_back(targets.weight(i) * leaf_loss(tree, node, targets, i));
          base += row_loss.back();
        }
        if (rows.empty()) return;
        base /= total_w;
        // Only features the tree splits on can change its predictions, in increasing order so the
        // tree's own stream is consumed identically whatever thread runs it. Permuting feature k
        // moves only the rows whose path splits on k: the others keep their leaf and loss, summed
        // in row order all the same, so skipping their walk changes no result.
        std::vector<int32_t> features;
        for (int64_t node = 0; node < tree.node_count(); ++node)
          if (!tree.is_leaf(node)) features.push_back(tree.feature[node]);
        std::sort(features.begin(), features.end());
        features.erase(std::unique(features.begin(), features.end()), features.end());
        std::sort(hits.begin(), hits.end());
        hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
        Rng rng(seed, static_cast<uint64_t>(stream_offset + t));
        worker.node_scores.clear();
        const int64_t m = static_cast<int64_t>(rows.size());
        worker.hit.assign(m, 0);
        size_t first = 0;
        for (const int32_t k : features) {
          while (first < hits.size() && hits[first].first < k) ++first;
          size_t last = first;
          for (; last < hits.size() && hits[last].first == k; ++last) worker.hit[hits[last].second] = 1;
          double increase = 0.0;
          for (int rep = 0; rep < n_repeats; ++rep) {
            checkpoint();  // many repeats of a deep tree take long
            worker.shuffled = rows;
            for (int64_t a = m - 1; a > 0; --a) std::swap(worker.shuffled[a], worker.shuffled[rng.below(a + 1)]);
            double loss = 0.0;
            for (int64_t a = 0; a < m; ++a) {
              if (!worker.hit[a]) {
                loss += row_loss[a];
                continue;
              }
              const int64_t i = rows[a], donor = worker.shuffled[a];
              const int32_t leaf = tree.leaf_of([&](int32_t j) { return X.at(j == k ? donor : i, j); });
              loss += targets.weight(i) * leaf_loss(tree, leaf, targets, i);
            }
            increase += loss / total_w - base;
          }
          for (size_t h = first; h < last; ++h) worker.hit[hits[h].second] = 0;
          worker.node_scores.emplace_back(k, increase / n_repeats);
        }
        collect(worker.node_scores, per_tree[chunk_t]);
      },
      /*report_progress=*/true);
  return per_tree;
}

std::vector<double> mdi(const Forest& forest, bool normalize) {
  const int64_t p = forest.n_features;
  std::vector<double> mean(p, 0.0), tree_sums(p);
  int64_t n_used = 0;
  for (const Tree& tree : forest.trees) {
    std::fill(tree_sums.begin(), tree_sums.end(), 0.0);
    bool split = false;
    for (int64_t t = 0; t < tree.node_count(); ++t) {
      if (tree.is_leaf(t)) continue;
      tree_sums[tree.feature[t]] += tree.impurity_decrease[t];
      split = true;
    }
    if (normalize) {
      if (!split) continue;
      double total = 0.0;
      for (const double v : tree_sums) total += v;
      if (total > 0.0)
        for (double& v : tree_sums) v /= total;
    }
    for (int64_t k = 0; k < p; ++k) mean[k] += tree_sums[k];
    ++n_used;
  }
  if (n_used == 0) return mean;
  for (double& v : mean) v /= static_cast<double>(n_used);
  if (normalize) {
    double total = 0.0;
    for (const double v : mean) total += v;
    if (total > 0.0)
      for (double& v : mean) v /= total;
  }
  return mean;
}

void contributions(const Forest& forest, const MatrixView& X, double* out, double* bias, int n_threads) {
  if (X.n_cols != forest.n_features) throw std::invalid_argument("X has a different number of features than the forest");
  const int32_t nv = forest.n_values();
  const int64_t p = forest.n_features;
  const double scale = 1.0 / static_cast<double>(forest.trees.size());
  std::fill(bias, bias + nv, 0.0);
  for (const Tree& tree : forest.trees)
    for (int32_t v = 0; v < nv; ++v) bias[v] += tree.value[v];
  for (int32_t v = 0; v < nv; ++v) bias[v] *= scale;
  // Each block zeroes its own rows: the first touch of a large output is slow, and here it is
  // shared by the threads and stops at Ctrl-C (one fill before the call took 2.6 s for 288 MB).
  for_row_blocks(X.n_rows, n_threads, [&](int64_t begin, int64_t end) {
    std::fill(out + begin * p * nv, out + end * p * nv, 0.0);
    for (const Tree& tree : forest.trees) {
      for (int64_t i = begin; i < end; ++i) {
        int32_t node = 0;
        while (!tree.is_leaf(node)) {
          const int32_t k = tree.feature[node];
          const int32_t child = tree.child_of(node, X.at(i, k));
          const double* vc = tree.value.data() + static_cast<int64_t>(child) * nv;
          const double* vn = tree.value.data() + static_cast<int64_t>(node) * nv;
          double* o = out + (i * p + k) * nv;
          for (int32_t v = 0; v < nv; ++v) o[v] += (vc[v] - vn[v]) * scale;
          node = child;
        }
      }
    }
  });
}

}  // namespace pyinterp
