// DL-BCD (thesis 000, Algorithm 2): complete dictionary learning by block coordinate descent on
// the rows of Q = D^{-1}, minimising f(D) = (1/n) sum_i sum_h min(|(Q x_i)_h|, tau); and the
// sharpness statistic of Algorithm 1. Signals are the rows of X (n x p, row-major); dictionaries
// and inverses are p x p row-major with the atoms as columns.
#pragma once
#include <cstdint>
#include <vector>

#include "../optim/bfgs.hpp"

namespace pyinterp {

struct DlbcdOptions {
  double tau = 0.0;     // truncation; infinity gives the plain l1 objective
  int max_iter = 500;   // outer iterations (sweeps over all rows)
  double tol = 1e-9;    // stop when a sweep lowers f by at most tol * f
  double delta = 0.0;   // sign smoothing of the subproblem (0: exact |.|)
  // A subproblem starts at w = e_j, or, when e_j is a kink (some beta_ij = 0 exactly, as in
  // noiseless sparse data), at e_j plus N(0, start_noise^2) noise in the free coordinates: BFGS
  // started on a kink may stop there although it is not the minimiser. The result replaces the row
  // only if it beats e_j itself.
  double start_noise = 1e-3;
  uint64_t seed = 0;    // restart r draws its start noise from stream (seed, r)
  optim::Options solver;
};

struct DlbcdRun {
  std::vector<double> dictionary;  // p x p, unit columns
  std::vector<double> history;     // f before the first sweep and after each sweep (final stage)
  int n_iter = 0;                  // sweeps of the final stage
  int n_iter_warm = 0;             // sweeps of the tau = inf warm start (0 without one)
  std::vector<double> warm_dictionary;  // result of the tau = inf warm start (empty without one)
  std::vector<double> warm_history;     // f before and after each sweep of the warm start
};

// D0s, Q0s: n_restarts consecutive p x p matrices with Q0 = D0^{-1} and unit columns in D0.
// warm: each restart first runs tau = inf to convergence and continues from there with opt.tau
// (the thesis' two-stage procedure). Restarts run in parallel; each is deterministic: restart r
// draws from stream (opt.seed, first_restart + r), so restarts run in chunks (on a cluster's
// workers) give the runs of one call.
std::vector<DlbcdRun> fit_dlbcd(const double* X, int64_t n, int p, const double* D0s, const double* Q0s,
                                int n_restarts, bool warm, const DlbcdOptions& opt, int n_threads,
                                int64_t first_restart = 0);

// Algorithm 1 for coefficients beta (n x p, row-major) and a perturbed collinearity matrix M
// (p x p, diagonal unused): solves problem (5.3) for every row k, starting from row k of W0 (its
// k-th entry is replaced by 1), and returns r = max_k ||w^(k) - I_k||^2; W receives the solutions.
double sharpness_statistic(const double* beta, int64_t n, int p, const double* M, const double* W0, double delta,
                           const optim::Options& solver, int n_threads, std::vector<double>& W);

}  // namespace pyinterp
