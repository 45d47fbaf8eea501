// Dynamic parallel-for over independent tasks, on the caller and the pool's threads
// (thread_pool.hpp). Tasks must not depend on which thread runs them; the first exception thrown by
// any task is rethrown in the caller. The loop is a Job (job_control.hpp): workers pass a
// checkpoint between tasks (long tasks also call checkpoint() inside), so a user's interrupt stops
// every worker and Interrupted is thrown once all have returned; with report_progress the progress
// hook hears of the tasks done, or, given progress_units, of the units the tasks report with
// add_progress (job_control.hpp).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>

#include "job_control.hpp"
#include "thread_pool.hpp"

namespace pyinterp {

// fn(task, worker) is called once per task in [0, n_tasks); worker is in [0, n_workers).
// make_state(worker) builds per-worker scratch space, passed as the third argument.
template <class MakeState, class Fn>
void parallel_for(int64_t n_tasks, int n_threads, MakeState make_state, Fn fn, bool report_progress = false,
                  int64_t progress_units = 0) {
  if (n_tasks <= 0) return;
  const int n_workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(n_threads, n_tasks)));
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  Job job(n_tasks, report_progress, progress_units);

  auto work = [&](int worker) {
    const JobSlot outer = current_job;  // a loop run inside another loop's task restores it
    current_job = {&job, worker == 0 ? outer.job == nullptr || outer.caller : false};
    try {
      auto state = make_state(worker);
      for (int64_t task = next++; task < n_tasks && !job.stopping(); task = next++) {
        fn(task, worker, state);
        job.task_done();
        checkpoint();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      job.stop();
    }
    current_job = outer;
  };

  if (n_workers == 1) {
    work(0);
  } else {
    ThreadPool::run(n_workers - 1, work);
  }
  if (error) std::rethrow_exception(error);
  job.finish();
}

struct NoState {};
inline NoState no_state(int) { return {}; }

// fn(begin, end) over blocks of rows: every row is handled by exactly one call, so per-row
// results do not depend on the number of threads.
template <class Fn>
void for_row_blocks(int64_t n_rows, int n_threads, Fn fn, int64_t block = 256) {
  const int64_t n_blocks = (n_rows + block - 1) / block;
  parallel_for(n_blocks, n_threads, no_state, [&](int64_t b, int, NoState&) {
    fn(b * block, std::min(n_rows, (b + 1) * block));
  });
}

}  // namespace pyinterp
