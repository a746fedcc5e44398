// The guard-failure classifier on guards as torch 2.15 wrote them (TORCH_LOGS=recompiles over
// loops that provoke each cause; python/tests/test_compiled.py provokes them under the Monitor).
#include "recompdiag/core/recompile_cause.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace recompdiag;

namespace {

std::string cause_of(const std::string& guard) {
  const RecompileCause* c = classify_guard_failure(guard);
  return c == nullptr ? "" : c->key;
}

}  // namespace

TEST_CASE("recompile causes: each known guard failure names its cause") {
  CHECK(cause_of("2/0: self.param_groups[0]['lr'] == 0.01  # for group in self.param_groups:  # "
                 "optim/adam.py:230 in step") == "float_lr");
  CHECK(cause_of("L['lr'] == 0.001") == "float_lr");
  CHECK(cause_of("2/1: self.param_groups[0]['betas'][0] == 0.89  # (_dynamo/output_graph.py:3552 "
                 "in remove_tensorify_specialized_graphargs)") == "float_hyperparameter");
  CHECK(cause_of("0/0: fn._modules['1'].training == True  # return F.dropout(...)") ==
        "train_eval");
  CHECK(cause_of("0/0: GLOBAL_STATE changed: grad_mode ") == "grad_mode");
  CHECK(cause_of("GLOBAL_STATE changed: autocast ") == "global_state");
  CHECK(cause_of("0/1: tensor 'args[0]' size mismatch at index 0. expected 3, actual 4") ==
        "new_size");
  CHECK(cause_of("tensor 'x' dtype mismatch. expected Float, actual Double") == "dtype_change");
  CHECK(cause_of("tensor 'x' requires_grad mismatch. expected requires_grad=0") ==
        "requires_grad_change");
  CHECK(cause_of("0/0: Cache line invalidated because L['opt'] got deallocated") ==
        "rebuilt_object");
  CHECK(cause_of("___check_obj_id(L['self'], 140230)") == "rebuilt_object");
  CHECK(cause_of("1/0: ___stack0 == 1.2287790775299072  # if h.mean().item() > 0: h = h+1") ==
        "host_value");
  CHECK(cause_of("0/0: w[0] == 0.7  # def f(x): return x.sum()*w[0]") == "python_number");
  CHECK(cause_of("s == -0.5") == "python_number");
}

TEST_CASE("recompile causes: names are whole words, and unknown guards stay unclassified") {
  CHECK(cause_of("L['lr_scale'] == 0.5") == "python_number");  // a number, not the lr
  CHECK(cause_of("L['clr'] == 2") == "python_number");
  CHECK(cause_of("0/0: ___check_type_id(L['x'], 9412)") == "");
  CHECK(cause_of("") == "");
  CHECK(cause_of("L['flag'] == True") == "");  // a Python bool, neither number nor known flag
  CHECK(cause_of("len(L['xs']) == 2") == "");  // a length: a shape, not a Python number
  CHECK(cause_of("L['x'].size()[0] == 4") == "");
}

TEST_CASE("recompile causes: every cause has its words and a unique key") {
  std::set<std::string> keys;
  for (const RecompileCause& c : recompile_causes()) {
    CHECK(keys.insert(c.key).second);
    CHECK(std::string(c.what).size() > 10);
    CHECK(std::string(c.fix).size() > 10);
  }
  CHECK(keys.size() >= 10);
}
