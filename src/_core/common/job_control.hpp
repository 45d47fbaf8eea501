// A user's control over a running computation: stopping it (Ctrl-C) and watching its progress.
// The core knows nothing of Python: the extension installs an interrupt check ("is a signal
// pending?") and a progress hook. parallel_for runs each loop as a Job; its workers call
// checkpoint() between tasks and, in long tasks, inside them (per tree node, per sweep). In the
// thread that entered the core, a checkpoint runs the check and the hook at most every 50 ms; a
// positive check stops every worker at its next checkpoint, and parallel_for throws Interrupted,
// which the extension turns back into the pending Python error.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <exception>

namespace pyinterp {

// The clock a checkpoint reads (once per tree node): a coarse one where there is one, 5 ns a read
// against steady_clock's 24 on this project's VMs; its few-ms resolution suits a 50 ms interval.
inline std::chrono::nanoseconds poll_clock() {
#ifdef CLOCK_MONOTONIC_COARSE
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
#else
  return std::chrono::steady_clock::now().time_since_epoch();
#endif
}

struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted"; }
};

// True when the user asked to stop.
using InterruptCheck = bool (*)();
inline InterruptCheck interrupt_check = nullptr;
// Told the tasks done of a loop that reports progress; true asks to stop (the hook failed).
using ProgressHook = bool (*)(int64_t done, int64_t total);
inline ProgressHook progress_hook = nullptr;

class Job {
 public:
  // units: the progress total; by default one unit per task, counted as tasks finish. A loop whose
  // tasks report finer units (add_progress) gives their total and its tasks are not counted.
  Job(int64_t n_tasks, bool report, int64_t units = 0)
      : total_(units > 0 ? units : n_tasks), per_task_(units > 0 ? 0 : 1),
        report_(report && progress_hook != nullptr) {}

  // Any worker: throws Interrupted once the job is stopping. The calling thread also polls.
  void checkpoint(bool caller) {
    if (caller) poll();
    if (stop_.load(std::memory_order_relaxed)) throw Interrupted();
  }
  void task_done() { add(per_task_); }
  void add(int64_t units) { done_.fetch_add(units, std::memory_order_relaxed); }
  void stop() { stop_ = true; }
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }
  // The last report, when all tasks are done.
  void finish() {
    if (report_ && !stopping()) progress_hook(total_, total_);
  }

 private:
  void poll() {
    const auto now = poll_clock();
    if (now - last_ < std::chrono::milliseconds(50)) return;
    last_ = now;
    if ((interrupt_check && interrupt_check()) || (report_ && progress_hook(done_.load(), total_))) stop_ = true;
  }

  const int64_t total_, per_task_;
  const bool report_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> done_{0};
  std::chrono::nanoseconds last_ = poll_clock();
};

// The job the current thread works for, and whether it is the thread that entered the core.
struct JobSlot {
  Job* job = nullptr;
  bool caller = false;
};
inline thread_local JobSlot current_job;

// For long tasks: a point where a requested stop takes effect (a few ns when none is).
inline void checkpoint() {
  if (current_job.job) current_job.job->checkpoint(current_job.caller);
}

// For the tasks of a loop that counts finer units than tasks: units of this task are done.
inline void add_progress(int64_t units) {
  if (current_job.job) current_job.job->add(units);
}

}  // namespace pyinterp
