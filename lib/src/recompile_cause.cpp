// The known causes of torch.compile recompiles, each told by what its failed guard says.
#include "recompdiag/core/recompile_cause.h"

#include <cctype>
#include <string>

namespace recompdiag {
namespace {

bool has(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `word` as a whole name: "L['lr']" and "lr ==" have it, "lr_scale" and "clr" do not.
bool has_word(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !identifier_char(text[at - 1])) &&
        (end == text.size() || !identifier_char(text[end]))) {
      return true;
    }
  }
  return false;
}

// The guard's expression: without the "F/C: " prefix and the "  # source  # file" comments.
std::string_view expression(std::string_view guard) {
  const size_t comment = guard.find(" # ");
  if (comment != std::string_view::npos) guard = guard.substr(0, comment);
  const size_t colon = guard.find(": ");
  if (colon != std::string_view::npos && colon < 12 &&
      guard.find_first_not_of("0123456789/", 0) == colon) {
    guard = guard.substr(colon + 2);
  }
  while (!guard.empty() && std::isspace(static_cast<unsigned char>(guard.back()))) {
    guard.remove_suffix(1);
  }
  return guard;
}

// "... == 0.7", "... == 3": a guard that holds a Python number as a constant of the graph. Not
// a length or a size ("len(L['x']) == 2", "L['x'].size()[0] == 4"): those are shapes.
bool equals_number(std::string_view e) {
  if (has(e, "len(") || has(e, ".size()") || has(e, ".shape") || has(e, ".stride()")) {
    return false;
  }
  const size_t eq = e.rfind(" == ");
  if (eq == std::string_view::npos) return false;
  std::string_view v = e.substr(eq + 4);
  if (!v.empty() && v.front() == '-') v.remove_prefix(1);
  return !v.empty() && std::isdigit(static_cast<unsigned char>(v.front()));
}

// An optimizer hyperparameter by its key in a param group: "['lr']", "['betas'][0]".
bool group_key(std::string_view e, std::string_view key) {
  return has(e, "['" + std::string(key) + "']") && equals_number(e);
}

struct Matcher {
  RecompileCause cause;
  bool (*matches)(std::string_view expression);
};

// Tried in order: the specific before the general (an lr is a Python number too).
const Matcher kMatchers[] = {
    {{"float_lr",
      "the learning rate is a Python float, a constant of the compiled graph, and it changed (a "
      "scheduler, or a new phase)",
      "give the optimizer a tensor lr, torch.optim.Adam(params, lr=torch.tensor(0.01)), and let "
      "the scheduler change it in place",
      "pytorch/pytorch#107076"},
     [](std::string_view e) { return has_word(e, "lr") && equals_number(e); }},
    {{"float_hyperparameter",
      "an optimizer hyperparameter (betas, momentum, weight decay, eps) is a Python float and it "
      "changed",
      "hold it as a tensor (betas=(torch.tensor(0.9), torch.tensor(0.999)) on torch 2.5 or later) "
      "or keep it fixed",
      "pytorch/pytorch#133898"},
     [](std::string_view e) {
       for (const char* key : {"betas", "momentum", "weight_decay", "eps", "dampening"}) {
         if (group_key(e, key)) return true;
       }
       return false;
     }},
    {{"train_eval",
      "a module switched between train() and eval(): its training flag is a constant of the graph",
      "expect one compile per mode; if it keeps recompiling, evaluate less often or through a "
      "separate compiled (or uncompiled) module",
      "pytorch/pytorch#110803"},
     [](std::string_view e) { return has(e, ".training == "); }},
    {{"grad_mode",
      "grad mode changed: the compiled function was called under torch.no_grad() as well as with "
      "gradients",
      "compile the evaluation as its own function, or run it uncompiled; each grad mode compiles "
      "once",
      ""},
     [](std::string_view e) { return has(e, "GLOBAL_STATE changed: grad_mode"); }},
    {{"global_state",
      "a global torch setting changed between calls (autocast, deterministic algorithms, default "
      "dtype)",
      "set it once before the first step and keep it for the run", ""},
     [](std::string_view e) { return has(e, "GLOBAL_STATE changed"); }},
    {{"new_size",
      "a tensor came with a new size (a sequence length, an uneven last batch)",
      "mark the changing dimension dynamic (torch._dynamo.mark_dynamic(x, dim) or "
      "torch.compile(dynamic=True)), pad to a few fixed sizes, or drop the last batch "
      "(drop_last=True)",
      ""},
     [](std::string_view e) { return has(e, "size mismatch") || has(e, "stride mismatch"); }},
    {{"dtype_change", "a tensor came with another dtype",
      "cast the inputs once to one dtype before the step (or keep autocast on for every call)", ""},
     [](std::string_view e) { return has(e, "dtype mismatch"); }},
    {{"device_change", "a tensor came on another device",
      "move the model and every input to one device before the first step", ""},
     [](std::string_view e) { return has(e, "device mismatch"); }},
    {{"requires_grad_change", "an input's requires_grad changed between calls",
      "keep it fixed: detach inputs, or set requires_grad before the first call", ""},
     [](std::string_view e) { return has(e, "requires_grad mismatch"); }},
    {{"rebuilt_object",
      "an object the graph was built on was replaced (a rebuilt optimizer, module or closure)",
      "build the optimizer and module once and keep them: change hyperparameters in place in the "
      "param groups; if you must rebuild, migrate the optimizer state and expect one compile",
      ""},
     [](std::string_view e) {
       return has(e, "got deallocated") || has(e, "___check_obj_id") || has(e, "ID_MATCH");
     }},
    {{"host_value",
      "a value read on the host after a graph break (item(), a Python number from a tensor) "
      "became a constant of the next graph",
      "keep the decision on the device (torch.where) or let dynamo capture it "
      "(torch._dynamo.config.capture_scalar_outputs = True)",
      ""},
     [](std::string_view e) { return has(e, "___stack") && equals_number(e); }},
    {{"python_number",
      "a Python number (a loss weight, a scale) is a constant of the compiled graph and it changed",
      "hold it in a 0-dim tensor and update it in place (w.fill_(0.99)): the remedy of mode "
      "'mutable'",
      "pytorch/pytorch#163093"},
     equals_number},
};

}  // namespace

const std::vector<RecompileCause>& recompile_causes() {
  static const std::vector<RecompileCause> causes = [] {
    std::vector<RecompileCause> out;
    for (const Matcher& m : kMatchers) out.push_back(m.cause);
    return out;
  }();
  return causes;
}

const RecompileCause* classify_guard_failure(std::string_view guard) {
  const std::string_view e = expression(guard);
  for (const Matcher& m : kMatchers) {
    if (m.matches(e)) return &m.cause;
  }
  return nullptr;
}

}  // namespace recompdiag
