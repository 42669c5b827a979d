// tools/export_profile.py on real PyTorch models, read back by ringside's
// profile reader: a model with a shared, a frozen and an unused parameter
// exports what DDP reduces, in gradient-ready order with its timings; and
// torchvision's resnet50 exports the 161 tensors and 25,557,032 parameters
// of the built-in profile, as the same multiset of shapes. Needs a Python
// with torch: $RINGSIDE_TORCH_PYTHON (.bazelrc passes it through), else
// python3; without torch (or torchvision, for the second) the cases skip,
// saying so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/gradient_profiles.h"
#include "models/profile_file.h"
#include "tests/testing/torch_python.h"

namespace ringside {
namespace {

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/ringside/", path);
}

using testing::RunShell;
using testing::TorchImports;
using testing::TorchPython;

absl::StatusOr<GradientProfile> Export(const std::vector<std::string>& args,
                                       const std::string& out_name) {
  const std::string out =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/", out_name);
  std::string log;
  const int rc = RunShell(absl::StrCat(TorchPython(), " ",
                                  Runfile("tools/export_profile.py"), " ",
                                  absl::StrJoin(args, " "), " --out=", out),
                     &log);
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("export_profile.py exit ", rc,
                                            ":\n", log));
  }
  return ReadProfileFile(out);
}

TEST(ExportProfileTest, ExportsWhatDdpReducesInReadyOrder) {
  if (!TorchImports("torch")) {
    GTEST_SKIP() << TorchPython() << " has no torch (set "
                 << "RINGSIDE_TORCH_PYTHON to a Python with it)";
  }
  absl::StatusOr<GradientProfile> p = Export(
      {"--model=" + Runfile("tests/tools/profile_models.py") +
           ":shared_frozen_unused",
       "--input=8", "--batch=4", "--steps=3", "--warmup=1"},
      "shared.json");
  ASSERT_TRUE(p.ok()) << p.status();
  // hidden.weight is also out.weight: once. frozen.* and unused.* left out.
  std::vector<std::string> names;
  for (const auto& [name, shape] : p->tensors) names.push_back(name);
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"embed.bias", "embed.weight",
                                              "hidden.bias", "hidden.weight",
                                              "out.bias"}));
  EXPECT_EQ(p->num_parameters(), 16 * 8 + 16 + 16 * 16 + 16 + 16);
  EXPECT_EQ(p->order, GradientProfile::Order::kGradientReady);
  // Backward reaches the last layer first: out.bias before embed.weight.
  const auto position = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  EXPECT_LT(position("out.bias"), position("embed.weight"));
  ASSERT_TRUE(p->compute.has_value());
  EXPECT_EQ(p->compute->batch_size, 4);
  EXPECT_EQ(p->compute->device, "cpu");
  EXPECT_GT(p->compute->forward_s, 0);
  EXPECT_GT(p->compute->backward_s, 0);
  ASSERT_EQ(p->compute->ready_s.size(), names.size());
  EXPECT_TRUE(std::is_sorted(p->compute->ready_s.begin(),
                             p->compute->ready_s.end()));
}

TEST(ExportProfileTest, Resnet50MatchesTheBuiltInProfile) {
  if (!TorchImports("torchvision")) {
    GTEST_SKIP() << TorchPython() << " has no torchvision";
  }
  absl::StatusOr<GradientProfile> p =
      Export({"--model=torchvision.models:resnet50", "--input=3,64,64",
              "--batch=2", "--steps=1", "--warmup=0"},
             "resnet50.json");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->num_tensors(), 161);
  EXPECT_EQ(p->num_parameters(), 25557032);
  absl::StatusOr<GradientProfile> built_in = FindGradientProfile("resnet50");
  ASSERT_TRUE(built_in.ok()) << built_in.status();
  auto shapes = [](const GradientProfile& g) {
    std::vector<std::vector<int64_t>> s;
    for (const auto& [name, shape] : g.tensors) s.push_back(shape);
    std::sort(s.begin(), s.end());
    return s;
  };
  EXPECT_EQ(shapes(*p), shapes(*built_in));
}

}  // namespace
}  // namespace ringside
