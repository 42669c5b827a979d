// charlm_bench: time of one training step (forward + backward of the mean
// loss, no optimizer) of the character transformer at a few widths, as
// step time, tokens/s and GFLOP/s:
//   - on the CPU (Eigen, --threads threads);
//   - on the GPU (cuBLAS + our kernels) when this build has CUDA and a GPU
//     is present, next to PyTorch eager on the same GPU in the same run
//     (experiments/bench/charlm_torch_ref.py, the same configuration, parameters
//     and tokens; its loss and gradients are compared with ours). Without
//     torch the table says "torch not installed" and the rest still runs.
//
//   bazel run //experiments/bench:charlm_bench
//   bazel run //experiments/bench:charlm_bench -- --n_embd=64,128 --threads=2
//   bazel run --config=cuda //experiments/bench:charlm_bench   # GPU machine
//
// stdout: a Markdown table, one row per (device, n_embd): wall time per
// step (median), the process CPU time per step on the CPU (the compute time
// with --threads=1 even on a busy machine) or the CUDA-event device time on
// the GPU, and the torch reference; --json_out also writes the rows as JSON.
// Exit 0 on success, 2 on bad flags, 1 when a measurement fails.
#include <sys/wait.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/relative_l2.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "device/device_buffer.h"
#include "experiments/job/local_job.h"
#include "models/charlm_shape_flags.h"
#include "models/transformer/charlm.h"
#include "models/transformer/cuda/cuda_charlm.h"

ABSL_FLAG(std::vector<std::string>, n_embd,
          std::vector<std::string>({"64", "128", "256"}),
          "Widths to measure (comma-separated).");
// --n_layer, --n_head and --block_size: the model's (models/
// charlm_shape_flags.h), with the worker's defaults.
ABSL_FLAG(int64_t, vocab, 65, "Vocabulary (tinyshakespeare has 65).");
ABSL_FLAG(int64_t, batch_size, 16, "Examples per step.");
ABSL_FLAG(int, steps, 10, "Timed steps per measurement (median reported).");
ABSL_FLAG(int, warmup, 2, "Untimed steps before them.");
ABSL_FLAG(int, threads, 0,
          "Eigen (and torch CPU) threads; 0: all cores (Eigen's default).");
ABSL_FLAG(bool, cpu, true, "Measure the CPU model.");
ABSL_FLAG(bool, cuda, true,
          "Measure the CUDA model when the build and machine allow it.");
ABSL_FLAG(bool, torch, true,
          "Run the PyTorch eager reference where we measure a GPU (and, "
          "with --torch_cpu, the CPU).");
ABSL_FLAG(bool, torch_cpu, false, "Also run the torch reference on the CPU.");
ABSL_FLAG(std::string, python, "python3", "Python with torch.");
ABSL_FLAG(std::string, torch_ref, "",
          "charlm_torch_ref.py; default: from the runfiles or the source "
          "tree.");
ABSL_FLAG(std::string, json_out, "", "Also write the rows here as JSON.");

namespace ringside {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Row {
  std::string device;  // "cpu (2 threads)", "cuda:0"
  CharLmConfig config;
  int64_t batch = 0;
  int64_t params = 0;
  double step_ms = 0;               // median wall time of a step
  double loss = 0;                  // first step's loss
  // Process CPU time per step (median): with --threads=1 the compute time
  // even when other processes compete for the cores.
  std::optional<double> cpu_ms;
  std::optional<double> device_ms;  // CUDA events, median
  // PyTorch eager on the same device, same configuration and inputs.
  std::string torch_note;  // "torch 2.x", or why there is none
  std::optional<double> torch_ms;
  std::optional<double> torch_loss;
  std::optional<double> torch_grad_error;  // relative L2 vs ours
};

double ProcessCpuMs() { return 1e3 * ProcessCpuSeconds(); }

Batch RandomBatch(const CharLmConfig& c, int64_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, c.vocab_size - 1);
  Batch b;
  b.size = size;
  b.tokens.resize(size * (c.block_size + 1));
  for (int32_t& t : b.tokens) t = id(rng);
  return b;
}

template <typename T>
absl::Status WriteRaw(const std::string& path, const std::vector<T>& v) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(v.data()),
            static_cast<std::streamsize>(v.size() * sizeof(T)));
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::vector<float> ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::vector<float> v(static_cast<size_t>(in.tellg()) / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), v.size() * 4);
  return v;
}

