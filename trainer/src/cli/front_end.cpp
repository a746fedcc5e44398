// recompdiag: the front end. The commands that only read run files (`compare`, `bench compare`)
// and `ab` with two commands of the user's own (`--a-cmd`, `--b-cmd`) run here, in a process that
// never loads LibTorch; every other command replaces this process
// with recompdiag-trainer (exec: same pid, arguments, streams and exit code). A CI gate that runs
// `recompdiag compare` thus neither waits for LibTorch to load nor needs it installed.

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "recompdiag/trainer/exit_codes.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kTrainerName = "recompdiag-trainer";

// Whether the command line names a command that runs here: one that only reads run files, or
// `ab` with the user's commands (whose children load what they need themselves).
bool runs_here(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string first = argv[1];
  if (first == "ab") {
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      for (const char* flag : {"--a-cmd", "--b-cmd"}) {
        if (arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0) return true;
      }
    }
    return false;
  }
  return first == "compare" || (first == "bench" && argc > 2 && std::string(argv[2]) == "compare");
}

// Whether it names a command that trains (and so needs recompdiag-trainer).
bool needs_trainer(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string first = argv[1];
  return first == "train" || first == "ab" || (first == "bench" && !runs_here(argc, argv));
}

// The command named: "train", "bench overhead".
std::string command_name(int argc, char** argv) {
  std::string name = argv[1];
  if (name == "bench" && argc > 2) name += std::string(" ") + argv[2];
  return name;
}

// Where recompdiag-trainer is: beside this executable (the build tree), else in the libexec folder
// of the prefix it is installed in (`cmake --install` puts it there). Empty when /proc/self/exe
// cannot be read.
std::vector<fs::path> trainer_candidates() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path dir = self.parent_path();
  return {dir / kTrainerName,
          (dir / RECOMPDIAG_TRAINER_FROM_BIN / kTrainerName).lexically_normal()};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace recompdiag::trainer;
  using namespace recompdiag::trainer::cli;
  // As in recompdiag-trainer: past a file-size limit a write fails with one clear line.
  std::signal(SIGXFSZ, SIG_IGN);
  if (!runs_here(argc, argv)) {
    const std::vector<fs::path> candidates = trainer_candidates();
    for (const fs::path& trainer : candidates) {
      if (::access(trainer.c_str(), X_OK) != 0) continue;
      ::execv(trainer.c_str(), argv);
      std::cerr << "recompdiag: error: cannot run " << trainer.string() << ": "
                << std::strerror(errno) << "\n";
      return kExitRunFailed;
    }
    if (needs_trainer(argc, argv)) {
      std::cerr
          << "recompdiag: error: `" << command_name(argc, argv) << "` needs LibTorch, and "
          << kTrainerName << " is not installed ("
          << (candidates.empty()
                  ? std::string("cannot read /proc/self/exe")
                  : "looked for " + candidates[0].string() + " and " + candidates[1].string())
          << "); `compare`, `bench compare` and `ab --a-cmd ... --b-cmd ...` run without it\n";
      return kExitBadInput;
    }
  }
  // Help, the version, and any command line the trainer is not there to answer.
  CLI::App app;
  describe_app(app);
  CommandContext ctx;
  add_compare_command(app, ctx);
  if (runs_here(argc, argv)) add_ab_commands_command(app, ctx);
  CLI::App* bench = add_bench_group(app);
  add_bench_compare_command(*bench, ctx);
  return run_command_line(app, ctx, argc, argv);
}
