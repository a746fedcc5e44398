// recompdiag: the front end. The runner's commands (cli/commands.def: those that read run files,
// and `ab` with two commands of the user's own) run here, in a process that never loads LibTorch;
// every other command replaces this process with recompdiag-trainer (exec: same pid, arguments,
// streams and exit code). A CI gate that runs `recompdiag compare` thus neither waits for
// LibTorch to load nor needs it installed.

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
#include "recompdiag/runner/exit_codes.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kTrainerName = "recompdiag-trainer";

// The command named: "train", "bench overhead".
std::string command_name(int argc, char** argv) {
  std::string name = argv[1];
  if (name == "bench" && argc > 2) name += std::string(" ") + argv[2];
  return name;
}

// Whether the command line names a command at all (not --help, --version or nothing).
bool names_a_command(int argc, char** argv) { return argc > 1 && argv[1][0] != '-'; }

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
  using namespace recompdiag::runner;
  using namespace recompdiag::runner::cli;
  // As in recompdiag-trainer: past a file-size limit a write fails with one clear line.
  std::signal(SIGXFSZ, SIG_IGN);
  const bool here = runs_here(argc, argv);
  if (!here) {
    const std::vector<fs::path> candidates = trainer_candidates();
    for (const fs::path& trainer : candidates) {
      if (::access(trainer.c_str(), X_OK) != 0) continue;
      ::execv(trainer.c_str(), argv);
      std::cerr << "recompdiag: error: cannot run " << trainer.string() << ": "
                << std::strerror(errno) << "\n";
      return kExitRunFailed;
    }
    // Not here, and named: the trainer's (a runner command that is not here is the built-in
    // form of its name, `ab` without --a-cmd/--b-cmd).
    if (names_a_command(argc, argv)) {
      std::cerr << "recompdiag: error: `" << command_name(argc, argv) << "` needs LibTorch, and "
                << kTrainerName << " is not installed ("
                << (candidates.empty()
                        ? std::string("cannot read /proc/self/exe")
                        : "looked for " + candidates[0].string() + " and " + candidates[1].string())
                << "); these run without it: " << runner_command_list() << "\n";
      return kExitBadInput;
    }
  }
  // The runner's commands; help, the version, and any command line the trainer is not there to
  // answer (a built-in `ab` flag: the runner's `ab` refuses it with one line).
  CLI::App app;
  describe_app(app);
  CommandContext ctx;
  add_runner_commands(app, ctx, /*with_commands=*/true);
  return run_command_line(app, ctx, argc, argv);
}
