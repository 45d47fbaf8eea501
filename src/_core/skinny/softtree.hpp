// Soft-tree ensemble kernels (paper 003): the per-sample tree recursion of one mini-batch.
//
// m perfect trees of depth d, I = 2^d - 1 internal nodes numbered breadth first (children of n are
// 2n+1 left, 2n+2 right), L = 2^d leaves left to right. BLAS does the GEMMs on either side
// (Z = X W before, F = P O and the gradients after); these kernels do the recursion in between in
// one pass per sample, where numpy needs ~10 array operations per tree level.
#pragma once
#include <cstdint>

namespace pyinterp {

enum class Activation { sigmoid, smooth_step };

struct SoftTreeShape {
  int64_t n_rows = 0;   // B
  int64_t n_trees = 0;  // m
  int depth = 0;        // d
  int64_t internal() const { return (int64_t{1} << depth) - 1; }
  int64_t leaves() const { return int64_t{1} << depth; }
};

// S = act(Z + bias), S' = act'(Z + bias) (both B x m*I) and the leaf probabilities P (B x m*L).
template <class T>
void softtree_forward(const SoftTreeShape& s, const T* Z, const T* bias, Activation act, T gamma_s, T* S, T* dS,
                      T* P);

// From dP = dLoss/dP (B x m*L): dZ = dLoss/dZ (B x m*I) and db = its column sums (m*I).
// Reach probabilities of the internal nodes are recomputed from S.
template <class T>
void softtree_backward(const SoftTreeShape& s, const T* dP, const T* S, const T* dS, T* dZ, T* db);

}  // namespace pyinterp
