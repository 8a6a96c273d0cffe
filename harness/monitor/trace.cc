// Names of the monitor's enums and the file:line form of an operation's site.
#include "harness/monitor/trace.h"

#include "harness/monitor/model.h"
#include "stabfuzz/errors.h"

namespace stabfuzz::monitor {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::forward:
      return "forward";
    case Phase::backward:
      return "backward";
    case Phase::update:
      return "update";
  }
  return "?";
}

std::string Trace::site_string(Site s) {
  std::string f = s.file;
  while (f.rfind("./", 0) == 0) f.erase(0, 2);
  return f + ":" + std::to_string(s.line);
}

ModelKind parse_model(const std::string& s) {
  if (s == "mlp") return ModelKind::mlp;
  if (s == "cnn") return ModelKind::cnn;
  throw InputError("unknown model '" + s + "' (mlp, cnn)");
}

LossKind parse_loss(const std::string& s) {
  if (s == "ce") return LossKind::ce;
  if (s == "mse") return LossKind::mse;
  if (s == "ce-naive") return LossKind::ce_naive;
  throw InputError("unknown loss '" + s + "' (ce, mse, ce-naive)");
}

const char* model_name(ModelKind k) { return k == ModelKind::mlp ? "mlp" : "cnn"; }

const char* loss_name(LossKind k) {
  return k == LossKind::ce ? "ce" : k == LossKind::mse ? "mse" : "ce-naive";
}

}  // namespace stabfuzz::monitor
