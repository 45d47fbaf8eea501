#include "dlbcd.hpp"

#include <algorithm>
#include <cmath>

#include "../common/parallel.hpp"
#include "../common/rng.hpp"
#include "row_objective.hpp"

namespace pyinterp {
namespace {

double standard_normal(Rng& rng) {  // Box-Muller; one draw per call keeps the stream simple
  const double u = 1.0 - rng.uniform(), v = rng.uniform();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
}

// One DL-BCD run's state. D is kept by columns (atom h at Dt[h * p]); Q = D^{-1} by rows; the
// coefficients B = X Q^T by coefficient (row h of Bt holds beta_h for every signal). A row update
// changes D, Q and B in O(p^2 + n p) by Proposition 5.2.1 (no inverse is ever formed):
//   Q[j] <- w^T Q,  Q[h] <- c_h Q[h],  D_h <- (D_h - w_h D_j) / c_h,  c_h = ||D_h - w_h D_j||.
class Learner {
 public:
  Learner(const double* X, int64_t n, int p, const double* D0, const double* Q0, const DlbcdOptions& opt,
          uint64_t stream)
      : X_(X), n_(n), p_(p), opt_(opt), rng_(opt.seed, stream), Dt_(p * p), Q_(Q0, Q0 + p * p), Bt_(n * p), A_(),
        idx_(n) {
    for (int r = 0; r < p; ++r)
      for (int h = 0; h < p; ++h) Dt_[h * p + r] = D0[r * p + h];
  }

  // Sweeps until f stops decreasing by more than tol * f; returns the sweeps made. Progress counts
  // max_iter units per run: one per sweep, the rest when it converges.
  int run(double tau, std::vector<double>& history) {
    history.clear();
    refresh_coefficients();
    double f = objective(tau);
    history.push_back(f);
    int sweeps = 0;
    while (sweeps < opt_.max_iter) {
      for (int j = 0; j < p_; ++j) {
        checkpoint();  // a sweep of a large n p takes seconds: a user's interrupt stops it between rows
        update_row(j, tau);
      }
      ++sweeps;
      add_progress(1);
      refresh_coefficients();
      const double f_new = objective(tau);
      history.push_back(f_new);
      const bool done = !(f - f_new > opt_.tol * f);
      f = f_new;
      if (done) break;
    }
    add_progress(opt_.max_iter - sweeps);
    return sweeps;
  }

  std::vector<double> dictionary() const {
    std::vector<double> D(p_ * p_);
    for (int r = 0; r < p_; ++r)
      for (int h = 0; h < p_; ++h) D[r * p_ + h] = Dt_[h * p_ + r];
    return D;
  }

 private:
  void refresh_coefficients() {
    for (int64_t i = 0; i < n_; ++i) {
      const double* x = X_ + i * p_;
      for (int h = 0; h < p_; ++h) {
        const double* q = &Q_[h * p_];
        double s = 0.0;
        for (int c = 0; c < p_; ++c) s += q[c] * x[c];
        Bt_[h * n_ + i] = s;
      }
    }
  }

  double objective(double tau) const {
    double f = 0.0;
    for (double b : Bt_) f += std::min(std::fabs(b), tau);
    return f / static_cast<double>(n_);
  }

