#include "rit.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "../common/parallel.hpp"
#include "../common/rng.hpp"

namespace pyinterp {
namespace {

using Set = std::vector<int32_t>;
// Nodes share their set with an ancestor whose set they equal, so a tree of one huge set holds it
// once (10^6 items in one set: 110 s and gigabytes of copies before sharing).
using Shared = std::shared_ptr<const Set>;

struct Drawn {
  int64_t index;
  const int32_t* begin;
  const int32_t* end;
};

// The sets as RIT reads them: drawn with probability proportional to their weight, and known by
// the first set of the same items, so a draw of a set already intersected (or of its copy) costs
// nothing and every tree rooted at one set shares one copy of it.
class Sampler {
 public:
  explicit Sampler(const CsrView<int32_t>& sets) : sets_(sets), cumulative_(sets.n), same_(sets.n), roots_(sets.n) {
    double total = 0.0;
    for (int64_t i = 0; i < sets.n; ++i) cumulative_[i] = total += sets.weight(i);
    if (!(total > 0.0)) throw std::invalid_argument("RIT needs at least one set with positive weight");
    find_copies();
  }

  // A set drawn with probability proportional to its weight (zero-weight sets never).
  Drawn draw(Rng& rng) const {
    const double u = rng.uniform() * cumulative_.back();
    int64_t i = std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
    i = std::min(i, sets_.n - 1);
    return {same_[i], sets_.items + sets_.indptr[i], sets_.items + sets_.indptr[i + 1]};
  }

  // The drawn set as a node, one copy per distinct set over all trees.
  Shared root(const Drawn& d) {
    std::lock_guard<std::mutex> lock(mutex_);
    Shared& r = roots_[d.index];
    if (!r) r = std::make_shared<const Set>(d.begin, d.end);
    return r;
  }

 private:
  void find_copies() {
    std::vector<std::pair<uint64_t, int64_t>> keys(sets_.n);
    for (int64_t i = 0; i < sets_.n; ++i) {
      uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(size(i));
      for (const int32_t* p = begin(i); p != end(i); ++p) h = (h ^ static_cast<uint32_t>(*p)) * 1099511628211ull;
      keys[i] = {h, i};
    }
    std::sort(keys.begin(), keys.end());
    std::vector<int64_t> firsts;  // the distinct sets of a run of equal hashes (almost always one)
    for (size_t a = 0; a < keys.size();) {
      firsts.clear();
      const uint64_t h = keys[a].first;
      for (; a < keys.size() && keys[a].first == h; ++a) {
        const int64_t i = keys[a].second;
        auto first = std::find_if(firsts.begin(), firsts.end(),
                                  [&](int64_t r) { return std::equal(begin(i), end(i), begin(r), end(r)); });
        same_[i] = first == firsts.end() ? i : *first;
        if (first == firsts.end()) firsts.push_back(i);
      }
    }
  }
  int64_t size(int64_t i) const { return sets_.indptr[i + 1] - sets_.indptr[i]; }
  const int32_t* begin(int64_t i) const { return sets_.items + sets_.indptr[i]; }
  const int32_t* end(int64_t i) const { return sets_.items + sets_.indptr[i + 1]; }

