// Minimal cost-complexity pruning (Breiman et al. 1984, ch. 3) of a grown tree.
#pragma once
#include <cstdint>
#include <vector>

#include "tree.hpp"

namespace pyinterp {

// The smallest subtree minimising R(T) + alpha |leaves(T)|, R the leaves' impurities weighted by
// their share of the root's weight: the subtree scikit-learn's ccp_alpha keeps (the last of the
// weakest-link sequence whose effective alpha is <= alpha). Its nodes are renumbered in preorder,
// as scikit-learn renumbers a pruned tree; nodes that become leaves lose their split.
Tree prune_tree(const Tree& tree, double alpha);

// The tree with its nodes numbered in preorder (left child first), its left sets of categories in
// the order of their nodes; the nodes under a node with cut[node] set (when cut is not empty) are
// dropped and it becomes a leaf. index (if given) gets each kept node's new number (-1: dropped).
Tree copy_in_preorder(const Tree& tree, const std::vector<uint8_t>& cut, std::vector<int32_t>* index = nullptr);

}  // namespace pyinterp
