#include "recompdiag/trainer/model.h"

#include <cmath>
#include <sstream>
#include <type_traits>

namespace recompdiag::trainer {

namespace {

torch::Tensor uniform(std::vector<int64_t> shape, double bound) {
  return torch::empty(shape).uniform_(-bound, bound);
}

// The optimizer state map is keyed by std::string in LibTorch 1.x and by the TensorImpl pointer
// in 2.x; build whichever key this LibTorch uses.
template <class Key>
Key state_key(const torch::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    // LibTorch 1.x's own key: the TensorImpl address as an ostream prints it.
    std::ostringstream key;
    key << p.unsafeGetTensorImpl();
    return key.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}

using StateMap = std::remove_reference_t<decltype(std::declval<torch::optim::Adam&>().state())>;
using StateKey = typename StateMap::key_type;

}  // namespace

SeqModelImpl::SeqModelImpl(int input_size, int hidden, int num_classes, const std::string& rnn)
    : hidden_(hidden), lstm_(rnn == "lstm") {
  const int gates = rnn == "lstm" ? 4 : 3;
  // PyTorch's defaults: Linear weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)), recurrent
  // weights U(-1/sqrt(hidden), 1/sqrt(hidden)).
  const double in_bound = 1.0 / std::sqrt(input_size);
  const double h_bound = 1.0 / std::sqrt(hidden);
  ordered_ = {
      register_parameter("in_weight", uniform({hidden, input_size}, in_bound)),
      register_parameter("in_bias", uniform({hidden}, in_bound)),
      register_parameter("rnn_weight_ih", uniform({gates * hidden, hidden}, h_bound)),
      register_parameter("rnn_weight_hh", uniform({gates * hidden, hidden}, h_bound)),
      register_parameter("rnn_bias_ih", uniform({gates * hidden}, h_bound)),
      register_parameter("rnn_bias_hh", uniform({gates * hidden}, h_bound)),
      register_parameter("cat_weight", uniform({num_classes, hidden}, h_bound)),
      register_parameter("cat_bias", uniform({num_classes}, h_bound)),
      register_parameter("bin_weight", uniform({1, hidden}, h_bound)),
      register_parameter("bin_bias", uniform({1}, h_bound)),
  };
}

std::vector<torch::Tensor> SeqModelImpl::step_parameters() const { return ordered_; }

void SeqModelImpl::flatten_rnn_weights() {
  const torch::Tensor& w_ih = ordered_[2];
  if (!w_ih.is_cuda() || !torch::cuda::cudnn_is_available()) return;
  torch::NoGradGuard no_grad;
  // cuDNN's RNN modes: LSTM 2, GRU 3. Four weights a layer (both biases): stride 4. The input
  // projection's output (`hidden`) is the cell's input size.
  constexpr int64_t kCudnnLstm = 2;
  constexpr int64_t kCudnnGru = 3;
  at::_cudnn_rnn_flatten_weight({ordered_[2], ordered_[3], ordered_[4], ordered_[5]}, 4, hidden_,
                                lstm_ ? kCudnnLstm : kCudnnGru, hidden_, /*proj_size=*/0,
                                /*num_layers=*/1, /*batch_first=*/true, /*bidirectional=*/false);
}

std::vector<Batch> make_synthetic_batches(const TrainConfig& c, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  // The task's hidden rule, drawn once: class = argmax over classes of a projection of the
  // current and previous input; binary = sign of another projection of both.
  torch::Tensor class_proj = torch::randn({2 * c.input_size, c.num_classes});
  torch::Tensor bin_proj = torch::randn({2 * c.input_size});
  std::vector<Batch> batches;
  batches.reserve(static_cast<size_t>(c.steps_per_epoch));
  for (int i = 0; i < c.steps_per_epoch; ++i) {
    torch::Tensor x = torch::randn({c.batch_size, c.seq_len, c.input_size});
    torch::Tensor prev = torch::cat(
        {torch::zeros({c.batch_size, 1, c.input_size}), x.slice(1, 0, c.seq_len - 1)}, 1);
    torch::Tensor both = torch::cat({x, prev}, 2);
    torch::Tensor y_cat = both.matmul(class_proj).argmax(-1);
    torch::Tensor y_bin = (both.matmul(bin_proj) > 0).to(torch::kFloat);
    // Valid lengths in [T/2, T]; padding gets weight 0, valid steps a weight in [0.5, 1.5].
    const int64_t min_len = std::max<int64_t>(1, c.seq_len / 2);
    torch::Tensor lengths = torch::randint(min_len, c.seq_len + 1, {c.batch_size, 1});
    torch::Tensor valid = torch::arange(c.seq_len).unsqueeze(0).lt(lengths).to(torch::kFloat);
    torch::Tensor weight = valid * (0.5 + torch::rand({c.batch_size, c.seq_len}));
    batches.push_back({x.to(device), y_cat.to(device), y_bin.to(device), weight.to(device)});
  }
  return batches;
}

CompiledStep::CompiledStep(const StepSpec& spec)
    : spec_(spec), unit_(torch::jit::compile(step_source(spec))) {
  function_ = &unit_->get_function(kStepFunctionName);
  stack_.reserve(6);
}

StepLosses CompiledStep::run(const Batch& batch, const std::vector<torch::Tensor>& params,
                             const torch::Tensor* loss_weights) {
  TORCH_CHECK((loss_weights != nullptr) != spec_.constant_loss_weights.has_value(),
              "loss weights must be passed exactly when they are not compiled in");
  stack_.clear();
  stack_.emplace_back(batch.x);
  stack_.emplace_back(batch.y_cat);
  stack_.emplace_back(batch.y_bin);
  stack_.emplace_back(batch.sample_weight);
  stack_.emplace_back(c10::List<torch::Tensor>(params));
  if (loss_weights) stack_.emplace_back(*loss_weights);
  c10::IValue out = (*function_)(stack_);
  const auto& elems = out.toTupleRef().elements();
  return {elems[0].toTensor(), elems[1].toTensor(), elems[2].toTensor()};
}

void clip_gradients(const std::vector<torch::Tensor>& params, double clip) {
  torch::NoGradGuard no_grad;
  for (const torch::Tensor& p : params) {
    if (p.grad().defined()) p.mutable_grad().clamp_(-clip, clip);
  }
}

std::unique_ptr<torch::optim::Adam> make_adam(const std::vector<torch::Tensor>& params, double lr,
                                              double epsilon) {
  return std::make_unique<torch::optim::Adam>(
      params, torch::optim::AdamOptions(lr).betas(std::make_tuple(0.9, 0.999)).eps(epsilon));
}

void migrate_adam_state(const torch::optim::Adam& from, torch::optim::Adam& to,
                        const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  for (const torch::Tensor& p : params) {
    auto it = from.state().find(state_key<StateKey>(p));
    if (it == from.state().end()) continue;
    const auto& old = static_cast<const torch::optim::AdamParamState&>(*it->second);
    auto moved = std::make_unique<torch::optim::AdamParamState>();
    moved->step(old.step());
    moved->exp_avg(old.exp_avg().to(p.device(), p.scalar_type(), false, true));
    moved->exp_avg_sq(old.exp_avg_sq().to(p.device(), p.scalar_type(), false, true));
    if (old.max_exp_avg_sq().defined()) {
      moved->max_exp_avg_sq(old.max_exp_avg_sq().to(p.device(), p.scalar_type(), false, true));
    }
    to.state()[state_key<StateKey>(p)] = std::move(moved);
  }
}

int64_t adam_step_of(const torch::optim::Adam& adam, const torch::Tensor& param) {
  auto it = adam.state().find(state_key<StateKey>(param));
  if (it == adam.state().end()) return -1;
  return static_cast<const torch::optim::AdamParamState&>(*it->second).step();
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

double current_lr(const torch::optim::Optimizer& optimizer) {
  return optimizer.param_groups().front().options().get_lr();
}

}  // namespace recompdiag::trainer
