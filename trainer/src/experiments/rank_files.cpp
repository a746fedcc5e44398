// The rank files of a data-parallel run: NAME.rank0.jsonl, ... (distributed.h). Torch-free.

#include "recompdiag/trainer/distributed.h"

namespace recompdiag::trainer {

std::string rank_file_path(const std::string& out, int rank) {
  const std::string suffix = ".jsonl";
  const std::string tag = ".rank" + std::to_string(rank) + suffix;
  if (out.size() >= suffix.size() &&
      out.compare(out.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return out.substr(0, out.size() - suffix.size()) + tag;
  }
  return out + tag;
}

}  // namespace recompdiag::trainer
