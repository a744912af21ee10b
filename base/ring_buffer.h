#pragma once

// Fixed-capacity ring that overwrites its oldest element. The sampler keeps one per device, so
// memory is bounded by the configured window however long the exporter runs.

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace roceqos {

template <typename T>
class RingBuffer {
 public:
  /// `capacity` must be at least 1; it is fixed for the life of the buffer.
  explicit RingBuffer(size_t capacity) : slots_(capacity == 0 ? 1 : capacity) {}

  size_t capacity() const { return slots_.size(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == slots_.size(); }

  /// Appends `value` as the newest element; when full, the oldest element is overwritten.
  void Push(T value) {
    head_ = (head_ + 1) % slots_.size();
    slots_[head_] = std::move(value);
    if (size_ < slots_.size()) ++size_;
  }

  /// The newest element. Precondition: !empty().
  T& Newest() {
    assert(!empty());
    return slots_[head_];
  }
  const T& Newest() const {
    assert(!empty());
    return slots_[head_];
  }

  /// `age` 0 is the newest element, size()-1 the oldest. Precondition: age < size().
  const T& FromNewest(size_t age) const {
    assert(age < size_);
    return slots_[(head_ + slots_.size() - age) % slots_.size()];
  }

  /// Calls `visit(element)` from the newest to the oldest while it returns true.
  template <typename Visitor>
  void VisitNewestFirst(Visitor&& visit) const {
    for (size_t age = 0; age < size_; ++age) {
      if (!visit(FromNewest(age))) return;
    }
  }

  /// Forgets every element; the storage is kept.
  void Clear() {
    size_ = 0;
    head_ = slots_.size() - 1;
  }

 private:
  std::vector<T> slots_;
  size_t head_ = slots_.size() - 1;  // index of the newest element; Push advances first
  size_t size_ = 0;
};

}  // namespace roceqos
