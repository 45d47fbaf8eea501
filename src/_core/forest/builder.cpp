#include "builder.hpp"

#include "prune.hpp"
#include "split_rules.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace pyinterp {

TreeBuilder::TreeBuilder(const TrainingSet& data, const ForestParams& params, int slot)
    : data_(data), params_(params), slot_(slot) {
  if (data.blocks) {
    sampler_ = std::make_unique<FeatureSampler>(data.blocks->n_cols(), data.feature_weights, params.always_features);
    right_rows_.resize(data.blocks->n_rows());
  } else {
    search_ = make_split_search(data, params);
    right_rows_.resize(data.codes->n_rows());
  }
}

TreeBuilder::Partition TreeBuilder::partition_here(const NodeRange& e, const Split& split) {
  // Stable, so every node keeps its rows in increasing order: gathers from a column then move
  // forward through memory, sharing cache lines.
  const ColumnCodes& codes = *data_.codes;
  const int64_t f = split.feature;
  const bool categorical = data_.categorical(f);
  const uint32_t missing = codes.missing_code(f);
  SplitWatch watch(split, missing);
  Partition part{};
  part.mid = codes.visit_column(f, [&](auto col) {
    return stable_partition(samples_.data(), e.start, e.end, right_rows_.data(), [&](uint32_t row) -> int64_t {
      const uint32_t c = col[row];
      watch.see(row, c);
      return row_goes_left(split, c, missing, categorical);
    });
  });
  part.missing_go_to_left = missing_side(watch.n_missing, split.missing_left, part.mid - e.start, e.end - part.mid);
  if (categorical) {
    part.threshold = std::numeric_limits<double>::quiet_NaN();
    left_categories(split, data_.category_of_code[f], part.categories);
  } else {
    part.threshold = threshold_between(watch, [&](int64_t row) { return data_.x(row, f); });
  }
  part.oob_mid = e.oob_end;
  if (oob_leaf_)
    part.oob_mid = codes.visit_column(f, [&](auto col) {
      return stable_partition(oob_rows_.data(), e.oob_start, e.oob_end, right_rows_.data(), [&](uint32_t row) {
        return oob_goes_left(split, col[row], missing, categorical, part.threshold, part.missing_go_to_left,
                             [&] { return data_.x(row, f); });
      });
    });
  return part;
}

Tree TreeBuilder::build(const std::vector<double>& w, int64_t tree_index, const uint32_t* counts, int32_t* oob_leaf) {
  w_ = w.data();
  const int64_t n = static_cast<int64_t>(right_rows_.size());
  samples_.clear();
  for (int64_t i = 0; i < n; ++i)
    if (w[i] > 0.0) samples_.push_back(static_cast<uint32_t>(i));
  oob_leaf_ = oob_leaf;
  oob_rows_.clear();
  if (oob_leaf) {
    std::fill(oob_leaf, oob_leaf + n, -1);
    for (int64_t i = 0; i < n; ++i)
      if (counts[i] == 0) oob_rows_.push_back(static_cast<uint32_t>(i));
  }
  if (samples_.empty())
    throw std::invalid_argument("a tree drew no row with positive weight; raise max_samples or the sample weights");
  double total_weight = 0.0;
  for (uint32_t i : samples_) total_weight += w[i];
  min_weight_leaf_ = params_.min_weight_fraction_leaf * total_weight;
  if (data_.blocks) {
    data_.blocks->begin_tree(slot_, w, min_weight_leaf_, oob_rows_);
    log_ = Moves{};
    log_row_at_.assign(1, 0);
    log_oob_at_.assign(1, 0);
    log_owner_.clear();
    delivered_.assign(data_.blocks->n_blocks(), 0);
  } else {
    search_->begin_tree(w_, min_weight_leaf_);
  }

  // Grown in the builder's own tree, whose vectors keep their capacity from tree to tree, then
  // copied out at its size: one copy instead of each field's chain of reallocations.
  Tree& tree = grown_;
  Tree::for_each_field(tree, [](const char*, auto& field, int64_t) { field.clear(); });
  tree.left_categories.clear();
  tree.n_values = data_.targets.n_values();
  value_.resize(tree.n_values);
  child_values_.clear();
  NodeRange root_range{0, static_cast<int64_t>(samples_.size()), 0, -1, false, root_stream(tree_index)};
  root_range.oob_end = static_cast<int64_t>(oob_rows_.size());
  if (data_.blocks) {
    if (params_.max_leaf_nodes > 0) {
      std::vector<Grown> root;
      grow_together(tree, {root_range}, /*level_wise=*/false, root);
      grow_best_first(tree, root[0]);  // numbered in the order nodes are made, as in memory
      return tree;
    }
    grow_level_wise(tree, root_range);
    // Numbered as depth-first growth numbers them (preorder), and the out-of-bag leaves with them.
    std::vector<int32_t> index;
    tree = copy_in_preorder(tree, {}, &index);
    if (oob_leaf)
      for (int64_t i = 0; i < n; ++i)
        if (oob_leaf[i] >= 0) oob_leaf[i] = index[oob_leaf[i]];
    return tree;
  }
  const Grown root = grow_node(tree, root_range);
  if (params_.max_leaf_nodes > 0) {
    grow_best_first(tree, root);
  } else {
    grow_depth_first(tree, root);
  }
  return tree;
}

