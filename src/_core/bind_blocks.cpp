// Python bindings of the feature-parallel fit (forest/column_blocks.hpp): ColumnBlock, one block of
// X's columns that a worker holds and the driver's asks go to, and fit_forest_blocks, which grows
// a forest asking a Python object for the blocks' answers. Asks and answers cross as dicts of
// numpy arrays (what Dask ships between machines); every answer is checked against its ask
// before the builder reads it, and every ask by the block before it reads its columns.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "forest/column_blocks.hpp"
#include "forest/forest.hpp"
#include "py_forest_inputs.hpp"
#include "py_util.hpp"

namespace pyinterp {
namespace {

// A 1-d array's values, copied: Dask delivers arrays at any byte offset, and a copy needs no
// alignment (memcpy), where the core's in-place reads do.
template <class T>
std::vector<T> copied(const py::handle& obj, const std::string& name) {
  auto a = py::array_t<T, py::array::c_style>::ensure(obj);
  if (!a) {
    PyErr_Clear();
    throw std::invalid_argument(name + " must be an array of " + std::string(py::str(py::dtype::of<T>())));
  }
  if (a.ndim() != 1) throw std::invalid_argument(name + " must be 1-d");
  std::vector<T> out(static_cast<size_t>(a.size()));
  if (!out.empty()) std::memcpy(out.data(), a.data(), out.size() * sizeof(T));
  return out;
}

template <class T>
std::vector<T> vector_of(const py::dict& d, const char* key) {
  if (!d.contains(key)) throw std::invalid_argument(std::string("a block's message lacks '") + key + "'");
  return copied<T>(d[key], key);
}

// Splits as parallel arrays; the left sets of codes (kCategoryWords words, for categorical splits
// only) of the splits at `with_codes` alone: they would be most of the bytes otherwise.
void put_splits(py::dict& d, const std::vector<Split>& splits) {
  const size_t k = splits.size();
  std::vector<double> proxy(k);
  std::vector<int64_t> feature(k), with_codes;
  std::vector<uint32_t> lo(k), hi(k);
  std::vector<uint8_t> missing_left(k);
  std::vector<uint64_t> codes;
  for (size_t i = 0; i < k; ++i) {
    const Split& s = splits[i];
    proxy[i] = s.proxy;
    feature[i] = s.feature;
    lo[i] = s.lo;
    hi[i] = s.hi;
    missing_left[i] = s.missing_left;
    if (std::any_of(s.left_codes, s.left_codes + kCategoryWords, [](uint64_t w) { return w != 0; })) {
      with_codes.push_back(static_cast<int64_t>(i));
      codes.insert(codes.end(), s.left_codes, s.left_codes + kCategoryWords);
    }
  }
  d["proxy"] = move_array(std::move(proxy));
  d["feature"] = move_array(std::move(feature));
  d["lo"] = move_array(std::move(lo));
  d["hi"] = move_array(std::move(hi));
  d["missing_left"] = move_array(std::move(missing_left));
  d["with_codes"] = move_array(std::move(with_codes));
  d["left_codes"] = move_array(std::move(codes));
}

std::vector<Split> get_splits(const py::dict& d) {
  const auto proxy = vector_of<double>(d, "proxy");
  const auto feature = vector_of<int64_t>(d, "feature");
  const auto lo = vector_of<uint32_t>(d, "lo"), hi = vector_of<uint32_t>(d, "hi");
  const auto missing_left = vector_of<uint8_t>(d, "missing_left");
  const auto with_codes = vector_of<int64_t>(d, "with_codes");
  const auto codes = vector_of<uint64_t>(d, "left_codes");
  const size_t k = proxy.size();
  if (feature.size() != k || lo.size() != k || hi.size() != k || missing_left.size() != k ||
      codes.size() != with_codes.size() * kCategoryWords)
    throw std::invalid_argument("a block's message has split arrays of different lengths");
  std::vector<Split> splits(k);
  for (size_t i = 0; i < k; ++i) {
    splits[i].proxy = proxy[i];
    splits[i].feature = feature[i];
    splits[i].lo = lo[i];
    splits[i].hi = hi[i];
    splits[i].missing_left = missing_left[i] != 0;
  }
  for (size_t c = 0; c < with_codes.size(); ++c) {
    if (with_codes[c] < 0 || static_cast<size_t>(with_codes[c]) >= k)
      throw std::invalid_argument("a block's message gives left codes to a split it does not hold");
    std::copy_n(codes.begin() + c * kCategoryWords, kCategoryWords, splits[with_codes[c]].left_codes);
  }
  return splits;
}

// Flags (0 or 1 each) as bits, eight a byte, the first flag in the lowest bit.
std::vector<uint8_t> packed_bits(const std::vector<uint8_t>& flags) {
  std::vector<uint8_t> bits((flags.size() + 7) / 8, 0);
  for (size_t i = 0; i < flags.size(); ++i) bits[i >> 3] |= static_cast<uint8_t>((flags[i] & 1u) << (i & 7));
  return bits;
}

// The k flags packed_bits made `bits` of, refused unless there are just enough bytes and the last
// one's unused bits are clear.
std::vector<uint8_t> unpacked_bits(const std::vector<uint8_t>& bits, size_t k, const char* what) {
  if (bits.size() != (k + 7) / 8 || (k % 8 != 0 && (bits.back() >> (k % 8)) != 0))
    throw std::invalid_argument(std::string("a block's answer does not match its ask (") + what +
                                ": not one bit per row or candidate asked about)");
  std::vector<uint8_t> flags(k);
  for (size_t i = 0; i < k; ++i) flags[i] = (bits[i >> 3] >> (i & 7)) & 1u;
  return flags;
}

// Moves' flags as bits, under `prefix`row_left and `prefix`oob_left (their ranges travel as
// arrays of their own), and back: as many flags as the ranges hold rows.
void put_moves(py::dict& d, const Moves& moves, const std::string& prefix) {
  d[py::str(prefix + "row_left")] = move_array(packed_bits(moves.row_left));
  d[py::str(prefix + "oob_left")] = move_array(packed_bits(moves.oob_left));
}

size_t range_rows(const std::vector<int64_t>& start, const std::vector<int64_t>& end) {
  if (start.size() != end.size()) throw std::invalid_argument("a block's message has ranges of different lengths");
  size_t rows = 0;
  for (size_t k = 0; k < start.size(); ++k) {
    if (start[k] < 0 || end[k] < start[k] || end[k] - start[k] > std::numeric_limits<uint32_t>::max())
      throw std::invalid_argument("a block's message has a range of rows that is not one");
    rows += static_cast<size_t>(end[k] - start[k]);
  }
  return rows;
}

void get_moves(const py::dict& d, Moves& moves, const std::string& prefix) {
  const std::string row_left = prefix + "row_left", oob_left = prefix + "oob_left";
  moves.row_left = unpacked_bits(vector_of<uint8_t>(d, row_left.c_str()), range_rows(moves.start, moves.end),
                                 row_left.c_str());
  moves.oob_left = unpacked_bits(vector_of<uint8_t>(d, oob_left.c_str()), range_rows(moves.oob_start, moves.oob_end),
                                 oob_left.c_str());
}

template <class Message, class = void>
struct HasSplits : std::false_type {};
template <class Message>
struct HasSplits<Message, std::void_t<decltype(std::declval<Message>().splits)>> : std::true_type {};

// A message's arrays as a dict (as Message::for_each_array names them), and back.
template <class Message>
py::dict arrays_of(const Message& m) {
  py::dict d;
  Message::for_each_array(m, [&](const char* key, const auto& v) { d[key] = copy_array(v); });
  return d;
}

template <class Message>
Message message_of(const py::dict& d) {
  Message m;
  Message::for_each_array(m, [&](const char* key, auto& v) {
    v = vector_of<typename std::decay_t<decltype(v)>::value_type>(d, key);
  });
  return m;
}

// An ask as a dict (its arrays, splits and moves' flags), and back, before the checks of what it
// says.
template <class Ask>
py::dict dict_of(const Ask& ask) {
  py::dict d = arrays_of(ask);
  if constexpr (HasSplits<Ask>::value) put_splits(d, ask.splits);
  put_moves(d, ask.moves, "move_");
  return d;
}

template <class Ask>
Ask ask_of(const py::dict& d) {
  Ask ask = message_of<Ask>(d);
  if constexpr (HasSplits<Ask>::value) ask.splits = get_splits(d);
  get_moves(d, ask.moves, "move_");
  return ask;
}

// A search answer as it crosses: per candidate whether it varies (a bit), per node the proxy at
// which its search stops, and the splits of only those candidates that raise their node's best in
// the ask's order (best_at: their places among the ask's candidates): a few per node, not one per
// candidate. The builder offers a node's candidates to CandidatePick in draw order (the ask's
// order within a block), whose best changes only at a proxy above all offered before; a
// candidate not above an earlier one of its own block is never taken, so it crosses as no split
// (answer_of) and the pick is the same.
py::dict answer_dict(const SearchAsk& ask, const SearchAnswer& answer) {
  std::vector<uint32_t> best_at;
  std::vector<Split> best;
  for (int64_t k = 0; k < ask.n_nodes(); ++k) {
    double top = kNoSplit;
    for (int64_t i = ask.feature_begin[k]; i < ask.feature_begin[k + 1]; ++i) {
      const Split& s = answer.splits[i];
      if (s.feature < 0 || !(s.proxy > top)) continue;
      top = s.proxy;
      best_at.push_back(static_cast<uint32_t>(i));
      best.push_back(s);
    }
  }
  py::dict d;
  d["varies"] = move_array(packed_bits(answer.varies));
  d["reachable"] = copy_array(answer.reachable);
  d["best_at"] = move_array(std::move(best_at));
  put_splits(d, best);
  return d;
}

// answer_dict's answer, checked against its ask: the flags of its candidates, a stopping proxy
// per node, and splits at increasing places among the candidates (the builder checks their
// columns against its draws).
SearchAnswer answer_of(const py::dict& d, const SearchAsk& ask) {
  const size_t k = static_cast<size_t>(ask.feature_begin.back());
  SearchAnswer answer;
  answer.varies = unpacked_bits(vector_of<uint8_t>(d, "varies"), k, "varies");
  answer.reachable = vector_of<double>(d, "reachable");
  const auto best_at = vector_of<uint32_t>(d, "best_at");
  const std::vector<Split> best = get_splits(d);
  if (static_cast<int64_t>(answer.reachable.size()) != ask.n_nodes() || best.size() != best_at.size())
    throw std::invalid_argument("a block's search answer does not match its ask (lengths differ)");
  answer.splits.assign(k, Split{kNoSplit});
  for (size_t c = 0; c < best_at.size(); ++c) {
    if (best_at[c] >= k || (c > 0 && best_at[c] <= best_at[c - 1]))
      throw std::invalid_argument("a block's search answer places a split at no candidate it was asked about");
    answer.splits[best_at[c]] = best[c];
  }
  return answer;
}

// A partition answer as it crosses: the sides of the rows and out-of-bag rows of its move as bits
// (the move's ranges are the ask's).
py::dict answer_dict(const PartitionAnswer& answer) {
  py::dict d = arrays_of(answer);
  put_moves(d, answer.moves, "");
  return d;
}

PartitionAnswer answer_of(const py::dict& d, const PartitionAsk& ask) {
  PartitionAnswer answer = message_of<PartitionAnswer>(d);
  Moves& moves = answer.moves;
  moves.start = ask.start, moves.end = ask.end, moves.oob_start = ask.oob_start, moves.oob_end = ask.oob_end;
  get_moves(d, moves, "");
  const size_t k = static_cast<size_t>(ask.n_nodes());
  if (answer.threshold.size() != k || answer.missing_go_to_left.size() != k ||
      answer.categories.size() != k * kCategoryWords)
    throw std::invalid_argument("a block's partition answer does not match its ask (lengths differ)");
  if (!std::all_of(answer.missing_go_to_left.begin(), answer.missing_go_to_left.end(), [](uint8_t b) { return b <= 1; }))
    throw std::invalid_argument("a block's partition answer holds sides other than 0 and 1");
  return answer;
}

// Blocks a Python object answers for: remote.begin_tree(slot, w, min_weight_leaf, oob),
// remote.search(slot, asks) and remote.partition(slot, asks), asks and answers lists with one dict (or
// None: nothing asked) per block. Called from the builders' threads without the GIL (several at
// once, under their slots); each call takes it, and the object releases it while it waits.
class PyBlocks final : public ColumnBlocks {
 public:
  PyBlocks(py::object remote, std::vector<int64_t> bounds, int64_t n_rows)
      : ColumnBlocks(std::move(bounds), n_rows), remote_(std::move(remote)) {}
  ~PyBlocks() override {
    py::gil_scoped_acquire gil;
    remote_ = py::object();
  }

