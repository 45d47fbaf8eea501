// The process's pool of helper threads for parallel_for. Starting and joining a std::thread costs
// ~50 us on the machines measured, as much as the whole work of a small loop (TreeSHAP of 100 rows
// on 50 shallow trees runs six loops in 0.2 ms), so helpers are started once and wait for loops.
// A loop's caller queues its helpers and does its own share; when it is done, helpers still queued
// are withdrawn (the caller took their tasks) and it waits only for those that started, so a loop
// run inside a pool thread's task never waits on a thread that is busy elsewhere. Helpers spin a
// short while before sleeping, since loops come in quick succession. After fork() the child gets a
// new pool: the parent's threads do not exist there.
#pragma once
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace pyinterp {

class ThreadPool {
 public:
  // Runs work(w) for every w in [1, n_helpers] on pool threads (as many as start) and work(0) on
  // the caller; returns when every helper that started has returned. work must not throw, and
  // work(0) must leave no task for the helpers to do.
  template <class Work>
  static void run(int n_helpers, Work& work) {
    Batch batch{[](void* w, int worker) { (*static_cast<Work*>(w))(worker); }, &work};
    ThreadPool& pool = instance();
    pool.submit(batch, n_helpers);
    work(0);
    pool.finish(batch);
  }

 private:
  struct Batch {
    void (*call)(void*, int);
    void* work;
    std::atomic<int> pending{0};  // helpers queued or running
  };
  struct Helper {
    Batch* batch;
    int worker;
  };
  static constexpr auto kSpin = std::chrono::microseconds(100);

  void submit(Batch& batch, int n_helpers) {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      for (int w = 1; w <= n_helpers; ++w) queue_.push_back({&batch, w});
    } catch (...) {  // out of memory: nothing of this loop stays queued
      withdraw(batch);
      throw;
    }
    batch.pending = n_helpers;
    queued_.fetch_add(n_helpers, std::memory_order_release);
    while (n_threads_ < n_helpers) {
      try {
        std::thread([this] { serve(); }).detach();
      } catch (const std::exception&) {
        break;  // the system refused another thread: those running (and the caller) do the work
      }
      ++n_threads_;
    }
    if (n_helpers == 1) {
      wake_.notify_one();
    } else {
      wake_.notify_all();
    }
  }

  // Removes the batch's helpers still queued (mutex_ held); returns how many.
  int withdraw(const Batch& batch) {
    const auto before = static_cast<int>(queue_.size());
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [&](const Helper& h) { return h.batch == &batch; }),
                 queue_.end());
    return before - static_cast<int>(queue_.size());
  }

  void finish(Batch& batch) {
    std::unique_lock<std::mutex> lock(mutex_);
    const int withdrawn = withdraw(batch);
    queued_.fetch_sub(withdrawn, std::memory_order_relaxed);
    if (batch.pending.fetch_sub(withdrawn) == withdrawn) return;
    lock.unlock();
    const auto until = std::chrono::steady_clock::now() + kSpin;
    while (batch.pending.load(std::memory_order_acquire) != 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    lock.lock();
    done_.wait(lock, [&] { return batch.pending.load(std::memory_order_acquire) == 0; });
  }

  void serve() {
    for (;;) {
      const auto until = std::chrono::steady_clock::now() + kSpin;
      while (queued_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      Helper helper;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return !queue_.empty(); });
        helper = queue_.front();
        queue_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      Batch& batch = *helper.batch;
      batch.call(batch.work, helper.worker);
      // The caller may return as soon as pending reaches 0: batch is not touched after it.
      if (batch.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  // One pool per process, never destroyed (its threads outlive static destruction at exit); a
  // forked child leaves the parent's to lie unused and makes its own.
  static ThreadPool& instance() {
    static const bool registered = [] {
      pthread_atfork([] { made_mutex().lock(); }, [] { made_mutex().unlock(); },
                     [] {
                       retired() = current();
                       current() = nullptr;
                       made_mutex().unlock();
                     });
      return true;
    }();
    (void)registered;
    std::lock_guard<std::mutex> lock(made_mutex());
    if (current() == nullptr) current() = new ThreadPool;
    return *current();
  }
  static std::mutex& made_mutex() {
    static std::mutex m;
    return m;
  }
  static ThreadPool*& current() {
    static ThreadPool* pool = nullptr;
    return pool;
  }
  static ThreadPool*& retired() {  // still reachable, so leak checkers do not report it
    static ThreadPool* pool = nullptr;
    return pool;
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Helper> queue_;
  std::atomic<int64_t> queued_{0};
  int n_threads_ = 0;
};

}  // namespace pyinterp
