// KernelAttr: the input and output dtypes a kernel is registered for (MindSpore style).
#pragma once

#include <string>
#include <vector>

#include "opforge/type_id.h"

namespace opforge {

class KernelAttr {
 public:
  KernelAttr& AddInputAttr(TypeId t) {
    inputs_.push_back(t);
    return *this;
  }
  KernelAttr& AddOutputAttr(TypeId t) {
    outputs_.push_back(t);
    return *this;
  }
  // Any number of inputs, all of the first input's type (variadic ops such as AddN).
  KernelAttr& AddAllSameAttr(bool all_same) {
    all_same_ = all_same;
    return *this;
  }

  const std::vector<int32_t>& inputs() const { return inputs_; }
  const std::vector<int32_t>& outputs() const { return outputs_; }
  bool all_same() const { return all_same_; }

  std::string ToString() const {
    std::string s = "KernelAttr(inputs=[";
    for (size_t i = 0; i < inputs_.size(); ++i) s += (i ? ", " : "") + std::string(TypeIdName(inputs_[i]));
    s += "], outputs=[";
    for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + std::string(TypeIdName(outputs_[i]));
    return s + (all_same_ ? "], all_same=True)" : "])");
  }

 private:
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
  bool all_same_ = false;
};

}  // namespace opforge