  void begin_tree(int slot, const std::vector<double>& w, double min_weight_leaf,
                  const std::vector<uint32_t>& oob) override {
    py::gil_scoped_acquire gil;
    remote_.attr("begin_tree")(slot, copy_array(w), min_weight_leaf, copy_array(oob));
  }

  void search(int slot, const std::vector<SearchAsk>& asks, std::vector<SearchAnswer>& answers) override {
    py::gil_scoped_acquire gil;
    const py::list replies = call("search", asks, dict_of<SearchAsk>, slot);
    answers.resize(asks.size());
    for (size_t b = 0; b < asks.size(); ++b)
      if (asks[b].n_nodes() > 0) answers[b] = answer_of(reply(replies, b), asks[b]);
  }

  void partition(int slot, const std::vector<PartitionAsk>& asks, std::vector<PartitionAnswer>& answers) override {
    py::gil_scoped_acquire gil;
    const py::list replies = call("partition", asks, dict_of<PartitionAsk>, slot);
    answers.resize(asks.size());
    for (size_t b = 0; b < asks.size(); ++b)
      if (asks[b].n_nodes() > 0) answers[b] = answer_of(reply(replies, b), asks[b]);
  }

 private:
  // remote.method(slot, asks).
  template <class Ask, class ToDict>
  py::list call(const char* method, const std::vector<Ask>& asks, ToDict to_dict, int slot) {
    py::list out;
    for (const Ask& ask : asks) out.append(ask.n_nodes() > 0 ? py::object(to_dict(ask)) : py::object(py::none()));
    py::object replies = remote_.attr(method)(slot, out);
    if (!py::isinstance<py::list>(replies) || py::len(replies) != asks.size())
      throw std::invalid_argument(std::string("the blocks' ") + method + " must return a list of one answer per block");
    return py::reinterpret_borrow<py::list>(replies);
  }
  static py::dict reply(const py::list& replies, size_t b) {
    if (!py::isinstance<py::dict>(replies[b]))
      throw std::invalid_argument("block " + std::to_string(b) + " answered with something other than a dict");
    return py::reinterpret_borrow<py::dict>(replies[b]);
  }

