// `stabfuzz monitor train|sweep|infer`: their flags, read into the monitor's settings.
#include <cstdio>
#include <filesystem>

#include "harness/cli/command.h"
#include "harness/cli/flags.h"
#include "harness/monitor/command.h"
#include "harness/monitor/infer.h"
#include "reports/findings.h"
#include "stabfuzz/errors.h"

#ifdef STABFUZZ_HAVE_ONNX
#include "harness/onnx/testdata.h"
#endif

namespace stabfuzz::cli {
namespace {

// `monitor train`, and `monitor sweep` (train's flags and the sweep's).
class MonitorCommand final : public Command {
 public:
  explicit MonitorCommand(bool sweep) : sweep_(sweep) {}
  const char* name() const override { return sweep_ ? "monitor sweep" : "monitor train"; }
  const char* summary() const override {
    return sweep_ ? "learning rates against CESTAC's digits: where training breaks"
                  : "train a small model under CESTAC: digits, polluting operation";
  }
  const char* usage() const override {
    return sweep_ ? "stabfuzz monitor sweep [--lr-grid A,B,..] [--wd-grid A,B,..] [--k-list "
                    "1,3,5,7] [--init-seeds N] [train's flags]"
                  : "stabfuzz monitor train [--model mlp|cnn] [--data digits|fashion-mnist] [--lr "
                    "X] [--steps N]\n"
                    "                       [--loss ce|mse|ce-naive] [--batch B] [--seed S] "
                    "[--out DIR]\n"
                    "  stabfuzz monitor train --model M.onnx [--data "
                    "digits|X.npy,Y.npy|IMAGES,LABELS] "
                    "[--optimizer sgd|adam] [train's flags]";
  }
  po::options_description options() override;
  int run(const Invocation&) override {
    a_.seed = a_.seed != 0 ? a_.seed : 1;
    return sweep_ ? monitor::sweep_command(a_) : monitor::train_command(a_);
  }

 private:
  bool sweep_;
  monitor::MonitorArgs a_;
};

po::options_description MonitorCommand::options() {
  po::options_description d("Options");
  flag::value(d, "model", &a_.model, "mlp", "mlp|cnn|M.onnx",
              "the model (mlp: features-32-10 tanh; cnn: 4 3x3 filters, tanh, linear; or an ONNX "
              "graph whose floating-point initializers are trained: docs/monitor.md)");
  flag::value(d, "data", &a_.data, "digits", "digits|fashion-mnist|X.npy,Y.npy|IMAGES,LABELS",
              "the dataset; with an ONNX graph also NumPy rows and integer labels or IDX image "
              "and label files (every fifth row is the test set)");
  if (!sweep_)
    flag::value(d, "optimizer", &a_.optimizer, "sgd", "sgd|adam",
                "with an ONNX graph: SGD (with --momentum) or Adam (betas 0.9, 0.999, eps 1e-8)");
  flag::value<double>(d, "lr", &a_.lr, 0.5, "X", "the learning rate");
  flag::value<int64_t>(d, "steps", &a_.steps, 200, "N", "training steps");
  flag::value(d, "loss", &a_.loss, "ce", "ce|mse|ce-naive",
              "cross-entropy, mean squared error on the logits, or the planted naive "
              "cross-entropy log(sum exp z) - z_y");
  flag::value<int64_t>(d, "batch", &a_.batch, 0, "B",
                       "batch size (0: full batch, gradient descent)");
  flag::value<double>(d, "momentum", &a_.momentum, 0.0, "M", "SGD momentum");
  flag::value<double>(d, "weight-decay", &a_.weight_decay, 0.0, "L",
                      "L2 weight decay: the gradient gains L w (every tensor, as torch.optim.SGD)");
  flag::value(d, "precision", &a_.precision, "f32", "f32|f64",
              "the scalar, Stoch<float, 3> or Stoch<double, 3> (native runs likewise)");
  flag::value<int64_t>(d, "sharpness-every", &a_.sharpness_every, 50, "M",
                       "sharpness lambda by power iteration every M steps (0: never)");
  flag::value<double>(d, "delta", &a_.delta, 2.0, "D",
                      "an operation pollutes when it loses D digits more than its conditioning "
                      "explains");
  flag::value<int64_t>(d, "max-train", &a_.max_train, 0, "N",
                       "use the first N training rows (0: all)");
  flag::seed(d, &a_.seed, 1, "seed of the initialisation and the CESTAC streams (0: 1)");
  flag::cancel_digits(d, &a_.cancel_digits);
  flag::out(d, &a_.out,
            sweep_ ? "output directory (default: runs/monitor-sweep-<model>-<data>-s<seed>)"
                   : "output directory (default: runs/monitor-<model>-<data>-lr<lr>-s<seed>)");
  if (sweep_) {
    flag::value(d, "lr-grid", &a_.lr_grid, "0.25,0.5,1,2,4", "A,B,..", "learning rates");
    flag::value(d, "wd-grid", &a_.wd_grid, "0", "A,B,..",
                "weight decays (L2); every learning rate runs with each: the lr x weight-decay "
                "table");
    flag::value(d, "k-list", &a_.k_list, "1,3,5,7", "K,..",
                "the k-trick's factors, update (lr k) (g / k)");
    flag::value<int>(d, "init-seeds", &a_.init_seeds, 4, "N",
                     "native runs with initialisation seeds seed+1..seed+N");
  }
  return d;
}

class InferCommand final : public Command {
 public:
  const char* name() const override { return "monitor infer"; }
  const char* summary() const override {
    return "a trained model's forward pass under CESTAC: digits, argmax flips";
  }
  const char* usage() const override {
    return "stabfuzz monitor infer --model FILE [--data D] [--precision f32|f64] [--seed S] "
           "[--out DIR]\n"
           "  stabfuzz monitor infer --model M.onnx --inputs DIR [--fuzz [--budget-s S]] "
           "[--precision f32|f64] [--seed S] [--out DIR]";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::value(d, "model", &a_.model, "FILE",
                "the model file (monitor train's model.txt), or an ONNX graph (.onnx: per-node "
                "digits, the polluting nodes; docs/monitor.md)");
    flag::value(d, "inputs", &a_.inputs, "DIR",
                "with an ONNX graph: its inputs, a test_data_set folder (input_0.pb, ...) or NumPy "
                "files (NAME.npy or input_0.npy, one per graph input)");
    flag::toggle(d, "fuzz", &a_.fuzz,
                 "with an ONNX graph: then search inputs of the same shapes that make a node "
                 "lose digits beyond the conditioning or give NaN/inf; each is written as a "
                 "test_data_set under OUT/fuzz/ (exit 1 when one is found)");
    flag::value<double>(d, "budget-s", &a_.budget_s, 10.0, "S", "with --fuzz: seconds of search");
    flag::value(d, "data", &a_.data, "digits|fashion-mnist",
                "the test set (default: the model file's dataset)");
    flag::value(d, "precision", &a_.precision, "f32|f64",
                "Stoch<float, 3> or Stoch<double, 3> (default: the model file's)");
    flag::seed(d, &a_.seed, 1, "seed of the CESTAC streams (0: 1)");
    flag::out(d, &a_.out, "output directory (default: runs/monitor-infer-<model>-<data>-s<seed>)");
    return d;
  }
  int run(const Invocation&) override {
    a_.seed = a_.seed != 0 ? a_.seed : 1;
    return monitor::infer_command(a_);
  }