  const CsrView<int32_t>& sets_;
  std::vector<double> cumulative_;
  std::vector<int64_t> same_;  // the first set (by index) of set i's items
  std::vector<Shared> roots_;
  std::mutex mutex_;
};

// node intersected with drawn; node itself when nothing is removed.
Shared intersect(const Shared& node, const Drawn& drawn) {
  auto out = std::make_shared<Set>();
  std::set_intersection(node->begin(), node->end(), drawn.begin, drawn.end, std::back_inserter(*out));
  if (out->size() == node->size()) return node;
  return out;
}

// Ancestors looked at for a draw already intersected (intersecting it again changes nothing): a
// bounded look, so a deep tree's cost per node stays constant.
constexpr size_t kPathLook = 64;

// Depth-first over one RIT tree, with an explicit stack (any depth), drawing in the order of the
// recursive definition: a node is reported, its child count drawn, then each child is drawn and
// grown before the next. Reported sets are appended to `found`; every node drawn takes one unit of
// the shared budget.
void grow(const Sampler& sampler, const RitOptions& o, Rng& rng, Shared root, std::vector<int64_t> root_draws,
          std::vector<Shared>& found, std::atomic<int64_t>& nodes) {
  struct Frame {
    Shared set;
    int32_t level;
    int64_t children_left;
  };
  std::vector<Frame> stack;
  std::vector<int64_t> path = std::move(root_draws);  // the sets intersected so far, root first
  const size_t root_path = path.size();
  // Far above any budget, so the count stays an exact integer.
  const double whole = std::min(std::floor(o.n_children), 4.0e18);
  // Every node drawn counts, kept or dropped for its size: the budget bounds work as well as output.
  auto take = [&] {
    if (++nodes > o.max_nodes)
      throw TooManyIntersections("RIT drew more than max_nodes = " + std::to_string(o.max_nodes) +
                                 " nodes; lower depth, n_children or n_trees, or raise max_nodes");
  };
  auto enter = [&](Shared node, int32_t level) {
    const bool leaf = level == o.depth || static_cast<int32_t>(node->size()) == o.min_size;
    if (leaf || o.all_nodes) found.push_back(node);
    if (leaf) return false;
    const int64_t n = static_cast<int64_t>(whole) + (rng.uniform() < o.n_children - whole ? 1 : 0);
    stack.push_back({std::move(node), level, n});
    return true;
  };
  take();
  enter(std::move(root), 1);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.children_left == 0) {
      stack.pop_back();
      if (path.size() > root_path) path.pop_back();
      continue;
    }
    --top.children_left;
    take();
    const Drawn drawn = sampler.draw(rng);
    const size_t look = std::min(path.size(), kPathLook);
    const bool again = std::find(path.end() - look, path.end(), drawn.index) != path.end();
    Shared child = again ? top.set : intersect(top.set, drawn);
    const int32_t level = top.level + 1;  // before enter, whose push may move the frames
    if (static_cast<int32_t>(child->size()) >= o.min_size && enter(std::move(child), level))
      path.push_back(drawn.index);
  }
}

// Sets by their items, whichever node holds them.
struct ByItems {
  bool operator()(const Shared& a, const Shared& b) const { return a != b && *a < *b; }
};

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
  Sampler sampler(sets);
  // Each tree's sets join the counts as it ends, so copies of a set found by many trees are freed.
  std::map<Shared, int64_t, ByItems> counts;
  std::mutex counting;
  std::atomic<int64_t> nodes{0};
  parallel_for(o.n_trees, n_threads, no_state, [&](int64_t t, int, NoState&) {
    Rng rng(o.seed, static_cast<uint64_t>(t));
    const Drawn a = sampler.draw(rng);
    Shared root = sampler.root(a);
    std::vector<int64_t> draws{a.index};
    if (o.root_sets == 2) {
      const Drawn b = sampler.draw(rng);
      if (b.index != a.index) root = intersect(root, b);
      draws.push_back(b.index);
    }
    std::vector<Shared> found;
    if (static_cast<int32_t>(root->size()) >= o.min_size) grow(sampler, o, rng, std::move(root), draws, found, nodes);
    // A tree reports a set once however many of its leaves reach it: shared sets first, by address.
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    std::sort(found.begin(), found.end(), ByItems());
    const auto same = [](const Shared& a, const Shared& b) { return a == b || *a == *b; };
    found.erase(std::unique(found.begin(), found.end(), same), found.end());
    std::lock_guard<std::mutex> lock(counting);
    for (Shared& s : found) ++counts[std::move(s)];
  });
  for (const auto& [s, n] : counts) {
    out.codes.insert(out.codes.end(), s->begin(), s->end());
    out.indptr.push_back(static_cast<int64_t>(out.codes.size()));
    out.found.push_back(n);
  }
  return out;
}

}  // namespace pyinterp
