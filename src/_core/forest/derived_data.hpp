// What readers derive from a forest's trees alone and keep with the forest for their later calls
// (TreeSHAP's summaries and leaf tables of each tree): a Forest's trees do not change once Python
// holds it, so what is kept stays true, and a copied (or moved) Forest starts without any. One
// object per type, made by the first call that asks; the object guards its own later changes.
#pragma once
#include <memory>
#include <mutex>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

namespace pyinterp {

class DerivedData {
 public:
  DerivedData() = default;
  DerivedData(const DerivedData&) {}
  DerivedData& operator=(const DerivedData&) {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_.clear();
    return *this;
  }

  // The T kept with the forest, made by make() (a std::shared_ptr<T>) on the first call. Calls on
  // other threads wait for it; a make() that throws (an interrupt) keeps nothing.
  template <class T, class Make>
  std::shared_ptr<T> get(Make make) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::type_index type(typeid(T));
    for (const auto& [kept, object] : objects_)
      if (kept == type) return std::static_pointer_cast<T>(object);
    std::shared_ptr<T> made = make();
    objects_.emplace_back(type, made);
    return made;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<std::type_index, std::shared_ptr<void>>> objects_;
};

}  // namespace pyinterp
