#include "recompdiag/trainer/step_source.h"

#include <cstdio>
#include <sstream>

namespace recompdiag::trainer {

namespace {

std::string literal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";  // keep it a float literal
  return s;
}

}  // namespace

std::string format_weights(const std::vector<double>& weights) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < weights.size(); ++i) out << (i ? "," : "") << weights[i];
  out << ']';
  return out.str();
}

std::string step_source(const StepSpec& spec) {
  const bool baked = spec.constant_loss_weights.has_value();
  std::ostringstream s;
  s << "def " << kStepFunctionName
    << "(x: Tensor, y_cat: Tensor, y_bin: Tensor, sample_weight: Tensor, params: List[Tensor]"
    << (baked ? "" : ", loss_weights: Tensor") << ") -> Tuple[Tensor, Tensor, Tensor]:\n";
  s << "    h = torch.relu(torch.linear(x, params[0], params[1]))\n";
  s << "    h0 = torch.zeros([1, x.size(0), " << spec.hidden
    << "], dtype=x.dtype, device=x.device)\n";
  s << "    cell = [params[2], params[3], params[4], params[5]]\n";
  if (spec.rnn == "lstm") {
    s << "    seq, hn, cn = torch.lstm(h, [h0, h0], cell, True, 1, 0.0, True, False, True)\n";
  } else {
    s << "    seq, hn = torch.gru(h, h0, cell, True, 1, 0.0, True, False, True)\n";
  }
  s << "    logits = torch.linear(seq, params[6], params[7])\n";
  s << "    bin_logit = torch.linear(seq, params[8], params[9]).squeeze(-1)\n";
  s << "    ce = -torch.log_softmax(logits, -1).gather(-1, y_cat.unsqueeze(-1)).squeeze(-1)\n";
  s << "    bce = torch.binary_cross_entropy_with_logits(bin_logit, y_bin, None, None, 0)\n";
  s << "    cells = float(sample_weight.numel())\n";
  s << "    cat_loss = (ce * sample_weight).sum() / cells\n";
  s << "    bin_loss = (bce * sample_weight).sum() / cells\n";
  if (baked) {
    const auto& w = *spec.constant_loss_weights;
    s << "    loss = " << literal(w.at(0)) << " * cat_loss + " << literal(w.at(1))
      << " * bin_loss\n";
  } else {
    s << "    loss = loss_weights[0] * cat_loss + loss_weights[1] * bin_loss\n";
  }
  s << "    return loss, cat_loss, bin_loss\n";
  return s.str();
}

}  // namespace recompdiag::trainer