TreeBuilder::Opened TreeBuilder::open_node(Tree& tree, const NodeRange& e) {
  checkpoint();  // a tree on many rows takes seconds: a user's interrupt stops it between nodes
  const int64_t m = e.end - e.start;
  const int64_t n_values = static_cast<int64_t>(value_.size());
  NodeStats stats = e.stats;  // a child's, as its parent's split found them (the same rows, the same order)
  if (e.values_at >= 0) {
    std::copy_n(child_values_.begin() + e.values_at, n_values, value_.begin());
    // Depth-first, children are grown in the reverse order of their values': these are on top.
    if (e.values_at + n_values == static_cast<int64_t>(child_values_.size())) child_values_.resize(e.values_at);
  } else {
    stats = node_stats(e.start, e.end, value_.data());
  }
  if (e.parent < 0) root_weight_ = stats.weight;
  if (tree.node_count() == std::numeric_limits<int32_t>::max()) throw std::length_error("tree exceeds 2^31 - 1 nodes");
  const int32_t node = tree.add_node();
  tree.parent[node] = e.parent;
  tree.depth[node] = e.depth;
  tree.n_node_samples[node] = static_cast<int32_t>(m);
  tree.weighted_n_node_samples[node] = stats.weight;
  tree.impurity[node] = stats.impurity;
  double* stored = &*(tree.value.end() - tree.n_values);
  std::copy(value_.begin(), value_.end(), stored);
  if (!params_.monotonic_cst.empty()) {
    // The stored value respects the node's bounds (its rows' own statistics do not change).
    stored[0] = std::min(std::max(stored[0], e.lower), e.upper);
    if (tree.n_values == 2) stored[1] = 1.0 - stored[0];
  }
  if (e.parent >= 0) (e.is_left ? tree.left : tree.right)[e.parent] = node;
  Opened o{{node, e.stream, e.start, e.end, e.end, e.depth, 0.0, false, e.lower, e.upper, 0.0, {}, {}, -1}, stats,
           false};
  o.out.oob_start = e.oob_start;
  o.out.oob_mid = o.out.oob_end = e.oob_end;
  o.may_split = !((params_.max_depth >= 0 && e.depth >= params_.max_depth) || m < params_.min_samples_split ||
                  stats.weight < params_.min_weight_split || m < 2 * params_.min_samples_leaf ||
                  stats.weight < 2 * min_weight_leaf_ || stats.impurity <= kEpsilon);
  return o;
}

TreeBuilder::Grown TreeBuilder::leaf(const Opened& o) {
  if (oob_leaf_) settle_oob(o.out.node, o.out.oob_start, o.out.oob_end);
  return o.out;
}

