#include "rit.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <map>
#include <stdexcept>

#include "../common/parallel.hpp"
#include "../common/rng.hpp"

namespace pyinterp {
namespace {

using Set = std::vector<int32_t>;

class Sampler {
 public:
  explicit Sampler(const CsrView<int32_t>& sets) : sets_(sets), cumulative_(sets.n) {
    double total = 0.0;
    for (int64_t i = 0; i < sets.n; ++i) cumulative_[i] = total += sets.weight(i);
    if (!(total > 0.0)) throw std::invalid_argument("RIT needs at least one set with positive weight");
  }

  // A set drawn with probability proportional to its weight (zero-weight sets never).
  std::pair<const int32_t*, const int32_t*> draw(Rng& rng) const {
    const double u = rng.uniform() * cumulative_.back();
    int64_t i = std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
    i = std::min(i, sets_.n - 1);
    return {sets_.items + sets_.indptr[i], sets_.items + sets_.indptr[i + 1]};
  }

 private:
  const CsrView<int32_t>& sets_;
  std::vector<double> cumulative_;
};

void intersect(const Set& node, std::pair<const int32_t*, const int32_t*> drawn, Set& out) {
  out.clear();
  std::set_intersection(node.begin(), node.end(), drawn.first, drawn.second, std::back_inserter(out));
}

// Depth-first over one RIT tree, with an explicit stack (any depth), drawing in the order of the
// recursive definition: a node is reported, its child count drawn, then each child is drawn and
// grown before the next. Reported sets are appended to `found`; every node drawn takes one unit of
// the shared budget.
void grow(const Sampler& sampler, const RitOptions& o, Rng& rng, Set root, std::vector<Set>& found,
          std::atomic<int64_t>& nodes) {
  struct Frame {
    Set set;
    int32_t level;
    int64_t children_left;
  };
  std::vector<Frame> stack;
  // Far above any budget, so the count stays an exact integer.
  const double whole = std::min(std::floor(o.n_children), 4.0e18);
  // Every node drawn counts, kept or dropped for its size: the budget bounds work as well as output.
  auto take = [&] {
    if (++nodes > o.max_nodes)
      throw TooManyIntersections("RIT drew more than max_nodes = " + std::to_string(o.max_nodes) +
                                 " nodes; lower depth, n_children or n_trees, or raise max_nodes");
  };
  auto enter = [&](Set&& node, int32_t level) {
    const bool leaf = level == o.depth || static_cast<int32_t>(node.size()) == o.min_size;
    if (leaf || o.all_nodes) found.push_back(node);
    if (leaf) return;
    const int64_t n = static_cast<int64_t>(whole) + (rng.uniform() < o.n_children - whole ? 1 : 0);
    stack.push_back({std::move(node), level, n});
  };
  take();
  enter(std::move(root), 1);
  Set child;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.children_left == 0) {
      stack.pop_back();
      continue;
    }
    --top.children_left;
    take();
    intersect(top.set, sampler.draw(rng), child);
    const int32_t level = top.level + 1;  // before enter, whose push may move the frames
    if (static_cast<int32_t>(child.size()) >= o.min_size) enter(std::move(child), level);
  }
}

}  // namespace

RitResult random_intersection_trees(const CsrView<int32_t>& sets, const RitOptions& o,
                                    int n_threads) {
  if (o.depth < 1 || o.min_size < 1 || !(o.n_children >= 1.0) || o.n_trees < 0 || o.root_sets < 1 ||
      o.root_sets > 2)
    throw std::invalid_argument("RIT needs depth >= 1, min_size >= 1, n_children >= 1, n_trees >= 0, root_sets 1 or 2");
  RitResult out;
  if (o.n_trees == 0 || sets.n == 0) return out;
  if (o.max_nodes < 1) throw std::invalid_argument("RIT needs max_nodes >= 1");
  if (o.n_trees > o.max_nodes)  // each tree's root is a node
    throw TooManyIntersections("RIT with n_trees = " + std::to_string(o.n_trees) + " above max_nodes = " +
                               std::to_string(o.max_nodes) + "; lower n_trees or raise max_nodes");
  const Sampler sampler(sets);
  std::vector<std::vector<Set>> per_tree(o.n_trees);
  std::atomic<int64_t> nodes{0};
  parallel_for(o.n_trees, n_threads, no_state, [&](int64_t t, int, NoState&) {
    Rng rng(o.seed, static_cast<uint64_t>(t));
    const auto a = sampler.draw(rng);
    Set root(a.first, a.second);
    if (o.root_sets == 2) {
      const Set first = std::move(root);
      intersect(first, sampler.draw(rng), root);
    }
    if (static_cast<int32_t>(root.size()) >= o.min_size) grow(sampler, o, rng, std::move(root), per_tree[t], nodes);
    // A tree reports a set once however many of its leaves reach it.
    std::sort(per_tree[t].begin(), per_tree[t].end());
    per_tree[t].erase(std::unique(per_tree[t].begin(), per_tree[t].end()), per_tree[t].end());
  });
  std::map<Set, int64_t> counts;
  for (const auto& tree : per_tree)
    for (const Set& s : tree) ++counts[s];
  for (const auto& [s, n] : counts) {
    out.codes.insert(out.codes.end(), s.begin(), s.end());
    out.indptr.push_back(static_cast<int64_t>(out.codes.size()));
    out.found.push_back(n);
  }
  return out;
}

}  // namespace pyinterp
