#include "itemsets.hpp"

#include <algorithm>
#include <deque>
#include <numeric>
#include <string>

namespace pyinterp {
namespace {

// Transactions over local labels 0..n_labels-1, ordered by decreasing support in the root
// database: transaction t holds the ascending labels items[start[t]:start[t + 1]].
struct Database {
  std::vector<int32_t> items;
  std::vector<int64_t> start{0};
  std::vector<double> weight;
  std::vector<double> support;    // per label
  std::vector<int64_t> item_of;   // per label: the caller's item

  int64_t size() const { return static_cast<int64_t>(weight.size()); }
  int32_t n_labels() const { return static_cast<int32_t>(support.size()); }
  void clear() {
    items.clear();
    start.assign(1, 0);
    weight.clear();
    support.clear();
    item_of.clear();
  }
  void push(const int32_t* first, const int32_t* last, double w) {
    items.insert(items.end(), first, last);
    start.push_back(static_cast<int64_t>(items.size()));
    weight.push_back(w);
  }
};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  return h * 0xbf58476d1ce4e5b9ULL;
}

// Merges identical transactions of db (summing weights), keeping first occurrences in order.
class Merger {
 public:
  void merge(Database& db) {
    const int64_t n = db.size();
    if (n < 2) return;
    size_t cap = 4;
    while (cap < 2 * static_cast<size_t>(n)) cap <<= 1;
    slot_.assign(cap, -1);
    out_.items.clear();
    out_.start.assign(1, 0);
    out_.weight.clear();
    for (int64_t t = 0; t < n; ++t) {
      const int32_t* a = db.items.data() + db.start[t];
      const int64_t len = db.start[t + 1] - db.start[t];
      uint64_t h = static_cast<uint64_t>(len);
      for (int64_t j = 0; j < len; ++j) h = mix(h, static_cast<uint64_t>(a[j]));
      for (size_t s = h & (cap - 1);; s = (s + 1) & (cap - 1)) {
        const int64_t u = slot_[s];
        if (u < 0) {
          slot_[s] = out_.size();
          out_.push(a, a + len, db.weight[t]);
          break;
        }
        const int32_t* b = out_.items.data() + out_.start[u];
        if (out_.start[u + 1] - out_.start[u] == len && std::equal(a, a + len, b)) {
          out_.weight[u] += db.weight[t];
          break;
        }
      }
    }
    std::swap(db.items, out_.items);
    std::swap(db.start, out_.start);
    std::swap(db.weight, out_.weight);
  }

 private:
  std::vector<int64_t> slot_;
  Database out_;
};

// For each label, where it occurs: (transaction, position within the transaction), grouped by
// label via a counting sort, so one pass over a database yields every conditional database.
struct Occurrences {
  std::vector<int64_t> begin;  // per label + 1
  std::vector<int64_t> transaction;
  std::vector<int32_t> position;

  void build(const Database& db) {
    const int32_t m = db.n_labels();
    begin.assign(static_cast<size_t>(m) + 1, 0);
    for (const int32_t e : db.items) ++begin[e + 1];
    std::partial_sum(begin.begin(), begin.end(), begin.begin());
    transaction.resize(db.items.size());
    position.resize(db.items.size());
    std::vector<int64_t>& next = fill_;
    next.assign(begin.begin(), begin.end() - 1);
    for (int64_t t = 0; t < db.size(); ++t)
      for (int64_t j = db.start[t]; j < db.start[t + 1]; ++j) {
        const int64_t slot = next[db.items[j]]++;
        transaction[slot] = t;
        position[slot] = static_cast<int32_t>(j - db.start[t]);
      }
  }

 private:
  std::vector<int64_t> fill_;
};

class Miner {
 public:
  Miner(const ItemsetOptions& options, Itemsets& out) : options_(options), out_(out) {}

  void run(Database root) {
    levels_.clear();
    levels_.push_back(std::move(root));
    grow(0);
  }

 private:
  struct Scratch {
    Occurrences occ;
    std::vector<double> support;
    std::vector<int32_t> relabel, row;
  };

  // Reports prefix + {e} for every label e of levels_[depth], then recurses into the database of
  // the transactions containing e cut to the labels before e (more frequent in the root order).
  void grow(size_t depth) {
    const Database& db = levels_[depth];
    const bool deeper = static_cast<int32_t>(prefix_.size()) + 1 < options_.max_size;
    if (deeper) {
      if (scratch_.size() <= depth) scratch_.resize(depth + 1);
      scratch_[depth].occ.build(db);
    }
    for (int32_t e = 0; e < db.n_labels(); ++e) {
      prefix_.push_back(db.item_of[e]);
      emit(db.support[e]);
      if (deeper && e > 0 && project(depth, e)) grow(depth + 1);
      prefix_.pop_back();
    }
  }

