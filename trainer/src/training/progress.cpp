#include "recompdiag/trainer/progress.h"

#include <unistd.h>

namespace recompdiag::trainer {

TerminalProgress::TerminalProgress(std::FILE* out)
    : out_(out), enabled_(out != nullptr && ::isatty(::fileno(out))) {}

void TerminalProgress::on_epoch_end(const EpochProgress& p) {
  if (!enabled_) return;
  std::fprintf(out_,
               "%s: phase %d epoch %d/%d - step %lld - loss %.4f - cat %.4f - bin %.4f - lr %g - "
               "%.2f ms/step\n",
               p.mode, p.phase, p.epoch + 1, p.epochs, static_cast<long long>(p.steps_done), p.loss,
               p.cat_loss, p.bin_loss, p.lr, p.ms_per_step);
  std::fflush(out_);
}

}  // namespace recompdiag::trainer
