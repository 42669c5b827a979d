// Profile files: the built-in profiles read back equal from the format they
// are stored in, a user's file is found by its path wherever a profile name
// is accepted, and every malformed file is refused naming the field (and
// the tensor) at fault.
#include "models/profile_file.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "models/gradient_profiles.h"

namespace ringside {
namespace {

constexpr char kSmall[] = R"({
  "format": "ringside-profile/1",
  "name": "tiny",
  "order": "gradient_ready",
  "tensors": [
    {"name": "fc.bias", "shape": [10], "dtype": "float32"},
    {"name": "fc.weight", "shape": [10, 4]},
    {"name": "scale", "shape": []}
  ],
  "compute": {"batch_size": 32, "device": "cpu", "forward_ms": 2.5,
              "backward_ms": 5, "ready_ms": [1, 4, 5],
              "peak_activation_bytes": 4096}
})";

TEST(ProfileFileTest, ReadsTensorsOrderAndCompute) {
  absl::StatusOr<GradientProfile> p = ParseProfileJson(kSmall, "test");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "tiny");
  EXPECT_EQ(p->order, GradientProfile::Order::kGradientReady);
  ASSERT_EQ(p->num_tensors(), 3);
  EXPECT_EQ(p->tensors[1].second, (std::vector<int64_t>{10, 4}));
  EXPECT_TRUE(p->tensors[2].second.empty());  // a scalar
  EXPECT_EQ(p->num_parameters(), 51);
  EXPECT_EQ(p->published_parameters, 51);  // absent: the tensors' sum
  ASSERT_TRUE(p->compute.has_value());
  EXPECT_EQ(p->compute->batch_size, 32);
  EXPECT_DOUBLE_EQ(p->compute->forward_s, 0.0025);
  EXPECT_EQ(p->compute->ready_s, (std::vector<double>{0.001, 0.004, 0.005}));
  EXPECT_EQ(p->compute->peak_activation_bytes, 4096);
  // Written and read again: the same profile.
  absl::StatusOr<GradientProfile> again =
      ParseProfileJson(ProfileToJson(*p), "again");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->tensors, p->tensors);
  EXPECT_EQ(again->order, p->order);
  EXPECT_EQ(again->compute->ready_s, p->compute->ready_s);
}

TEST(ProfileFileTest, BuiltInProfilesRoundTrip) {
  for (const std::string& name : GradientProfileNames()) {
    absl::StatusOr<GradientProfile> p = FindGradientProfile(name);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::StatusOr<GradientProfile> back =
        ParseProfileJson(ProfileToJson(*p), name);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->tensors, p->tensors) << name;
    EXPECT_EQ(back->description, p->description) << name;
    EXPECT_EQ(back->published_parameters, p->published_parameters) << name;
  }
}

TEST(ProfileFileTest, AProfileNameThatIsAPathReadsTheFile) {
  EXPECT_TRUE(IsProfilePath("dir/model"));
  EXPECT_TRUE(IsProfilePath("model.json"));
  EXPECT_FALSE(IsProfilePath("resnet50"));
  EXPECT_FALSE(IsProfilePath("tensors:10,20"));
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/tiny.json");
  std::ofstream(path) << kSmall;
  absl::StatusOr<GradientProfile> p = FindGradientProfile(path);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "tiny");
  absl::StatusOr<GradientProfile> missing =
      FindGradientProfile(path + ".missing.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(".missing.json"),
            std::string::npos);
}

struct Malformed {
  std::string from, to;  // replaced in kSmall
  std::string message;   // a part of the refusal
};

class MalformedProfileTest : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedProfileTest, IsRefusedNamingTheFault) {
  const Malformed& m = GetParam();
  const std::string text = absl::StrReplaceAll(kSmall, {{m.from, m.to}});
  ASSERT_NE(text, kSmall) << "the case does not change the file";
  absl::StatusOr<GradientProfile> p = ParseProfileJson(text, "bad.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("bad.json"), std::string::npos)
      << p.status();
  EXPECT_NE(p.status().message().find(m.message), std::string::npos)
      << p.status();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedProfileTest,
    ::testing::Values(
        Malformed{"{\n", "[\n", "not valid JSON"},
        Malformed{"ringside-profile/1", "ringside-profile/2",
                  "this ringside reads \"ringside-profile/1\""},
        Malformed{"\"name\": \"tiny\",", "", "missing field \"name\""},
        Malformed{"\"order\"", "\"ordre\"", "unknown field \"ordre\""},
        Malformed{"gradient_ready", "backwards", "\"order\" must be"},
        Malformed{"\"shape\": [10, 4]", "\"shape\": [10, 0]",
                  "tensor 1 (fc.weight): \"shape\" holds a dimension"},
        Malformed{"\"shape\": [10, 4]", "\"shape\": \"10x4\"",
                  "tensor 1 (fc.weight): \"shape\" must be an array"},
        Malformed{"{\"name\": \"fc.bias\", \"shape\": [10], ",
                  "{\"shape\": [10], ", "tensor 0: missing field \"name\""},
        Malformed{"\"dtype\": \"float32\"", "\"dtype\": \"bfloat16\"",
                  "tensor 0 (fc.bias): dtype \"bfloat16\""},
        Malformed{"\"shape\": []", "\"shape\": [], \"grad\": 1",
                  "tensor 2 (scale): unknown field \"grad\""},
        Malformed{"[1, 4, 5]", "[1, 4]", "one time per tensor (3)"},
        Malformed{"[1, 4, 5]", "[1, -4, 5]",
                  "\"ready_ms\" of tensor 1 (fc.weight)"},
        Malformed{"\"device\": \"cpu\"", "\"device\": \"tpu\"",
                  "\"device\" must be \"cpu\" or \"cuda\""},
        Malformed{"\"batch_size\": 32", "\"batch_size\": 0",
                  "\"batch_size\" must be >= 1"},
        Malformed{"\"forward_ms\": 2.5", "\"forward_ms\": \"fast\"",
                  "\"forward_ms\" must be a number >= 0"},
        Malformed{"\"order\": \"gradient_ready\",",
                  "\"order\": \"gradient_ready\", \"published_parameters\": 50,",
                  "\"published_parameters\" is 50 but the tensors hold 51"},
        Malformed{"\"tensors\": [", "\"tensors\": [], \"x\": [",
                  "unknown field \"x\""}));

}  // namespace
}  // namespace ringside
