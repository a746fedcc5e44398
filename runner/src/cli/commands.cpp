// The runner's command table (commands.def) read: which command a command line names, and the
// commands declared on an app.

#include "cli/commands.h"

#include <cstring>
#include <string>

namespace recompdiag::runner::cli {

namespace {

bool has_commands_flag(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    for (const char* flag : {"--a-cmd", "--b-cmd"}) {
      if (arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0) return true;
    }
  }
  return false;
}

// The groups' descriptions: a group has no row of its own in the table.
const char* group_description(const std::string& name) {
  if (name == "bench") return "Benchmarks that print figures";
  if (name == "history") {
    return "Run history: runs kept in a store (SQLite, or PostgreSQL), their series' change "
           "points found (Apache Otava for step times, exactly for counts), the commit and the "
           "guard named";
  }
  return "";
}

}  // namespace

const RunnerCommand* find_runner_command(int argc, char** argv) {
  if (argc < 2) return nullptr;
  for (const RunnerCommand& c : kRunnerCommands) {
    if (*c.group == '\0') {
      if (std::strcmp(argv[1], c.name) == 0) return &c;
    } else if (argc > 2 && std::strcmp(argv[1], c.group) == 0 &&
               std::strcmp(argv[2], c.name) == 0) {
      return &c;
    }
  }
  return nullptr;
}

bool runs_here(int argc, char** argv) {
  const RunnerCommand* c = find_runner_command(argc, argv);
  if (c == nullptr) {
    // A group of the runner's own without a command of it (`history --help`, `history nope`):
    // its help and its errors are here. `bench` is shared: the trainer adds most of its commands.
    if (argc < 2 || std::strcmp(argv[1], "bench") == 0) return false;
    for (const RunnerCommand& r : kRunnerCommands) {
      if (std::strcmp(argv[1], r.group) == 0) return true;
    }
    return false;
  }
  return c->when == RunsHere::kAlways || has_commands_flag(argc, argv);
}

std::string runner_command_list() {
  std::string out;
  for (const RunnerCommand& c : kRunnerCommands) {
    if (!out.empty()) out += ", ";
    if (*c.group != '\0') out += std::string(c.group) + " ";
    out += c.name;
    if (c.when == RunsHere::kWithCommands) out += " --a-cmd/--b-cmd";
  }
  return out;
}

CLI::App* add_group(CLI::App& app, const std::string& name) {
  for (CLI::App* group : app.get_subcommands([&](CLI::App* s) { return s->get_name() == name; })) {
    return group;
  }
  CLI::App* group = app.add_subcommand(name, group_description(name));
  group->require_subcommand(1);
  return group;
}

void add_runner_commands(CLI::App& app, CommandContext& ctx, bool with_commands) {
  for (const RunnerCommand& c : kRunnerCommands) {
    if (c.when == RunsHere::kWithCommands && !with_commands) continue;
    c.add(*c.group == '\0' ? app : *add_group(app, c.group), ctx);
  }
}

}  // namespace recompdiag::runner::cli