TreeBuilder::Grown TreeBuilder::close_node(Tree& tree, const NodeRange& e, const Opened& o, const Split& split,
                                           const Partition& part) {
  const int64_t n_values = static_cast<int64_t>(value_.size());
  const int32_t node = o.out.node;
  const int64_t mid = part.mid;
  const int64_t at = static_cast<int64_t>(child_values_.size());
  child_values_.resize(at + 2 * n_values);
  const NodeStats l = node_stats(e.start, mid, child_values_.data() + at + n_values);
  const NodeStats r = node_stats(mid, e.end, child_values_.data() + at);
  const double left_value = child_values_[at + n_values], right_value = child_values_[at];
  Grown out = o.out;
  out.middle = params_.criterion == Criterion::absolute_error ? (left_value + right_value) / 2
                                                               : left_value / 2 + right_value / 2;
  const double decrease = impurity_decrease(o.stats.weight * o.stats.impurity, l.weight * l.impurity,
                                            r.weight * r.impurity, root_weight_);
  if (decrease + kEpsilon < params_.min_impurity_decrease) {
    child_values_.resize(at);
    return leaf(o);
  }
  tree.feature[node] = static_cast<int32_t>(split.feature);
  tree.threshold[node] = part.threshold;
  if (std::isnan(part.threshold)) tree.category_split[node] = tree.add_category_set(part.categories);
  tree.missing_go_to_left[node] = part.missing_go_to_left;
  tree.impurity_decrease[node] = decrease;
  out.oob_mid = part.oob_mid;
  out.mid = mid;
  out.decrease = decrease;
  out.split = true;
  out.left = l;
  out.right = r;
  out.values_at = at;
  return out;
}

TreeBuilder::Grown TreeBuilder::grow_node(Tree& tree, const NodeRange& e) {
  const Opened o = open_node(tree, e);
  if (!o.may_split) return leaf(o);
  // Depth-first, the search may skip candidates constant in an ancestor (best-first order is not
  // preorder: depth -1).
  const int32_t depth = params_.max_leaf_nodes > 0 ? -1 : e.depth;
  const Split split =
      search_->find({samples_.data() + e.start, e.end - e.start, value_.data(), e.stream, e.lower, e.upper,
                     o.out.node, depth});
  if (split.feature < 0) return leaf(o);
  return close_node(tree, e, o, split, partition_here(e, split));
}

void TreeBuilder::grow_depth_first(Tree& tree, const Grown& root) {
  // Left children come off the stack first: nodes are numbered in preorder.
  std::vector<NodeRange> stack;
  auto push_children = [&](const Grown& g) {
    if (!g.split) return;
    stack.push_back(child_range(tree, g, false));
    stack.push_back(child_range(tree, g, true));
  };
  push_children(root);
  while (!stack.empty()) {
    const NodeRange e = stack.back();
    stack.pop_back();
    push_children(grow_node(tree, e));
  }
}

void TreeBuilder::grow_best_first(Tree& tree, const Grown& root) {
  // scikit-learn's best-first growth: each node's split is found when the node is made; the
  // frontier node with the largest decrease is split next, as long as max_leaf_nodes allows;
  // the rest stay leaves. Nodes are numbered in the order they are made. Over column blocks a
  // split's two children are made together: the same nodes in the same order.
  auto smaller = [](const Grown& a, const Grown& b) { return a.decrease < b.decrease; };
  std::vector<Grown> frontier{root}, children;
  int64_t splits_left = params_.max_leaf_nodes - 1;
  while (!frontier.empty()) {
    std::pop_heap(frontier.begin(), frontier.end(), smaller);
    const Grown g = frontier.back();
    frontier.pop_back();
    if (!g.split) continue;
    if (splits_left <= 0) {
      make_leaf(tree, g);
      continue;
    }
    --splits_left;
    if (data_.blocks) {  // the two children searched and parted together (one round of asks)
      grow_together(tree, {child_range(tree, g, true), child_range(tree, g, false)}, /*level_wise=*/false, children);
    } else {
      const Grown left = grow_node(tree, child_range(tree, g, true));
      children = {left, grow_node(tree, child_range(tree, g, false))};
    }
    for (const Grown& child : children) {
      frontier.push_back(child);
      std::push_heap(frontier.begin(), frontier.end(), smaller);
    }
  }
}

