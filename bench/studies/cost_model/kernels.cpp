// Micro-benchmarks behind the forest's cost model (bench/studies/cost_model.py compiles and runs this):
// what one code of a candidate column costs this machine in the split search's access patterns,
// with nothing else of the engine around them. Prints one JSON object.
//
//   latency   dependent loads over a buffer of each size (a random cycle of cache lines): the
//             price of a miss at each level of the hierarchy
//   stream    sequential read of 2-byte codes: the bandwidth floor of touching a code
//   gather    sum of col[idx[k]] over a node's rows (ascending random rows of an n-row uint16
//             column, 32 rows prefetched ahead as the engine does): the floor of reading a code
//   counting  gather + the counting search's update (two per-code histogram sums and the
//             occupancy bit), with the sums in two arrays (the engine's layout) or interleaved
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
volatile uint64_t sink;

template <class F>
double best_ns(F&& run, int repeats) {  // best of repeats, nanoseconds per call
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
  }
  return best;
}

double latency_ns(size_t bytes, std::mt19937_64& rng) {
  const size_t lines = bytes / 64;
  std::vector<uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<uint64_t> next(lines * 8);
  for (size_t k = 0; k < lines; ++k) next[order[k] * 8] = order[(k + 1) % lines] * 8;
  const size_t steps = std::max<size_t>(lines * 4, 1u << 22);
  const double ns = best_ns(
      [&] {
        uint64_t at = 0;
        for (size_t s = 0; s < steps; ++s) at = next[at];
        sink = at;
      },
      3);
  return ns / static_cast<double>(steps);
}

double stream_ns(size_t n_codes) {
  std::vector<uint16_t> codes(n_codes, 1);
  const double ns = best_ns(
      [&] {
        uint64_t s = 0;
        for (size_t k = 0; k < n_codes; ++k) s += codes[k];
        sink = s;
      },
      5);
  return ns / static_cast<double>(n_codes);
}

struct Node {
  std::vector<uint32_t> rows;  // ascending, as the engine keeps a node's rows
  std::vector<double> lw, lwy;
};

Node make_node(size_t n, size_t m, std::mt19937_64& rng) {
  std::vector<uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0u);
  std::shuffle(all.begin(), all.end(), rng);
  Node node;
  node.rows.assign(all.begin(), all.begin() + m);
  std::sort(node.rows.begin(), node.rows.end());
  node.lw.assign(m, 1.0);
  node.lwy.resize(m);
  for (size_t k = 0; k < m; ++k) node.lwy[k] = static_cast<double>(k % 7) - 3.0;
  return node;
}

constexpr size_t kPrefetch = 32;

// Per code: ns of the gather alone, and of the counting update with the two layouts. Columns are
// visited in turn (p of them), as a node visits its candidates, so the columns' cache state is the
// search's, not one hot column's.
struct NodeCost {
  double gather, counting_split, counting_interleaved;
};

NodeCost node_cost(const std::vector<std::vector<uint16_t>>& cols, const Node& node, size_t n) {
  const size_t m = node.rows.size();
  const uint32_t* idx = node.rows.data();
  const size_t reps = std::max<size_t>(1, (size_t{1} << 24) / (m * cols.size()));
  std::vector<double> hw(n), hs(n), h2(2 * n);
  std::vector<uint64_t> occupied(n / 64 + 1);
  auto over_columns = [&](auto&& body) {
    return best_ns(
               [&] {
                 for (size_t r = 0; r < reps; ++r)
                   for (const auto& col : cols) body(col.data());
               },
               3) /
           static_cast<double>(reps * cols.size() * m);
  };
  NodeCost out{};
  out.gather = over_columns([&](const uint16_t* col) {
    uint64_t s = 0;
    for (size_t k = 0; k < m; ++k) {
      if (k + kPrefetch < m) __builtin_prefetch(col + idx[k + kPrefetch]);
      s += col[idx[k]];
    }
    sink = s;
  });
  out.counting_split = over_columns([&](const uint16_t* col) {
    for (size_t k = 0; k < m; ++k) {
      if (k + kPrefetch < m) __builtin_prefetch(col + idx[k + kPrefetch]);
      const uint32_t c = col[idx[k]];
      hw[c] += node.lw[k];
      hs[c] += node.lwy[k];
      occupied[c >> 6] |= uint64_t{1} << (c & 63);
    }
    sink = occupied[0];
  });
  out.counting_interleaved = over_columns([&](const uint16_t* col) {
    for (size_t k = 0; k < m; ++k) {
      if (k + kPrefetch < m) __builtin_prefetch(col + idx[k + kPrefetch]);
      const uint32_t c = col[idx[k]];
      h2[2 * c] += node.lw[k];
      h2[2 * c + 1] += node.lwy[k];
      occupied[c >> 6] |= uint64_t{1} << (c & 63);
    }
    sink = occupied[0];
  });
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // argv: n (rows), p (columns visited in turn), then node sizes.
  const size_t n = argc > 1 ? std::stoul(argv[1]) : 20000;
  const size_t p = argc > 2 ? std::stoul(argv[2]) : 166;
  std::mt19937_64 rng(0);
  std::printf("{\"latency_ns\": {");
  const size_t sizes[] = {16u << 10, 256u << 10, 1u << 20, 8u << 20, 24u << 20, 256u << 20};
  for (size_t i = 0; i < std::size(sizes); ++i)
    std::printf("%s\"%zu\": %.3f", i ? ", " : "", sizes[i], latency_ns(sizes[i], rng));
  std::printf("}, \"stream_ns\": %.4f, \"nodes\": {", stream_ns(size_t{1} << 26));
  std::vector<std::vector<uint16_t>> cols(p, std::vector<uint16_t>(n));
  for (auto& col : cols)
    for (auto& c : col) c = static_cast<uint16_t>(rng() % std::min<size_t>(n, 65535));
  bool first = true;
  for (int a = 3; a < argc; ++a) {
    const size_t m = std::min<size_t>(std::stoul(argv[a]), n);
    const NodeCost c = node_cost(cols, make_node(n, m, rng), n);
    std::printf("%s\"%zu\": [%.4f, %.4f, %.4f]", first ? "" : ", ", m, c.gather, c.counting_split,
                c.counting_interleaved);
    first = false;
  }
  std::printf("}}\n");
  return 0;
}