// Runs the torch reference on `device` with our parameters and tokens;
// fills the torch_* fields of `row` (or torch_note with why not).
void RunTorch(const std::string& script, const std::string& device,
              const std::vector<float>& params, const Batch& batch,
              const std::vector<float>& our_grads, Row& row) {
  char dir_template[] = "/tmp/charlm_bench.XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    row.torch_note = "no temp dir for the torch reference";
    return;
  }
  const std::string base(dir);
  const std::string params_path = base + "/params.f32";
  const std::string tokens_path = base + "/tokens.i32";
  const std::string grads_path = base + "/grads.f32";
  const std::string out_path = base + "/out.json";
  const std::string err_path = base + "/err.txt";
  if (!WriteRaw(params_path, params).ok() ||
      !WriteRaw(tokens_path, batch.tokens).ok()) {
    row.torch_note = "cannot write the torch reference's inputs";
    return;
  }
  const CharLmConfig& c = row.config;
  const std::string command = absl::StrCat(
      absl::GetFlag(FLAGS_python), " ", script, " --device=", device,
      " --n_layer=", c.n_layer, " --n_head=", c.n_head, " --n_embd=", c.n_embd,
      " --block_size=", c.block_size, " --vocab=", c.vocab_size,
      " --batch_size=", batch.size, " --steps=", absl::GetFlag(FLAGS_steps),
      " --warmup=", absl::GetFlag(FLAGS_warmup),
      " --threads=", absl::GetFlag(FLAGS_threads), " --params=", params_path,
      " --tokens=", tokens_path, " --grads_out=", grads_path, " > ", out_path,
      " 2> ", err_path);
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err_in(err_path);
  std::string err((std::istreambuf_iterator<char>(err_in)),
                  std::istreambuf_iterator<char>());
  std::ifstream out_in(out_path);
  std::string out((std::istreambuf_iterator<char>(out_in)),
                  std::istreambuf_iterator<char>());
  if (code == 3) {
    row.torch_note = "torch not installed";
  } else if (code != 0) {
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) {
      err.pop_back();
    }
    const size_t last = err.rfind('\n');
    row.torch_note = absl::StrCat(
        "torch reference failed (exit ", code,
        "): ", last == std::string::npos ? err : err.substr(last + 1));
  } else {
    json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("step_ms")) {
      row.torch_note = "torch reference printed no result";
    } else {
      row.torch_note = absl::StrCat("torch ", j.value("torch", std::string()));
      row.torch_ms = j["step_ms"].get<double>();
      row.torch_loss = j.value("loss", 0.0);
      const std::vector<float> grads = ReadRaw(grads_path);
      if (!grads.empty()) row.torch_grad_error = RelativeL2(our_grads, grads);
    }
  }
  for (const std::string& f :
       {params_path, tokens_path, grads_path, out_path, err_path}) {
    std::remove(f.c_str());
  }
  rmdir(dir);
}

absl::StatusOr<Row> MeasureCpu(const CharLmConfig& config,
                               const std::string& torch_script) {
  RS_ASSIGN_OR_RETURN(std::unique_ptr<CharLm> model, CharLm::Create(config));
  Row row;
  row.device = absl::StrCat("cpu (", Eigen::nbThreads(), " threads)");
  row.config = config;
  row.batch = absl::GetFlag(FLAGS_batch_size);
  row.params = model->layout().total_elements();
  std::vector<float> params(row.params), grads(row.params), first;
  model->InitParams(1, absl::MakeSpan(params));
  const Batch batch = RandomBatch(config, row.batch, 2);
  std::vector<double> ms, cpu_ms;
  const int total = absl::GetFlag(FLAGS_warmup) + absl::GetFlag(FLAGS_steps);
  for (int step = 0; step < total; ++step) {
    const Clock::time_point start = Clock::now();
    const double cpu_start = ProcessCpuMs();
    RS_ASSIGN_OR_RETURN(
        const double loss,
        model->ForwardBackward(batch, params, absl::MakeSpan(grads), nullptr));
    const double elapsed =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (step >= absl::GetFlag(FLAGS_warmup)) {
      cpu_ms.push_back(ProcessCpuMs() - cpu_start);
    }
    if (step == 0) {
      row.loss = loss;
      first = grads;
    }
    if (step >= absl::GetFlag(FLAGS_warmup)) ms.push_back(elapsed);
  }
  row.step_ms = Median(ms);
  row.cpu_ms = Median(cpu_ms);
  if (absl::GetFlag(FLAGS_torch) && absl::GetFlag(FLAGS_torch_cpu)) {
    RunTorch(torch_script, "cpu", params, batch, first, row);
  }
  return row;
}

