/* The C boundary between stabfuzz and a plugin shared library, version 1.
 *
 * A plugin exports one C function, stabfuzz_plugin_v1, returning a table of targets. Only plain C
 * data crosses the boundary: no C++ type, allocator or exception, so a plugin built by another
 * compiler or standard library still loads. Inputs are the family's tensors as doubles (each
 * exactly a value of the dtype), results go back through the host's sink callbacks, so the
 * plugin never owns memory the host frees. Fields are only ever appended (target_size says how
 * large the plugin's stabfuzz_target is); a change of meaning is a new version and a new entry
 * symbol. stabfuzz/plugin.h fills this table from C++ templates; write it by hand only for
 * another language. */
#ifndef STABFUZZ_PLUGIN_ABI_H
#define STABFUZZ_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STABFUZZ_PLUGIN_ABI_VERSION 1u
#define STABFUZZ_PLUGIN_ENTRY "stabfuzz_plugin_v1"

/* dtype codes, as in stabfuzz::DType, and the mask bits of stabfuzz_target.dtypes. */
enum {
  STABFUZZ_F64 = 0,
  STABFUZZ_F32 = 1,
  STABFUZZ_F16 = 2,
  STABFUZZ_BF16 = 3,
  STABFUZZ_DTYPE_COUNT = 4
};
#define STABFUZZ_DTYPE_BIT(d) (1u << (d))
#define STABFUZZ_ALL_DTYPES 0xfu

typedef struct stabfuzz_tensor {
  const int64_t* shape;
  uint32_t ndim;
  const double* values; /* row-major, `size` of them */
  uint64_t size;
} stabfuzz_tensor;

typedef struct stabfuzz_param {
  const char* name; /* eps, causal, ...: absent ones take the family's default */
  double value;
} stabfuzz_param;

/* One operator call in the family's signature order. */
typedef struct stabfuzz_input {
  uint32_t dtype;
  uint32_t n_args;
  const stabfuzz_tensor* args;
  uint32_t n_params;
  const stabfuzz_param* params;
} stabfuzz_input;

/* A CESTAC run's seed and stream (it replays bit for bit from them) and its configuration. */
typedef struct stabfuzz_cestac_config {
  uint64_t seed;
  uint64_t stream;
  int32_t cancel_digits;
  int32_t detect;
} stabfuzz_cestac_config;

/* Where a call's results go. A call reports its outputs (native) or its CESTAC outputs and
 * instability sites (cestac), or one error; then it returns 0 (ok) or nonzero (error). */
typedef struct stabfuzz_sink {
  void* ctx;
  void (*outputs)(void* ctx, const double* values, uint64_t n);
  void (*cestac)(void* ctx, const double* mean, const double* digits, const uint8_t* noisy,
                 uint64_t n);
  /* kind: stabfuzz::cestac::Kind; address: where in the plugin the operation ran. */
  void (*instability)(void* ctx, uint32_t kind, uint64_t address, uint64_t count);
  void (*error)(void* ctx, const char* message);
} stabfuzz_sink;

typedef struct stabfuzz_target {
  const char* family;      /* an existing family: "softmax" */
  const char* variant;     /* "mylib/fast": the target's id is "softmax/mylib/fast" */
  const char* description; /* one line */
  uint32_t dtypes;         /* STABFUZZ_DTYPE_BIT mask */
  int32_t arity;           /* input tensors it reads; -1: whatever the family passes */
  int (*native)(const stabfuzz_input* in, const stabfuzz_sink* sink);
  /* NULL for a black-box target (no scalar type to swap). */
  int (*cestac)(const stabfuzz_input* in, const stabfuzz_cestac_config* config,
                const stabfuzz_sink* sink);
} stabfuzz_target;

typedef struct stabfuzz_plugin {
  uint32_t abi_version; /* STABFUZZ_PLUGIN_ABI_VERSION */
  uint32_t target_size; /* sizeof(stabfuzz_target) in the plugin */
  uint32_t kind_count;  /* instability kinds the plugin's CESTAC knows (cestac::kKindCount) */
  uint32_t n_targets;
  const stabfuzz_target* targets;
} stabfuzz_plugin;

typedef const stabfuzz_plugin* (*stabfuzz_plugin_entry_v1)(void);

#ifdef __cplusplus
}
#endif

#endif /* STABFUZZ_PLUGIN_ABI_H */