  bool project(size_t depth, int32_t e) {
    const Database& db = levels_[depth];
    Scratch& s = scratch_[depth];
    const double min_support = options_.min_support;
    s.support.assign(static_cast<size_t>(e), 0.0);
    for (int64_t o = s.occ.begin[e]; o < s.occ.begin[e + 1]; ++o) {
      const int64_t t = s.occ.transaction[o];
      const double w = db.weight[t];
      const int32_t* a = db.items.data() + db.start[t];
      for (int32_t j = 0; j < s.occ.position[o]; ++j) s.support[a[j]] += w;
    }
    if (levels_.size() <= depth + 1) levels_.emplace_back();
    Database& cond = levels_[depth + 1];
    cond.clear();
    s.relabel.assign(static_cast<size_t>(e), -1);
    for (int32_t r = 0; r < e; ++r)
      if (s.support[r] >= min_support) {
        s.relabel[r] = cond.n_labels();
        cond.support.push_back(s.support[r]);
        cond.item_of.push_back(db.item_of[r]);
      }
    if (cond.n_labels() == 0) return false;
    for (int64_t o = s.occ.begin[e]; o < s.occ.begin[e + 1]; ++o) {
      const int64_t t = s.occ.transaction[o];
      const int32_t* a = db.items.data() + db.start[t];
      s.row.clear();
      for (int32_t j = 0; j < s.occ.position[o]; ++j)
        if (s.relabel[a[j]] >= 0) s.row.push_back(s.relabel[a[j]]);
      if (!s.row.empty()) cond.push(s.row.data(), s.row.data() + s.row.size(), db.weight[t]);
    }
    merger_.merge(cond);
    return true;
  }

  void emit(double support) {
    if (static_cast<int64_t>(out_.support.size()) >= options_.max_itemsets)
      throw TooManyItemsets("more than max_itemsets = " + std::to_string(options_.max_itemsets) +
                            " frequent itemsets; raise min_support, lower max_size or raise max_itemsets");
    const size_t first = out_.items.size();
    out_.items.insert(out_.items.end(), prefix_.begin(), prefix_.end());
    std::sort(out_.items.begin() + static_cast<std::ptrdiff_t>(first), out_.items.end());
    out_.indptr.push_back(static_cast<int64_t>(out_.items.size()));
    out_.support.push_back(support);
  }

  const ItemsetOptions& options_;
  Itemsets& out_;
  std::deque<Database> levels_;  // levels_[d]: the database conditional on prefix_[:d]
  std::deque<Scratch> scratch_;
  std::vector<int64_t> prefix_;
  Merger merger_;
};

// The root database: items relabelled by decreasing support (ties: smaller item first), infrequent
// items dropped, repeats within a transaction ignored, identical transactions merged.
Database root_database(const TransactionsView& tx, double min_support) {
  const int64_t n_occ = tx.n > 0 ? tx.indptr[tx.n] : 0;
  std::vector<int64_t> values(tx.items, tx.items + n_occ);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());

  std::vector<int32_t> ids(static_cast<size_t>(n_occ));
  std::vector<int64_t> len(static_cast<size_t>(tx.n));
  std::vector<double> support(values.size(), 0.0);
  for (int64_t t = 0; t < tx.n; ++t) {
    const auto first = ids.begin() + tx.indptr[t], last = ids.begin() + tx.indptr[t + 1];
    for (int64_t j = tx.indptr[t]; j < tx.indptr[t + 1]; ++j)
      ids[j] = static_cast<int32_t>(std::lower_bound(values.begin(), values.end(), tx.items[j]) - values.begin());
    std::sort(first, last);
    const auto end = std::unique(first, last);
    len[t] = end - first;
    const double w = tx.weights ? tx.weights[t] : 1.0;
    for (auto it = first; it != end; ++it) support[*it] += w;
  }

  std::vector<int32_t> order;
  for (int32_t id = 0; id < static_cast<int32_t>(values.size()); ++id)
    if (support[id] >= min_support) order.push_back(id);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return support[a] > support[b]; });
  Database db;
  std::vector<int32_t> label(values.size(), -1);
  for (const int32_t id : order) {
    label[id] = db.n_labels();
    db.support.push_back(support[id]);
    db.item_of.push_back(values[id]);
  }
  std::vector<int32_t> row;
  for (int64_t t = 0; t < tx.n; ++t) {
    row.clear();
    for (int64_t j = tx.indptr[t]; j < tx.indptr[t] + len[t]; ++j)
      if (label[ids[j]] >= 0) row.push_back(label[ids[j]]);
    std::sort(row.begin(), row.end());
    if (!row.empty()) db.push(row.data(), row.data() + row.size(), tx.weights ? tx.weights[t] : 1.0);
  }
  Merger().merge(db);
  return db;
}

}  // namespace

Itemsets frequent_itemsets(const TransactionsView& tx, const ItemsetOptions& options) {
  if (!(options.min_support > 0.0)) throw std::invalid_argument("min_support must be > 0");
  if (options.max_size < 1) throw std::invalid_argument("max_size must be >= 1");
  Itemsets out;
  Miner(options, out).run(root_database(tx, options.min_support));
  return out;
}

}  // namespace pyinterp