// nullopt (with `why`) when CUDA cannot run here.
absl::StatusOr<std::optional<Row>> MeasureCuda(const CharLmConfig& config,
                                               const std::string& torch_script,
                                               std::string* why) {
  absl::StatusOr<std::unique_ptr<CudaCharLm>> made = CudaCharLm::Create(config);
  if (!made.ok()) {
    if (absl::IsUnimplemented(made.status()) ||
        absl::IsUnavailable(made.status())) {
      *why = std::string(made.status().message());
      return std::optional<Row>();
    }
    return made.status();
  }
  CudaCharLm& model = **made;
  Row row;
  row.device = absl::StrCat("cuda:", model.device());
  row.config = config;
  row.batch = absl::GetFlag(FLAGS_batch_size);
  row.params = model.layout().total_elements();
  std::vector<float> params(row.params);
  model.InitParams(1, absl::MakeSpan(params));
  RS_ASSIGN_OR_RETURN(DeviceBuffer d_params,
                      DeviceBuffer::Create(model.device(), params.size()));
  RS_ASSIGN_OR_RETURN(DeviceBuffer d_grads,
                      DeviceBuffer::Create(model.device(), params.size()));
  RS_RETURN_IF_ERROR(d_params.CopyFromHost(params));
  const Batch batch = RandomBatch(config, row.batch, 2);
  std::vector<double> ms, device_ms;
  std::vector<float> first;
  const int total = absl::GetFlag(FLAGS_warmup) + absl::GetFlag(FLAGS_steps);
  for (int step = 0; step < total; ++step) {
    const Clock::time_point start = Clock::now();
    RS_ASSIGN_OR_RETURN(
        const double loss,
        model.ForwardBackward(batch, d_params.data(), d_grads.data(), nullptr,
                              /*stream=*/nullptr));
    const double elapsed =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (step == 0) {
      row.loss = loss;
      RS_ASSIGN_OR_RETURN(first, d_grads.ToHost());
    }
    if (step >= absl::GetFlag(FLAGS_warmup)) {
      ms.push_back(elapsed);
      device_ms.push_back(model.last_compute_seconds() * 1e3);
    }
  }
  row.step_ms = Median(ms);
  row.device_ms = Median(device_ms);
  if (absl::GetFlag(FLAGS_torch)) {
    RunTorch(torch_script, "cuda", params, batch, first, row);
  }
  return std::optional<Row>(row);
}

std::string Opt(const std::optional<double>& v, const char* format) {
  return v.has_value() ? absl::StrFormat(format, *v) : "-";
}

void PrintTable(const std::vector<Row>& rows) {
  std::printf(
      "| device | n_embd | params | step ms | CPU / device ms | tokens/s | "
      "GFLOP/s | torch step ms | torch/ours | loss ours / torch | "
      "grad rel. diff | torch |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    const double tokens = static_cast<double>(r.batch) * r.config.block_size;
    const double flops = CharLmFlopsPerExample(r.config) * r.batch;
    std::optional<double> ratio;
    if (r.torch_ms.has_value()) ratio = *r.torch_ms / r.step_ms;
    std::printf(
        "| %s | %lld | %lld | %.2f | %s | %.0f | %.1f | %s | %s | %.5f / %s "
        "| %s | %s |\n",
        r.device.c_str(), static_cast<long long>(r.config.n_embd),
        static_cast<long long>(r.params), r.step_ms,
        Opt(r.device_ms.has_value() ? r.device_ms : r.cpu_ms, "%.2f").c_str(),
        tokens / (r.step_ms / 1e3), flops / (r.step_ms / 1e3) / 1e9,
        Opt(r.torch_ms, "%.2f").c_str(), Opt(ratio, "%.2f").c_str(), r.loss,
        Opt(r.torch_loss, "%.5f").c_str(),
        Opt(r.torch_grad_error, "%.1e").c_str(),
        r.torch_note.empty() ? "-" : r.torch_note.c_str());
  }
}

json RowJson(const Row& r) {
  json j = {{"device", r.device},
            {"n_layer", r.config.n_layer},
            {"n_head", r.config.n_head},
            {"n_embd", r.config.n_embd},
            {"block_size", r.config.block_size},
            {"vocab", r.config.vocab_size},
            {"batch_size", r.batch},
            {"params", r.params},
            {"step_ms", r.step_ms},
            {"tokens_per_s", r.batch * r.config.block_size / (r.step_ms / 1e3)},
            {"flops_per_step", CharLmFlopsPerExample(r.config) * r.batch},
            {"loss", r.loss},
            {"torch_note", r.torch_note}};
  if (r.device_ms) j["device_ms"] = *r.device_ms;
  if (r.cpu_ms) j["process_cpu_ms"] = *r.cpu_ms;
  if (r.torch_ms) j["torch_step_ms"] = *r.torch_ms;
  if (r.torch_loss) j["torch_loss"] = *r.torch_loss;
  if (r.torch_grad_error) j["torch_grad_rel_l2"] = *r.torch_grad_error;
  return j;
}