  py::object remote_;
};

// A block and the array its columns are read from (kept alive beside it).
struct PyColumnBlock {
  py::object X;
  std::unique_ptr<ColumnBlock> block;
};

}  // namespace

void bind_blocks(py::module_& m) {
  py::class_<PyColumnBlock>(m, "ColumnBlock",
                            "One block of X's columns, encoded once where it lives, answering a feature-parallel "
                            "fit's asks. Not picklable: it stays on the worker that made it.")
      .def(py::init([](const py::object& X, const py::object& y, const py::object& classes, int32_t n_classes,
                       const ForestParams& params, int64_t first, int64_t n_features,
                       const py::object& feature_weights, const py::object& mapped_file) {
             const MatrixView v = matrix_view(X);
             const FitTargets t = fit_targets(y, classes, n_classes, v.n_rows);
             if (first < 0) throw std::invalid_argument("first must be >= 0");
             std::vector<double> fw;
             if (const double* p = optional_data<double>(feature_weights, {n_features}, "feature_weights"))
               fw.assign(p, p + n_features);
             std::shared_ptr<const ColumnSource> source = x_source(X, mapped_file);
             PyColumnBlock out{X, nullptr};
             {
               py::gil_scoped_release release;
               out.block = std::make_unique<ColumnBlock>(std::move(source), t, params, first, n_features, fw);
             }
             return out;
           }),
           py::arg("X"), py::arg("y"), py::arg("classes"), py::arg("n_classes"), py::arg("params"),
           py::arg("first"), py::arg("n_features"), py::arg("feature_weights") = py::none(),
           py::arg("mapped_file") = py::none(),
           "X: the block's columns, the whole matrix's [first, first + X.shape[1]) of n_features; "
           "feature_weights: the fit's (None: uniform), with params.seed and always_features to draw the "
           "nodes' candidates as the builder does.")
      .def_property_readonly("shape",
                             [](const PyColumnBlock& b) { return py::make_tuple(b.block->n_rows(), b.block->n_cols()); })
      .def_property_readonly("codes_nbytes", [](const PyColumnBlock& b) { return b.block->codes_nbytes(); })
      .def_property_readonly("first_missing", [](const PyColumnBlock& b) { return b.block->first_missing(); },
                             "The first of the block's columns (its index) with a missing value, or -1.")
      .def(
          "begin_tree",
          [](PyColumnBlock& b, const py::object& w, double min_weight_leaf, int slot, const py::object& oob) {
            const std::vector<double> a = copied<double>(w, "w");
            if (static_cast<int64_t>(a.size()) != b.block->n_rows())
              throw std::invalid_argument("w must have one weight per row of the block");
            const std::vector<uint32_t> out_of_bag = oob.is_none() ? std::vector<uint32_t>{} : copied<uint32_t>(oob, "oob");
            py::gil_scoped_release release;
            b.block->begin_tree(slot, a.data(), min_weight_leaf, out_of_bag);
          },
          py::arg("w"), py::arg("min_weight_leaf"), py::arg("slot") = 0, py::arg("oob") = py::none(),
          "Begins a tree in `slot`: its rows those of positive weight w, its out-of-bag rows `oob` "
          "(increasing; None: none routed).")
      .def(
          "search",
          [](PyColumnBlock& b, const py::dict& d, int slot) {
            const SearchAsk ask = ask_of<SearchAsk>(d);
            SearchAnswer answer;
            {
              py::gil_scoped_release release;
              b.block->search(slot, ask, answer);
            }
            return answer_dict(ask, answer);
          },
          py::arg("ask"), py::arg("slot") = 0)
      .def(
          "partition",
          [](PyColumnBlock& b, const py::dict& d, int slot) {
            const PartitionAsk ask = ask_of<PartitionAsk>(d);
            PartitionAnswer answer;
            {
              py::gil_scoped_release release;
              b.block->partition(slot, ask, answer);
            }
            return answer_dict(answer);
          },
          py::arg("ask"), py::arg("slot") = 0);

  m.def(
      "fit_forest_blocks",
      [](const py::object& blocks, std::vector<int64_t> bounds, int64_t n_rows, const py::object& y,
         const py::object& classes, int32_t n_classes, const py::object& sample_weight,
         const py::object& feature_weights, const ForestParams& params) {
        const FitTargets t = fit_targets(y, classes, n_classes, n_rows);
        const double* wp = optional_data<double>(sample_weight, {n_rows}, "sample_weight");
        PyBlocks remote(blocks, std::move(bounds), n_rows);
        std::vector<double> fw;
        if (const double* p = optional_data<double>(feature_weights, {remote.n_cols()}, "feature_weights"))
          fw.assign(p, p + remote.n_cols());
        py::gil_scoped_release release;
        return fit_forest(remote, t, wp, fw, params);
      },
      py::arg("blocks"), py::arg("bounds"), py::arg("n_rows"), py::arg("y"), py::arg("classes"),
      py::arg("n_classes"), py::arg("sample_weight"), py::arg("feature_weights"), py::arg("params"),
      "A forest grown over X's columns held in blocks: blocks.begin_tree(slot, w, min_weight_leaf, oob), "
      "blocks.search(slot, asks) and blocks.partition(slot, asks) answer with ColumnBlock's methods, one list entry per "
      "block (bounds: block b holds columns [bounds[b], bounds[b + 1])); params.n_threads trees grow at once, "
      "tree slots 0 to n_threads - 1, from as many threads.");
}

}  // namespace pyinterp