TreeBuilder::NodeRange TreeBuilder::child_range(const Tree& tree, const Grown& g, bool left) const {
  NodeRange r{left ? g.start : g.mid, left ? g.mid : g.end, g.depth + 1, g.node, left, child_stream(g.stream, left),
              g.lower, g.upper, left ? g.left : g.right, g.values_at + (left ? static_cast<int64_t>(value_.size()) : 0)};
  r.oob_start = left ? g.oob_start : g.oob_mid;
  r.oob_end = left ? g.oob_mid : g.oob_end;
  const int8_t cst = params_.monotonic_cst.empty() ? 0 : params_.monotonic_cst[tree.feature[g.node]];
  // Increasing: the left child's values stay below the middle, the right child's above it.
  if (cst != 0) (left == (cst > 0) ? r.upper : r.lower) = g.middle;
  return r;
}

void TreeBuilder::make_leaf(Tree& tree, const Grown& g) {
  tree.feature[g.node] = -1;
  tree.threshold[g.node] = 0.0;
  tree.category_split[g.node] = -1;  // its set stays in the tree's table, unused
  tree.missing_go_to_left[g.node] = 0;
  tree.impurity_decrease[g.node] = 0.0;
  if (oob_leaf_) settle_oob(g.node, g.oob_start, g.oob_end);
}

void TreeBuilder::grow_together(Tree& tree, const std::vector<NodeRange>& ranges, bool level_wise,
                                std::vector<Grown>& grown) {
  level_.clear();
  level_values_.clear();
  grown.assign(ranges.size(), Grown{});
  std::vector<size_t> of;  // the range of each node of the level
  for (size_t r = 0; r < ranges.size(); ++r) {
    const NodeRange& e = ranges[r];
    const Opened o = open_node(tree, e);
    if (!o.may_split) {
      grown[r] = leaf(o);
      continue;
    }
    of.push_back(r);
    level_.push_back({e, o, CandidatePick{params_.max_features, std::numeric_limits<double>::infinity(),
                                          e.end - e.start == 2}});
    level_values_.insert(level_values_.end(), value_.begin(), value_.end());
  }
  // Level by level every node of the level has taken its values; best-first, the frontier's
  // nodes keep theirs until they are made.
  if (level_wise) child_values_.clear();
  search_level(level_);
  partition_level(level_, parts_);
  for (size_t k = 0; k < level_.size(); ++k) {
    const LevelNode& node = level_[k];
    grown[of[k]] = node.pick.best.feature < 0
                       ? leaf(node.opened)
                       : close_node(tree, node.range, node.opened, node.pick.best, parts_[k]);
  }
}

void TreeBuilder::grow_level_wise(Tree& tree, const NodeRange& root) {
  std::vector<NodeRange> ranges{root}, next;
  std::vector<Grown> grown;
  while (!ranges.empty()) {
    grow_together(tree, ranges, /*level_wise=*/true, grown);
    next.clear();
    for (const Grown& g : grown) {
      if (!g.split) continue;
      next.push_back(child_range(tree, g, true));
      next.push_back(child_range(tree, g, false));
    }
    ranges.swap(next);
  }
}

