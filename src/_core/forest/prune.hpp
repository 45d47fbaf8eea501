// Minimal cost-complexity pruning (Breiman et al. 1984, ch. 3) of a grown tree.
#pragma once
#include "tree.hpp"

namespace pyinterp {

// The smallest subtree minimising R(T) + alpha |leaves(T)|, R the leaves' impurities weighted by
// their share of the root's weight: the subtree scikit-learn's ccp_alpha keeps (the last of the
// weakest-link sequence whose effective alpha is <= alpha). Its nodes are renumbered in preorder,
// as scikit-learn renumbers a pruned tree; nodes that become leaves lose their split.
Tree prune_tree(const Tree& tree, double alpha);

}  // namespace pyinterp
