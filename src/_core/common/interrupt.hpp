// Stopping the core on a user's interrupt (Ctrl-C). The core knows nothing of Python: the
// extension installs a check ("is a signal pending?") that parallel_for's calling thread runs
// between tasks, at most every 50 ms. A positive check stops every worker before its next task and
// parallel_for throws Interrupted, which the extension turns back into the pending Python error.
#pragma once
#include <chrono>
#include <exception>

namespace pyinterp {

struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted"; }
};

using InterruptCheck = bool (*)();
inline InterruptCheck interrupt_check = nullptr;

// Runs the installed check when the last one is 50 ms old; call from the thread that entered the core.
class InterruptPoll {
 public:
  bool requested() {
    if (!interrupt_check) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(50)) return false;
    last_ = now;
    return interrupt_check();
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace pyinterp