 private:
  monitor::InferArgs a_;
};

// `monitor export`: a built-in model's initial weights as an ONNX graph.
class ExportCommand final : public Command {
 public:
  const char* name() const override { return "monitor export"; }
  const char* summary() const override {
    return "a built-in model's initial weights as an ONNX graph, to train with --model M.onnx";
  }
  const char* usage() const override {
    return "stabfuzz monitor export --model mlp|cnn [--data digits|fashion-mnist] [--precision "
           "f32|f64] [--seed S] --out M.onnx";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::value(d, "model", &a_.model, "mlp", "mlp|cnn", "the built-in model");
    flag::value(d, "data", &a_.data, "digits", "digits|fashion-mnist",
                "the dataset whose images set the input size");
    flag::value(d, "precision", &a_.precision, "f32", "f32|f64",
                "the weights' type (f32: rounded to float, as monitor train starts)");
    flag::seed(d, &a_.seed, 1, "seed of the initialisation (0: 1)");
    flag::value(d, "out", &a_.out, "M.onnx", "the graph to write (required)");
    return d;
  }
  int run(const Invocation&) override {
    a_.seed = a_.seed != 0 ? a_.seed : 1;
    return monitor::export_command(a_);
  }

 private:
  monitor::MonitorArgs a_;
};

// `monitor onnx-tests`: ONNX's backend tests through the interpreter (harness/onnx/testdata.h).
class OnnxTestsCommand final : public Command {
 public:
  const char* name() const override { return "monitor onnx-tests"; }
  const char* summary() const override {
    return "ONNX's backend tests through the ONNX interpreter: run, passed, skipped per operator";
  }
  const char* usage() const override {
    return "stabfuzz monitor onnx-tests [--data DIR] [--markdown FILE]";
  }
  po::options_description options() override {
    po::options_description d("Options");
    flag::value(d, "data", &data_, "DIR",
                "libonnx-testdata's data folder (default: its Debian location); its node, "
                "simple, pytorch-operator and pytorch-converted tests run");
    flag::value(d, "markdown", &markdown_, "FILE",
                "also write the per-operator table as Markdown (docs/results/onnx-tests.md)");
    return d;
  }
  int run(const Invocation&) override {
#ifdef STABFUZZ_HAVE_ONNX
    const std::string root = data_.empty() ? "/usr/share/libonnx-testdata/data" : data_;
    std::vector<std::string> roots;
    for (const char* sub : {"node", "simple", "pytorch-operator", "pytorch-converted"})
      if (std::filesystem::is_directory(root + "/" + sub)) roots.push_back(root + "/" + sub);
    if (roots.empty())
      throw InputError("monitor onnx-tests: no ONNX test data under " + root +
                       " (ci/bootstrap installs libonnx-testdata)");
    const auto r = onnx::run_testdata(roots);
    const std::string md = onnx::testdata_markdown(r);
    std::printf("%s", md.c_str());
    if (!markdown_.empty()) reports::write_text_atomically(markdown_, md);
    return r.failed ? 1 : 0;
#else
    throw InputError("monitor onnx-tests: built without ONNX (ci/bootstrap installs libonnx-dev)");
#endif
  }

 private:
  std::string data_, markdown_;
};

}  // namespace

std::unique_ptr<Command> make_monitor_onnx_tests_command() {
  return std::make_unique<OnnxTestsCommand>();
}

std::unique_ptr<Command> make_monitor_train_command() {
  return std::make_unique<MonitorCommand>(false);
}
std::unique_ptr<Command> make_monitor_sweep_command() {
  return std::make_unique<MonitorCommand>(true);
}
std::unique_ptr<Command> make_monitor_infer_command() { return std::make_unique<InferCommand>(); }
std::unique_ptr<Command> make_monitor_export_command() { return std::make_unique<ExportCommand>(); }

}  // namespace stabfuzz::cli
