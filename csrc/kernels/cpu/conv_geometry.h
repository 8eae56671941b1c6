// The Window2D of a Conv2D / pooling kernel, from its attrs and metas, checked against them.
#pragma once

#include <string>
#include <vector>

#include "opforge/functors/conv.h"
#include "opforge/kernel.h"

namespace opforge {

// x: the input [n, c, h, w]; y: the output [n, oc, oh, ow] (for the grads: the forward's output).
// `conv`: Conv2D's attrs (kernel_size (kh, kw), stride, dilation, pad, pad_mode, group), else
// pooling's (kernel_size and strides (1, 1, h, w), pad_mode).
inline Window2D MakeWindow2D(const KernelContext& ctx, const std::vector<int64_t>& x, const std::vector<int64_t>& y,
                             bool conv) {
  const std::string& op = ctx.op_name();
  OPF_CHECK(x.size() == 4 && y.size() == 4, "For '" << op << "', the tensors must be 4-D (NCHW), but got "
                                                    << ShapeToString(x) << " and " << ShapeToString(y) << ".");
  Window2D g{};
  g.n = x[0];
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.oc = y[1];
  g.oh = y[2];
  g.ow = y[3];
  const std::vector<int64_t> k = ctx.GetInts("kernel_size");
  const std::vector<int64_t> s = ctx.GetInts(conv ? "stride" : "strides");
  OPF_CHECK((k.size() == 2 || k.size() == 4) && s.size() == 4,
            "For '" << op << "', the attrs 'kernel_size' and 'stride(s)' must hold 2 (or 4) and 4 ints, but got "
                    << ShapeToString(k) << " and " << ShapeToString(s) << ".");
  g.kh = k[k.size() - 2];
  g.kw = k[k.size() - 1];
  g.sh = s[2];
  g.sw = s[3];
  g.dh = g.dw = 1;
  g.group = 1;
  if (conv) {
    const std::vector<int64_t> d = ctx.GetInts("dilation");
    OPF_CHECK(d.size() == 4, "For '" << op << "', the attr 'dilation' must hold 4 ints, but got " << ShapeToString(d));
    g.dh = d[2];
    g.dw = d[3];
    g.group = ctx.GetInt("group");
  }
  OPF_CHECK(g.kh > 0 && g.kw > 0 && g.sh > 0 && g.sw > 0 && g.dh > 0 && g.dw > 0 && g.group > 0,
            "For '" << op << "', the kernel size, strides, dilations and group must be positive.");
  // Window arithmetic (dilation * (kernel - 1), (out - 1) * stride) must not overflow int64.
  constexpr int64_t kMaxWindowAttr = int64_t{1} << 31;
  OPF_CHECK(g.kh <= kMaxWindowAttr && g.kw <= kMaxWindowAttr && g.sh <= kMaxWindowAttr && g.sw <= kMaxWindowAttr &&
                g.dh <= kMaxWindowAttr && g.dw <= kMaxWindowAttr,
            "For '" << op << "', the kernel size, strides and dilations must be at most " << kMaxWindowAttr
                    << ", but got kernel [" << g.kh << ", " << g.kw << "], strides [" << g.sh << ", " << g.sw
                    << "], dilations [" << g.dh << ", " << g.dw << "].");
  OPF_CHECK(g.c % g.group == 0 && g.oc % g.group == 0,
            "For '" << op << "', the channels " << g.c << " and " << g.oc << " must be divisible by group " << g.group
                    << ".");
  std::string mode = ctx.GetStr("pad_mode");
  for (auto& ch : mode) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  if (mode == "pad") {
    const std::vector<int64_t> p = ctx.GetInts("pad");
    OPF_CHECK(p.size() == 4, "For '" << op << "', the attr 'pad' must hold 4 ints, but got " << ShapeToString(p));
    g.pt = p[0];
    g.pl = p[2];
  } else if (mode == "same") {
    g.pt = SamePadBefore(g.h, g.oh, g.kh, g.sh, g.dh);
    g.pl = SamePadBefore(g.w, g.ow, g.kw, g.sw, g.dw);
  } else {
    OPF_CHECK(mode == "valid", "For '" << op << "', the attr 'pad_mode' must be valid, same or pad, but got '"
                                       << mode << "'.");
    g.pt = g.pl = 0;
  }
  // The output must lie where the windows say it does.
  auto expect = [&](int64_t size, int64_t kernel, int64_t stride, int64_t dil, int64_t before, int64_t after) {
    const int64_t span = dil * (kernel - 1) + 1;
    if (mode == "same") return (size + stride - 1) / stride;
    if (mode == "valid") return size >= span ? (size - span) / stride + 1 : int64_t{0};
    return (size + before + after - span) / stride + 1;
  };
  int64_t pb = 0, pr = 0;
  if (mode == "pad") {
    const std::vector<int64_t> p = ctx.GetInts("pad");
    pb = p[1];
    pr = p[3];
  }
  const int64_t eh = expect(g.h, g.kh, g.sh, g.dh, g.pt, pb), ew = expect(g.w, g.kw, g.sw, g.dw, g.pl, pr);
  OPF_CHECK(y[0] == g.n && g.oh == eh && g.ow == ew,
            "For '" << op << "', the output shape " << ShapeToString(y) << " does not match the input shape "
                    << ShapeToString(x) << " and the attrs (expected [" << g.n << ", " << g.oc << ", " << eh << ", "
                    << ew << "]).");
  return g;
}

}  // namespace opforge