void TreeBuilder::search_level(std::vector<LevelNode>& level) {
  ColumnBlocks& blocks = *data_.blocks;
  const int64_t n_values = static_cast<int64_t>(value_.size());
  const int64_t n_blocks = blocks.n_blocks();
  for (bool first_round = true;; first_round = false) {
    search_asks_.assign(n_blocks, SearchAsk{});
    asked_.clear();
    answer_at_.clear();
    asked_drawn_.clear();
    std::vector<int64_t> last_node(n_blocks, -1);  // the last node added to each block's ask
    for (size_t k = 0; k < level.size(); ++k) {
      LevelNode& node = level[k];
      if (node.done) continue;
      node.first = static_cast<int64_t>(asked_.size());
      if (first_round)
        for (const int64_t f : params_.always_features) {
          asked_.push_back(f);
          asked_drawn_.push_back(0);
        }
      // Draws continue where the last round's ended: the node's stream drawn again from its start.
      // After a round that found too few varying candidates, as many more as that round's share
      // of varying ones suggests.
      const int64_t varying = std::max<int64_t>(node.pick.n_varying, 1);
      const int64_t short_of = params_.max_features - node.pick.n_varying;
      const int64_t need = first_round ? params_.max_features
                                       : std::min(short_of * std::max<int64_t>(node.drawn / varying, 1),
                                                  blocks.n_cols());
      Rng rng(params_.seed, node.range.stream);
      const int64_t drawn_before = node.drawn;
      int64_t k_draw = 0;
      for (; k_draw < node.drawn + need; ++k_draw) {
        const int64_t f = sampler_->next(rng);
        if (f < 0) break;
        if (k_draw < node.drawn) continue;
        asked_.push_back(f);
        asked_drawn_.push_back(1);
      }
      sampler_->reset();
      const bool exhausted = k_draw < node.drawn + need;
      node.drawn = k_draw;
      node.end = static_cast<int64_t>(asked_.size());
      if (node.first == node.end) {
        node.done = true;
        continue;
      }
      if (exhausted) node.done = true;  // after this round's answers are offered
      const NodeRange& e = node.range;
      for (int64_t c = node.first; c < node.end; ++c) {
        const int64_t b = blocks.owner(asked_[c]);
        SearchAsk& ask = search_asks_[b];
        if (last_node[b] != static_cast<int64_t>(k)) {  // the block draws the node's candidates itself
          last_node[b] = static_cast<int64_t>(k);
          ask.start.push_back(e.start);
          ask.end.push_back(e.end);
          ask.values.insert(ask.values.end(), level_values_.begin() + static_cast<int64_t>(k) * n_values,
                            level_values_.begin() + static_cast<int64_t>(k + 1) * n_values);
          if (!params_.monotonic_cst.empty()) {
            ask.lower.push_back(e.lower);
            ask.upper.push_back(e.upper);
          }
          ask.stream.push_back(e.stream);
          ask.draw_from.push_back(drawn_before);
          ask.draw_to.push_back(node.drawn);
          ask.with_always.push_back(first_round);
          ask.feature_begin.push_back(ask.feature_begin.back());
        }
        answer_at_.push_back({b, ask.feature_begin.back()++, ask.n_nodes() - 1});
      }
    }
    if (asked_.empty()) return;
    deliver(search_asks_);
    blocks.search(slot_, search_asks_, search_answers_);
    bool open = false;
    for (LevelNode& node : level) {
      if (node.first == node.end) continue;
      bool over = false;
      for (int64_t c = node.first; c < node.end && !over; ++c) {
        const auto [b, at, place] = answer_at_[c];
        const SearchAnswer& answer = search_answers_[b];
        node.pick.reachable = answer.reachable[place];
        Split split = answer.splits[at];
        if (split.feature >= 0) split.feature += blocks.first(b);
        if (split.feature >= 0 && split.feature != asked_[c])
          throw std::invalid_argument("a block answered for a column it was not asked about (drawn otherwise?)");
        over = node.pick.offer(answer.varies[at] != 0, split, asked_drawn_[c] != 0);
      }
      node.first = node.end = 0;
      if (over) node.done = true;
      open = open || !node.done;
    }
    if (!open) return;
  }
}

