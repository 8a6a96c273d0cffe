// stabfuzz: command-line entry point. The only place that decides the process's exit code.
#include <iostream>

#include "harness/cli/command.h"
#include "harness/core/memory.h"
#include "stabfuzz/errors.h"

int main(int argc, char** argv) {
  stabfuzz::keep_freed_memory();
  try {
    if (auto code = stabfuzz::cli::libfuzzer_child(argc, argv)) return *code;
    return stabfuzz::cli::dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const stabfuzz::InputError& e) {
    std::cerr << "stabfuzz: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "stabfuzz: internal error: " << e.what() << "\n";
    return 3;
  }
}
