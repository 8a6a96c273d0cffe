// The one explicit list of operator families stabfuzz knows.
#include "targets/families.h"

namespace stabfuzz {

const Registry& default_registry() {
  static const Registry registry = [] {
    Registry r;
    r.add(targets::softmax_family());
    return r;
  }();
  return registry;
}

}  // namespace stabfuzz
