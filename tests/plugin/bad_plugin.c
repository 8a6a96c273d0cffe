/* Malformed plugins for the loader's refusals, one per BAD_* definition (tests/CMakeLists.txt). */
#include "stabfuzz/plugin_abi.h"

#if defined(BAD_INIT_CRASH) || defined(BAD_INIT_EXIT) || defined(BAD_INIT_STDOUT) || \
    defined(BAD_INIT_HANG)
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
/* Misbehaves while being loaded (a static constructor, run by dlopen). */
__attribute__((constructor)) static void misbehave_on_load(void) {
#if defined(BAD_INIT_CRASH)
  raise(SIGSEGV);
#elif defined(BAD_INIT_EXIT)
  exit(3);
#elif defined(BAD_INIT_STDOUT)
  printf("mylib 1.0 loaded\n");
  fflush(stdout);
#else
  for (;;) pause();
#endif
}
#endif

#ifndef BAD_NO_ENTRY
static int native(const stabfuzz_input* in, const stabfuzz_sink* sink) {
  (void)in;
  sink->error(sink->ctx, "not meant to run");
  return 1;
}

static const stabfuzz_target targets[] = {{
#ifdef BAD_FAMILY
    "no_such_family",
#else
    "softmax",
#endif
    "bad/plugin", "a malformed plugin",
#ifdef BAD_DTYPE
    0x30u,
#else
    STABFUZZ_ALL_DTYPES,
#endif
#ifdef BAD_ARITY
    2,
#else
    1,
#endif
    native, 0}};

__attribute__((visibility("default"))) const stabfuzz_plugin* stabfuzz_plugin_v1(void) {
  static stabfuzz_plugin table;
#ifdef BAD_ABI
  table.abi_version = 99;
#else
  table.abi_version = STABFUZZ_PLUGIN_ABI_VERSION;
#endif
  table.target_size = sizeof(stabfuzz_target);
  table.kind_count = 11; /* cestac::kKindCount of ABI version 1 */
  table.n_targets = 1;
  table.targets = targets;
  return &table;
}
#else
__attribute__((visibility("default"))) int not_a_stabfuzz_plugin(void) { return 0; }
#endif
