// experiments/ddp_peer.py, the PyTorch DDP row, on the character
// transformer: from the batches a worker exports, DDP (one rank, gloo)
// trains the same problem as the worker's baseline and ends at its eval
// loss to float rounding; a malformed export is refused naming the cause;
// and a user's own PyTorch model (--torch_model) trains on random inputs.
// Needs a Python with torch ($RINGSIDE_TORCH_PYTHON, else python3);
// without it the cases skip, saying so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/experiments/binary_runner.h"
#include "tests/testing/torch_python.h"

namespace ringside {
namespace {

using testing::RunShell;
using testing::TorchImports;
using testing::TorchPython;

std::string TmpDir() { return std::getenv("TEST_TMPDIR"); }

// A small text (the character data set's source).
std::string WriteText() {
  const std::string path = TmpDir() + "/text.txt";
  std::ofstream out(path);
  for (int i = 0; i < 60; ++i) {
    out << "First Citizen:\nBefore we proceed any further, hear me speak.\n"
        << "All:\nSpeak, speak. Line " << i << ".\n";
  }
  return path;
}

// The last JSON line of `output` whose "event" is `event`.
nlohmann::json LastRecord(const std::string& output, const std::string& event) {
  nlohmann::json found;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (line.empty() || line.front() != '{') continue;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_discarded() && record.value("event", "") == event) {
      found = record;
    }
  }
  return found;
}

std::string CharLmFlags(const std::string& text) {
  return absl::StrCat(
      "--model=charlm --text=", text,
      " --n_layer=1 --n_head=2 --n_embd=16 --block_size=8 --batch_size=4"
      " --steps=6 --warmup_steps=2 --rank=0 --world_size=1 --optimizer=adam"
      " --lr=0.003");
}

TEST(DdpPeerTest, CharLmTrainsToTheWorkersEvalLoss) {
  if (!TorchImports("torch")) {
    GTEST_SKIP() << TorchPython() << " has no torch (set "
                 << "RINGSIDE_TORCH_PYTHON to a Python with it)";
  }
  const std::string worker = Runfile("worker/worker");
  const std::string flags = CharLmFlags(WriteText());
  const std::string data = TmpDir() + "/export";
  std::string log;
  ASSERT_EQ(
      RunShell(absl::StrCat(worker, " ", flags, " --export_batches=", data),
               &log),
      0)
      << log;
  std::string trained;
  ASSERT_EQ(RunShell(absl::StrCat(worker, " ", flags, " --strategy=baseline"),
                     &trained),
            0)
      << trained;
  std::string peer;
  ASSERT_EQ(RunShell(absl::StrCat(TorchPython(), " ",
                                  Runfile("experiments/ddp_peer.py"),
                                  " --rank=0 --world_size=1 --master_port=0",
                                  " --data_dir=", data),
                     &peer),
            0)
      << peer;
  const nlohmann::json ours = LastRecord(trained, "final");
  const nlohmann::json ddp = LastRecord(peer, "final");
  ASSERT_TRUE(ours.contains("eval_loss")) << trained;
  ASSERT_TRUE(ddp.contains("eval_loss")) << peer;
  EXPECT_EQ(ddp["model"], "charlm");
  EXPECT_EQ(ddp["strategy"], "ddp");
  EXPECT_EQ(ddp["measured_steps"], 4);
  const double a = ours["eval_loss"].get<double>();
  const double b = ddp["eval_loss"].get<double>();
  EXPECT_TRUE(std::isfinite(a) && a > 0) << a;
  // Six Adam steps from the same parameters and batches: float rounding
  // (the attention kernels differ) stays far below 1e-4.
  EXPECT_NEAR(b, a, 1e-4 * a);
}

TEST(DdpPeerTest, LayoutThatIsNotTheTwinsIsRefused) {
  if (!TorchImports("torch")) {
    GTEST_SKIP() << TorchPython() << " has no torch";
  }
  const std::string worker = Runfile("worker/worker");
  const std::string data = TmpDir() + "/bad_export";
  std::string log;
  ASSERT_EQ(RunShell(absl::StrCat(worker, " ", CharLmFlags(WriteText()),
                                  " --export_batches=", data),
                     &log),
            0)
      << log;
  // The export claims two layers, its tensors hold one.
  std::ifstream in(data + "/meta.json");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json meta = nlohmann::json::parse(text.str());
  meta["model_config"]["n_layer"] = 2;
  std::ofstream(data + "/meta.json") << meta.dump();
  std::string peer;
  EXPECT_EQ(RunShell(absl::StrCat(TorchPython(), " ",
                                  Runfile("experiments/ddp_peer.py"),
                                  " --rank=0 --world_size=1 --master_port=0",
                                  " --data_dir=", data),
                     &peer),
            2);
  EXPECT_NE(peer.find("charlm layout differs"), std::string::npos) << peer;
}

// --torch_model: the user's model on random inputs; a batch shape the
// model does not take is refused naming --input.
TEST(DdpPeerTest, TrainsTheUsersModelOnRandomInputs) {
  if (!TorchImports("torch")) {
    GTEST_SKIP() << TorchPython() << " has no torch";
  }
  const std::string file = TmpDir() + "/my_model.py";
  std::ofstream(file)
      << "import torch\n"
         "def small():\n"
         "    return torch.nn.Sequential(torch.nn.Linear(6, 16),\n"
         "                               torch.nn.ReLU(),\n"
         "                               torch.nn.Linear(16, 3))\n";
  const std::string peer_cmd = absl::StrCat(
      TorchPython(), " ", Runfile("experiments/ddp_peer.py"),
      " --rank=0 --world_size=1 --master_port=0 --torch_model=", file,
      ":small --batch_size=8 --steps=5 --warmup_steps=1");
  std::string peer;
  ASSERT_EQ(RunShell(peer_cmd + " --input=6", &peer), 0) << peer;
  const nlohmann::json ddp = LastRecord(peer, "final");
  EXPECT_EQ(ddp["model"], "torch_model");
  EXPECT_EQ(ddp["data"], "random");
  EXPECT_EQ(ddp["measured_steps"], 4);
  EXPECT_EQ(ddp["num_tensors"], 4);
  EXPECT_EQ(ddp["model_bytes"], (6 * 16 + 16 + 16 * 3 + 3) * 4);

  std::string bad;
  EXPECT_EQ(RunShell(peer_cmd + " --input=7", &bad), 2);
  EXPECT_NE(bad.find("--input: the model does not take a batch of shape"),
            std::string::npos)
      << bad;
}

}  // namespace
}  // namespace ringside