std::string TorchScript(const char* argv0) {
  if (const std::string flag = absl::GetFlag(FLAGS_torch_ref); !flag.empty()) {
    return flag;
  }
  absl::StatusOr<std::string> found =
      FindBinary(argv0, "experiments/bench/charlm_torch_ref.py");
  return found.ok() ? *found : "experiments/bench/charlm_torch_ref.py";
}

int Run(const char* argv0) {
  std::vector<int64_t> widths;
  for (const std::string& w : absl::GetFlag(FLAGS_n_embd)) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(w, &v)) {
      std::fprintf(stderr, "charlm_bench: bad flags: --n_embd '%s'\n",
                   w.c_str());
      return 2;
    }
    widths.push_back(v);
  }
  if (absl::GetFlag(FLAGS_steps) < 1 || absl::GetFlag(FLAGS_warmup) < 0 ||
      absl::GetFlag(FLAGS_batch_size) < 1 || absl::GetFlag(FLAGS_threads) < 0) {
    std::fprintf(stderr,
                 "charlm_bench: bad flags: --steps, --batch_size >= 1; "
                 "--warmup, --threads >= 0\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_threads) > 0) {
    Eigen::setNbThreads(absl::GetFlag(FLAGS_threads));
  }
  const std::string script = TorchScript(argv0);
  std::printf(
      "charlm training step (forward + backward, no optimizer): n_layer=%lld "
      "n_head=%lld block_size=%lld vocab=%lld batch=%lld; median of %d steps "
      "after %d warm-up\n\n",
      static_cast<long long>(absl::GetFlag(FLAGS_n_layer)),
      static_cast<long long>(absl::GetFlag(FLAGS_n_head)),
      static_cast<long long>(absl::GetFlag(FLAGS_block_size)),
      static_cast<long long>(absl::GetFlag(FLAGS_vocab)),
      static_cast<long long>(absl::GetFlag(FLAGS_batch_size)),
      absl::GetFlag(FLAGS_steps), absl::GetFlag(FLAGS_warmup));
  std::vector<Row> rows;
  std::string cuda_why;
  bool cuda_possible = absl::GetFlag(FLAGS_cuda);
  for (int64_t width : widths) {
    CharLmConfig config;
    config.vocab_size = absl::GetFlag(FLAGS_vocab);
    config.n_layer = absl::GetFlag(FLAGS_n_layer);
    config.n_head = absl::GetFlag(FLAGS_n_head);
    config.n_embd = width;
    config.block_size = absl::GetFlag(FLAGS_block_size);
    if (absl::Status s = config.Validate(); !s.ok()) {
      std::fprintf(stderr, "charlm_bench: bad flags: %s\n",
                   std::string(s.message()).c_str());
      return 2;
    }
    if (absl::GetFlag(FLAGS_cpu)) {
      absl::StatusOr<Row> row = MeasureCpu(config, script);
      if (!row.ok()) {
        std::fprintf(stderr, "charlm_bench: cpu n_embd=%lld: %s\n",
                     static_cast<long long>(width),
                     row.status().ToString().c_str());
        return 1;
      }
      rows.push_back(*row);
      std::fprintf(stderr, "charlm_bench: cpu n_embd=%lld: %.2f ms/step\n",
                   static_cast<long long>(width), row->step_ms);
    }
    if (cuda_possible) {
      absl::StatusOr<std::optional<Row>> row =
          MeasureCuda(config, script, &cuda_why);
      if (!row.ok()) {
        std::fprintf(stderr, "charlm_bench: cuda n_embd=%lld: %s\n",
                     static_cast<long long>(width),
                     row.status().ToString().c_str());
        return 1;
      }
      if (!row->has_value()) {
        cuda_possible = false;
      } else {
        rows.push_back(**row);
      }
    }
  }
  PrintTable(rows);
  if (absl::GetFlag(FLAGS_cuda) && !cuda_why.empty()) {
    std::printf("\nNo GPU measurement: %s\n", cuda_why.c_str());
  }
  std::fflush(stdout);
  if (const std::string path = absl::GetFlag(FLAGS_json_out); !path.empty()) {
    json all = json::array();
    for (const Row& r : rows) all.push_back(RowJson(r));
    std::ofstream out(path);
    out << all.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "charlm_bench: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Step time and tokens/s of the charlm training step on the CPU and, "
      "where possible, the GPU against PyTorch eager.");
  absl::ParseCommandLine(argc, argv);
  return ringside::Run(argv[0]);
}
