// Mock LibTorch/c10d declarations for fast lit tests.  The names, namespaces
// and signatures mirror LibTorch 1.13 closely enough for the checks (which
// match on qualified names); every check also has a RUN line on the real headers.
#pragma once
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace c10 {
template <class T> class intrusive_ptr {
public:
  intrusive_ptr() = default;
  explicit intrusive_ptr(T *p) : p_(p) {}
  template <class U> intrusive_ptr(const intrusive_ptr<U> &o) : p_(o.get()) {}
  T *operator->() const { return p_; }
  T &operator*() const { return *p_; }
  T *get() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

private:
  T *p_ = nullptr;
};
template <class T, class... A> intrusive_ptr<T> make_intrusive(A &&...a) {
  return intrusive_ptr<T>(new T(static_cast<A &&>(a)...));
}
struct IntArrayRef {
  IntArrayRef(std::initializer_list<long>) {}
  IntArrayRef(const std::vector<long> &) {}
  long operator[](size_t) const { return 0; }
  size_t size() const { return 0; }
};
} // namespace c10

namespace at {
enum class ScalarType { Float, Long };
class Tensor {
public:
  Tensor() = default;
  template <class T> T item() const { return T(); }
  c10::IntArrayRef sizes() const { return {0}; }
  long size(long) const { return 0; }
  long numel() const { return 0; }
  long dim() const { return 0; }
  bool defined() const { return true; }
  Tensor grad() const { return {}; }
  Tensor mean() const { return {}; }
  Tensor sum() const { return {}; }
  Tensor view(c10::IntArrayRef) const { return {}; }
  Tensor reshape(c10::IntArrayRef) const { return {}; }
  Tensor flatten(long start_dim = 0, long end_dim = -1) const { return {}; }
  Tensor unsqueeze(long dim) const { return {}; }
  Tensor squeeze(long dim) const { return {}; }
  Tensor to(int) const { return {}; }
  Tensor detach() const { return {}; }
  Tensor clone() const { return {}; }
  void backward() const {}
  Tensor operator+(const Tensor &) const { return {}; }
  Tensor operator*(const Tensor &) const { return {}; }
  Tensor operator/(double) const { return {}; }
  Tensor &operator/=(double) { return *this; }
};
} // namespace at