  void update_row(int j, double tau) {
    const int p = p_;
    // The signals whose coefficient j is not truncated take part in the l1 term (the proof of
    // Proposition 5.2.2 majorises min(|.|, tau) by |.| on them and by tau on the others).
    const double* A = Bt_.data();
    int64_t m = n_;
    if (std::isfinite(tau)) {
      m = 0;
      const double* bj = &Bt_[j * n_];
      for (int64_t i = 0; i < n_; ++i)
        if (std::fabs(bj[i]) <= tau) idx_[m++] = i;
      A_.resize(m * p);
      for (int h = 0; h < p; ++h) {
        const double* bh = &Bt_[h * n_];
        double* ah = A_.data() + h * m;  // A_ is empty when every coefficient j exceeds tau
        for (int64_t r = 0; r < m; ++r) ah[r] = bh[idx_[r]];
      }
      A = A_.data();
    }
    std::vector<double> cos(p), weight(p);
    for (int h = 0; h < p; ++h) {
      if (h == j) continue;
      double s = 0.0, c = 0.0;
      for (int r = 0; r < p; ++r) s += Dt_[h * p + r] * Dt_[j * p + r];
      for (int64_t i = 0; i < n_; ++i) {
        const double a = std::fabs(Bt_[h * n_ + i]);
        if (a <= tau) c += a;
      }
      cos[h] = s;
      weight[h] = c;
    }
    RowObjective obj(A, m, p, j, cos.data(), weight.data(), opt_.delta, static_cast<double>(n_));
    std::vector<double> x(p - 1, 0.0);
    const double f0 = obj.exact_value(x.data());
    if (obj.on_kink(x.data()))
      for (double& v : x) v = opt_.start_noise * standard_normal(rng_);
    optim::minimize(obj, x, opt_.solver);
    if (!(obj.exact_value(x.data()) < f0)) return;  // keep the row: the guard behind monotonicity
    std::vector<double> w(p);
    obj.expand(x.data(), w);

    std::vector<double> cols(p * p), norms(p, 1.0);
    for (int h = 0; h < p; ++h) {
      if (h == j) continue;
      double ss = 0.0;
      for (int r = 0; r < p; ++r) {
        const double v = Dt_[h * p + r] - w[h] * Dt_[j * p + r];
        cols[h * p + r] = v;
        ss += v * v;
      }
      norms[h] = std::sqrt(ss);
      if (!(norms[h] > 1e-12)) return;  // would make D singular
    }
    std::vector<double> qj(p, 0.0), bj(n_, 0.0);
    for (int h = 0; h < p; ++h) {
      const double wh = w[h];
      if (wh == 0.0) continue;
      for (int c = 0; c < p; ++c) qj[c] += wh * Q_[h * p + c];
      const double* bh = &Bt_[h * n_];
      for (int64_t i = 0; i < n_; ++i) bj[i] += wh * bh[i];
    }
    for (int h = 0; h < p; ++h) {
      if (h == j) continue;
      const double c = norms[h];
      for (int r = 0; r < p; ++r) Dt_[h * p + r] = cols[h * p + r] / c;
      for (int r = 0; r < p; ++r) Q_[h * p + r] *= c;
      for (int64_t i = 0; i < n_; ++i) Bt_[h * n_ + i] *= c;
    }
    std::copy(qj.begin(), qj.end(), Q_.begin() + j * p);
    std::copy(bj.begin(), bj.end(), Bt_.begin() + j * n_);
  }

  const double* X_;
  int64_t n_;
  int p_;
  DlbcdOptions opt_;
  Rng rng_;
  std::vector<double> Dt_, Q_, Bt_, A_;
  std::vector<int64_t> idx_;
};

}  // namespace

std::vector<DlbcdRun> fit_dlbcd(const double* X, int64_t n, int p, const double* D0s, const double* Q0s,
                                int n_restarts, bool warm, const DlbcdOptions& opt, int n_threads,
                                int64_t first_restart) {
  std::vector<DlbcdRun> runs(n_restarts);
  parallel_for(n_restarts, n_threads, no_state, [&](int64_t r, int, NoState&) {
    const int64_t offset = r * p * p;
    Learner learner(X, n, p, D0s + offset, Q0s + offset, opt, static_cast<uint64_t>(first_restart + r));
    DlbcdRun& run = runs[r];
    if (warm) {
      run.n_iter_warm = learner.run(INFINITY, run.warm_history);
      run.warm_dictionary = learner.dictionary();
    }
    run.n_iter = learner.run(opt.tau, run.history);
    run.dictionary = learner.dictionary();
  }, /*report_progress=*/true, /*progress_units=*/int64_t{n_restarts} * opt.max_iter * (warm ? 2 : 1));
  return runs;
}

double sharpness_statistic(const double* beta, int64_t n, int p, const double* M, const double* W0, double delta,
                           const optim::Options& solver, int n_threads, std::vector<double>& W) {
  std::vector<double> Bt(n * p), weight(p, 0.0), r(p, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int h = 0; h < p; ++h) Bt[h * n + i] = beta[i * p + h];
  for (int h = 0; h < p; ++h)
    for (int64_t i = 0; i < n; ++i) weight[h] += std::fabs(Bt[h * n + i]);
  W.assign(p * p, 0.0);
  parallel_for(p, n_threads, no_state, [&](int64_t k, int, NoState&) {
    RowObjective obj(Bt.data(), n, p, static_cast<int>(k), M + k * p, weight.data(), delta, static_cast<double>(n));
    std::vector<double> x, w(p);
    for (int h = 0; h < p; ++h)
      if (h != k) x.push_back(W0[k * p + h]);
    optim::minimize(obj, x, solver);
    obj.expand(x.data(), w);
    std::copy(w.begin(), w.end(), W.begin() + k * p);
    for (double v : x) r[k] += v * v;
  });
  return *std::max_element(r.begin(), r.end());
}

}  // namespace pyinterp
