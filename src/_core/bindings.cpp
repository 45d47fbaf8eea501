// The extension module: the only translation units that know about Python are bindings.cpp and
// bind_*.cpp; they convert numpy arrays to core views and release the GIL around every core call.
#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "bindings.hpp"
#include "common/job_control.hpp"

namespace {

namespace py = pybind11;

std::thread::id main_thread;
// The Python error a signal handler raised while the core ran (KeyboardInterrupt for Ctrl-C).
std::unique_ptr<py::error_already_set> pending;

// Set while Python stops the core's work in its worker threads (see stop_worker_threads).
std::atomic<bool> stop_workers{false};

// Python runs signal handlers only in its main thread, so other threads never take the GIL to look:
// their loops stop when the main thread, interrupted, asks them to.
bool signal_pending() {
  if (std::this_thread::get_id() != main_thread) return stop_workers.load(std::memory_order_relaxed);
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  pending = std::make_unique<py::error_already_set>();
  return true;
}

// The Python callable told the progress of the core's loops, and the thread that installed it
// (only the loops that thread runs report to it).
// (Never destroyed: it may outlive the interpreter.)
py::object& progress_callback = *new py::object();
std::thread::id progress_thread;

bool report_progress(int64_t done, int64_t total) {
  if (std::this_thread::get_id() != progress_thread) return false;
  py::gil_scoped_acquire gil;
  if (!progress_callback || progress_callback.is_none()) return false;
  try {
    progress_callback(done, total);
  } catch (py::error_already_set& e) {
    pending = std::make_unique<py::error_already_set>(std::move(e));
    return true;
  }
  return false;
}

// pickle's protocols 0 and 1 (and a direct call of object.__reduce__) rebuild an object through
// object.__new__, which a pybind11 class does not survive: the interpreter aborts on loading. Every
// class and enum of the module reduces itself as protocol 2 does (copyreg.__newobj__, then
// __setstate__) whatever the protocol, so each one round-trips or, if it has no pickled state,
// raises pickle's "cannot pickle" TypeError. Both methods are defined: object.__reduce_ex__ calls
// an overridden __reduce__.
void reduce_at_protocol_2_or_above(py::module_& m) {
  const py::object newobj = py::module_::import("copyreg").attr("__newobj__");
  const py::object object_getstate = py::module_::import("builtins").attr("object").attr("__getstate__");
  const py::type pybind11_type = py::type::of(m.attr("Forest"));  // the metaclass of its classes
  for (const auto& item : m.attr("__dict__").cast<py::dict>()) {
    const py::handle cls = item.second;
    if (!py::isinstance<py::type>(cls) || !py::isinstance(cls, pybind11_type)) continue;
    const bool has_state = cls.attr("__getstate__").ptr() != object_getstate.ptr();
    const std::string name = item.first.cast<std::string>();
    const auto reduce = [newobj, has_state, name](py::handle self) -> py::tuple {
      if (!has_state) throw py::type_error("cannot pickle '" + name + "' object");
      return py::make_tuple(newobj, py::make_tuple(py::type::handle_of(self)), self.attr("__getstate__")());
    };
    py::setattr(cls, "__reduce__", py::cpp_function(reduce, py::name("__reduce__"), py::is_method(cls)));
    py::setattr(cls, "__reduce_ex__",
                py::cpp_function([reduce](py::handle self, int) { return reduce(self); },
                                 py::name("__reduce_ex__"), py::is_method(cls), py::arg("protocol")));
  }
}

void raise_pending() {
  if (!pending) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    return;
  }
  std::unique_ptr<py::error_already_set> error = std::move(pending);
  error->restore();
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "pyinterp's C++ core: random-forest engine and the measures computed from it.";
  const py::module_ threading = py::module_::import("threading");
  if (threading.attr("current_thread")().is(threading.attr("main_thread")())) {
    main_thread = std::this_thread::get_id();
    pyinterp::interrupt_check = signal_pending;
  }
  py::register_exception_translator([](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const pyinterp::Interrupted&) {
      raise_pending();
    }
  });
  pyinterp::progress_hook = report_progress;
  m.def(
      "set_progress_callback",
      [](py::object callback) {
        progress_callback = std::move(callback);
        progress_thread = std::this_thread::get_id();
      },
      py::arg("callback"),
      "callback(done, total) hears of the tasks done by the core's loops that report progress (trees, "
      "restarts, repeats), from the thread that set it, about every 50 ms; None: no reports. An exception "
      "it raises stops the computation and is raised from it.");
  m.def(
      "stop_worker_threads", [](bool stop) { stop_workers = stop; }, py::arg("stop"),
      "True: the core's loops running in threads other than the main one stop at their next checkpoint "
      "(KeyboardInterrupt in those threads), as the main thread's do on Ctrl-C; False: they run again.");
  pyinterp::bind_forest(m);
  pyinterp::bind_blocks(m);
  pyinterp::bind_importance(m);
  pyinterp::bind_interactions(m);
  pyinterp::bind_skinny(m);
  pyinterp::bind_dictionary(m);
  reduce_at_protocol_2_or_above(m);
}