void TreeBuilder::partition_level(std::vector<LevelNode>& level, std::vector<Partition>& parts) {
  ColumnBlocks& blocks = *data_.blocks;
  const int64_t n_blocks = blocks.n_blocks();
  partition_asks_.assign(n_blocks, PartitionAsk{});
  parts.assign(level.size(), Partition{});
  std::vector<std::pair<int64_t, int64_t>> at(level.size(), {-1, -1});
  for (size_t k = 0; k < level.size(); ++k) {
    Split split = level[k].pick.best;
    if (split.feature < 0) continue;
    const NodeRange& e = level[k].range;
    const int64_t b = blocks.owner(split.feature);
    PartitionAsk& ask = partition_asks_[b];
    at[k] = {b, ask.n_nodes()};
    ask.start.push_back(e.start);
    ask.end.push_back(e.end);
    ask.oob_start.push_back(e.oob_start);
    ask.oob_end.push_back(e.oob_end);
    split.feature -= blocks.first(b);
    ask.splits.push_back(split);
  }
  if (std::all_of(at.begin(), at.end(), [](const auto& a) { return a.first < 0; })) return;
  deliver(partition_asks_);
  blocks.partition(slot_, partition_asks_, partition_answers_);
  // Each answer's flags, node after node: where the next node's start.
  std::vector<std::pair<int64_t, int64_t>> flags_at(n_blocks, {0, 0});
  for (size_t k = 0; k < level.size(); ++k) {
    const auto [b, place] = at[k];
    if (b < 0) continue;
    const Moves& moved = partition_answers_[b].moves;
    const PartitionAnswer& answer = partition_answers_[b];
    const NodeRange& e = level[k].range;
    auto& [row_at, oob_at] = flags_at[b];
    Partition& part = parts[k];
    const uint8_t* row_left = moved.row_left.data() + row_at;
    part.mid = stable_partition(samples_.data(), e.start, e.end, right_rows_.data(),
                                [&, i = int64_t{0}](uint32_t) mutable -> int64_t { return row_left[i++]; });
    const uint8_t* oob_left = moved.oob_left.data() + oob_at;
    part.oob_mid = stable_partition(oob_rows_.data(), e.oob_start, e.oob_end, right_rows_.data(),
                                    [&, i = int64_t{0}](uint32_t) mutable -> int64_t { return oob_left[i++]; });
    // The other blocks make the same move with their next ask; block b has made it.
    log_.append(moved, place, row_at, oob_at);
    log_owner_.push_back(b);
    log_row_at_.push_back(log_row_at_.back() + (e.end - e.start));
    log_oob_at_.push_back(log_oob_at_.back() + (e.oob_end - e.oob_start));
    row_at += e.end - e.start;
    oob_at += e.oob_end - e.oob_start;
    part.missing_go_to_left = answer.missing_go_to_left[place] != 0;
    part.threshold = answer.threshold[place];
    std::copy_n(answer.categories.begin() + place * kCategoryWords, kCategoryWords, part.categories);
  }
}

template <class Ask>
void TreeBuilder::deliver(std::vector<Ask>& asks) {
  for (int64_t b = 0; b < static_cast<int64_t>(asks.size()); ++b) {
    if (asks[b].n_nodes() == 0) continue;  // nothing is sent to it
    for (int64_t k = delivered_[b]; k < log_.size(); ++k)
      if (log_owner_[k] != b) asks[b].moves.append(log_, k, log_row_at_[k], log_oob_at_[k]);
    delivered_[b] = log_.size();
  }
  // Forgets the moves every block has taken.
  const int64_t m = *std::min_element(delivered_.begin(), delivered_.end());
  if (m == 0) return;
  auto drop = [](auto& v, int64_t k) { v.erase(v.begin(), v.begin() + k); };
  drop(log_.start, m), drop(log_.end, m), drop(log_.oob_start, m), drop(log_.oob_end, m), drop(log_owner_, m);
  drop(log_.row_left, log_row_at_[m]), drop(log_.oob_left, log_oob_at_[m]);
  const int64_t rows = log_row_at_[m], oob = log_oob_at_[m];
  drop(log_row_at_, m), drop(log_oob_at_, m);
  for (int64_t& r : log_row_at_) r -= rows;
  for (int64_t& r : log_oob_at_) r -= oob;
  for (int64_t& d : delivered_) d -= m;
}

void TreeBuilder::settle_oob(int32_t node, int64_t begin, int64_t end) {
  for (int64_t k = begin; k < end; ++k) oob_leaf_[oob_rows_[k]] = node;
}

}  // namespace pyinterp
