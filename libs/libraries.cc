// Registration of the kernel libraries found at build time; the missing ones are listed with why.
#include "libs/libraries.h"

namespace stabfuzz::libs {
namespace {

[[maybe_unused]] void unavailable(Registry& r, const std::vector<LibraryTarget>& catalog,
                                  const std::string& reason) {
  for (const auto& t : catalog) r.add_unavailable({t.id, reason});
}

}  // namespace

void register_libraries(Registry& r) {
#ifdef STABFUZZ_HAVE_ONEDNN
  register_onednn(r);
#else
  unavailable(r, onednn_catalog(), "built without oneDNN: ci/bootstrap installs libdnnl-dev");
#endif
#ifdef STABFUZZ_HAVE_BLAS
  register_blas(r);
#else
  unavailable(r, blas_catalog(), "built without a CBLAS: ci/bootstrap installs libopenblas-dev");
  unavailable(r, mkl_catalog(), "built without a CBLAS: ci/bootstrap installs libopenblas-dev");
#endif
#ifdef STABFUZZ_HAVE_TORCH
  register_torch(r);
#else
  unavailable(r, torch_catalog(), "built without libtorch: ci/bootstrap --with-torch");
#endif
}

}  // namespace stabfuzz::libs
