// Regenerates the A/B fixture runs: make_compare_fixtures DIR (normally tests/fixtures).

#include <iostream>

#include "compare_fixtures.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_compare_fixtures DIR\n";
    return 2;
  }
  for (const auto& [name, options] : recompdiag::test::compare_fixtures()) {
    recompdiag::write_synthetic_run(std::string(argv[1]) + "/" + name, options);
  }
  return 0;
}
