#include "models/gradient_profiles.h"

#include <cmath>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ringside {
namespace {

// Published counts of the reference implementations: tensors in
// named_parameters() and their total size (torchvision num_params,
// HuggingFace num_parameters()).
struct Published {
  const char* name;
  int tensors;
  int64_t parameters;
};

constexpr Published kPublished[] = {
    {"resnet50", 161, 25557032},
    {"vgg16", 32, 138357544},
    {"bert-base", 199, 109482240},
    {"gpt2", 148, 124439808},
    {"mobilenet_v2", 158, 3504872},
    // The study's GPT-2 (its config's shapes; 106.3 M by arithmetic).
    {"gpt2_study", 148, 106331904},
};

GradientProfile MustFind(const std::string& name) {
  absl::StatusOr<GradientProfile> p = FindGradientProfile(name);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : GradientProfile{};
}

TEST(GradientProfilesTest, NamesAreTheBuiltInNetworks) {
  EXPECT_EQ(
      GradientProfileNames(),
      (std::vector<std::string>{"resnet50", "vgg16", "bert-base", "gpt2",
                                 "mobilenet_v2", "gpt2_study"}));
  EXPECT_EQ(GradientProfileNameList(),
            "resnet50, vgg16, bert-base, gpt2, mobilenet_v2, gpt2_study");
}

TEST(GradientProfilesTest, CountsAndTotalsMatchPublishedNumbers) {
  for (const Published& want : kPublished) {
    SCOPED_TRACE(want.name);
    const GradientProfile p = MustFind(want.name);
    EXPECT_EQ(p.name, want.name);
    EXPECT_FALSE(p.description.empty());
    EXPECT_EQ(p.num_tensors(), want.tensors);
    EXPECT_EQ(p.num_parameters(), want.parameters);
    EXPECT_EQ(p.published_parameters, want.parameters);
  }
}

TEST(GradientProfilesTest, LayoutsBuildInDefinitionOrder) {
  for (const Published& want : kPublished) {
    SCOPED_TRACE(want.name);
    const GradientProfile p = MustFind(want.name);
    absl::StatusOr<TensorLayout> layout = p.Layout();
    ASSERT_TRUE(layout.ok()) << layout.status();
    EXPECT_EQ(layout->num_tensors(), want.tensors);
    EXPECT_EQ(layout->total_elements(), want.parameters);
    EXPECT_EQ(layout->total_bytes(), 4 * want.parameters);
    std::set<std::string> names;
    for (int i = 0; i < layout->num_tensors(); ++i) {
      EXPECT_EQ(layout->tensor(i).name, p.tensors[i].first);
      EXPECT_EQ(layout->tensor(i).shape, p.tensors[i].second);
      names.insert(layout->tensor(i).name);
    }
    EXPECT_EQ(static_cast<int>(names.size()), want.tensors);
  }
}

// Spot checks of names, shapes and positions against the references'
// named_parameters() order.
void ExpectTensor(const GradientProfile& p, int index, const std::string& name,
                  const std::vector<int64_t>& shape) {
  ASSERT_LT(index, p.num_tensors());
  const int i = index < 0 ? p.num_tensors() + index : index;
  EXPECT_EQ(p.tensors[i].first, name) << p.name << " tensor " << i;
  EXPECT_EQ(p.tensors[i].second, shape) << p.name << " " << name;
}

TEST(GradientProfilesTest, ResNet50Tensors) {
  const GradientProfile p = MustFind("resnet50");
  ExpectTensor(p, 0, "conv1.weight", {64, 3, 7, 7});
  ExpectTensor(p, 1, "bn1.weight", {64});
  ExpectTensor(p, 2, "bn1.bias", {64});
  ExpectTensor(p, 3, "layer1.0.conv1.weight", {64, 64, 1, 1});
  ExpectTensor(p, 6, "layer1.0.conv2.weight", {64, 64, 3, 3});
  ExpectTensor(p, 9, "layer1.0.conv3.weight", {256, 64, 1, 1});
  ExpectTensor(p, 12, "layer1.0.downsample.0.weight", {256, 64, 1, 1});
  ExpectTensor(p, 14, "layer1.0.downsample.1.bias", {256});
  ExpectTensor(p, 15, "layer1.1.conv1.weight", {64, 256, 1, 1});
  ExpectTensor(p, -5, "layer4.2.conv3.weight", {2048, 512, 1, 1});
  ExpectTensor(p, -2, "fc.weight", {1000, 2048});
  ExpectTensor(p, -1, "fc.bias", {1000});
}

TEST(GradientProfilesTest, Vgg16Tensors) {
  const GradientProfile p = MustFind("vgg16");
  ExpectTensor(p, 0, "features.0.weight", {64, 3, 3, 3});
  ExpectTensor(p, 2, "features.2.weight", {64, 64, 3, 3});
  ExpectTensor(p, 4, "features.5.weight", {128, 64, 3, 3});
  ExpectTensor(p, 25, "features.28.bias", {512});
  ExpectTensor(p, 26, "classifier.0.weight", {4096, 25088});
  ExpectTensor(p, 28, "classifier.3.weight", {4096, 4096});
  ExpectTensor(p, 30, "classifier.6.weight", {1000, 4096});
  ExpectTensor(p, 31, "classifier.6.bias", {1000});
}

TEST(GradientProfilesTest, BertBaseTensors) {
  const GradientProfile p = MustFind("bert-base");
  ExpectTensor(p, 0, "embeddings.word_embeddings.weight", {30522, 768});
  ExpectTensor(p, 1, "embeddings.position_embeddings.weight", {512, 768});
  ExpectTensor(p, 2, "embeddings.token_type_embeddings.weight", {2, 768});
  ExpectTensor(p, 4, "embeddings.LayerNorm.bias", {768});
  ExpectTensor(p, 5, "encoder.layer.0.attention.self.query.weight", {768, 768});
  ExpectTensor(p, 11, "encoder.layer.0.attention.output.dense.weight",
               {768, 768});
  ExpectTensor(p, 13, "encoder.layer.0.attention.output.LayerNorm.weight",
               {768});
  ExpectTensor(p, 15, "encoder.layer.0.intermediate.dense.weight", {3072, 768});
  ExpectTensor(p, 17, "encoder.layer.0.output.dense.weight", {768, 3072});
  ExpectTensor(p, 20, "encoder.layer.0.output.LayerNorm.bias", {768});
  ExpectTensor(p, 21, "encoder.layer.1.attention.self.query.weight",
               {768, 768});
  ExpectTensor(p, -3, "encoder.layer.11.output.LayerNorm.bias", {768});
  ExpectTensor(p, -2, "pooler.dense.weight", {768, 768});
  ExpectTensor(p, -1, "pooler.dense.bias", {768});
}

TEST(GradientProfilesTest, Gpt2Tensors) {
  const GradientProfile p = MustFind("gpt2");
  ExpectTensor(p, 0, "wte.weight", {50257, 768});
  ExpectTensor(p, 1, "wpe.weight", {1024, 768});
  ExpectTensor(p, 2, "h.0.ln_1.weight", {768});
  ExpectTensor(p, 4, "h.0.attn.c_attn.weight", {768, 2304});
  ExpectTensor(p, 5, "h.0.attn.c_attn.bias", {2304});
  ExpectTensor(p, 6, "h.0.attn.c_proj.weight", {768, 768});
  ExpectTensor(p, 10, "h.0.mlp.c_fc.weight", {768, 3072});
  ExpectTensor(p, 12, "h.0.mlp.c_proj.weight", {3072, 768});
  ExpectTensor(p, 14, "h.1.ln_1.weight", {768});
  ExpectTensor(p, -3, "h.11.mlp.c_proj.bias", {768});
  ExpectTensor(p, -1, "ln_f.bias", {768});
  // The LM head is tied to wte: no separate tensor.
  for (const auto& [name, shape] : p.tensors) {
    EXPECT_EQ(name.find("lm_head"), std::string::npos) << name;
  }
}

TEST(GradientProfilesTest, UnknownNameListsKnownOnes) {
  absl::Status s = FindGradientProfile("resnet18").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "unknown gradient profile 'resnet18' (known: resnet50, vgg16, "
            "bert-base, gpt2, mobilenet_v2, gpt2_study)");
}

// "tensors:E,E*C,...": the tensors in order, named t0, t1, ...; a bad
// item is refused naming it.
TEST(GradientProfilesTest, TensorMixSpelledOut) {
  absl::StatusOr<GradientProfile> p =
      FindGradientProfile("tensors:1000,64*3,10");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->num_tensors(), 5);
  EXPECT_EQ(p->num_parameters(), 1000 + 3 * 64 + 10);
  EXPECT_EQ(p->published_parameters, p->num_parameters());
  EXPECT_EQ(p->tensors[0].first, "t0");
  EXPECT_EQ(p->tensors[3].second, std::vector<int64_t>{64});
  EXPECT_EQ(p->tensors[4].first, "t4");
  ASSERT_TRUE(p->Layout().ok());
  for (const char* bad : {"tensors:", "tensors:0", "tensors:5*0", "tensors:x",
                          "tensors:4*2*2", "tensors:3000000000",
                          "tensors:1*200000"}) {
    absl::StatusOr<GradientProfile> refused = FindGradientProfile(bad);
    EXPECT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

// Emulation scale S: the same tensors in the same order, each 1/S of its
// elements (rounded, at least one) as one dimension, the published count
// the scaled sum; GPT-2 small at S = 64 moves 1/64 of its bytes with its
// 148 tensors. S = 1 is the profile; below 1 is refused.
TEST(GradientProfilesTest, ScaledProfileShrinksEveryTensorKeepingItsPlace) {
  absl::StatusOr<GradientProfile> mix = FindGradientProfile("tensors:1000,64*3,10");
  ASSERT_TRUE(mix.ok()) << mix.status();
  absl::StatusOr<GradientProfile> scaled = ScaledProfile(*mix, 64);
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  ASSERT_EQ(scaled->num_tensors(), 5);
  EXPECT_EQ(scaled->tensors[0].second, std::vector<int64_t>{16});  // 15.6
  EXPECT_EQ(scaled->tensors[1].second, std::vector<int64_t>{1});
  EXPECT_EQ(scaled->tensors[4].second, std::vector<int64_t>{1});  // >= 1
  EXPECT_EQ(scaled->tensors[2].first, "t2");
  EXPECT_EQ(scaled->published_parameters, 16 + 3 + 1);
  EXPECT_NE(scaled->description.find("emulation scale 64"), std::string::npos);
  ASSERT_TRUE(scaled->Layout().ok());

  absl::StatusOr<GradientProfile> gpt2 = FindGradientProfile("gpt2");
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  absl::StatusOr<GradientProfile> small = ScaledProfile(*gpt2, 64);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->num_tensors(), gpt2->num_tensors());
  EXPECT_NEAR(static_cast<double>(small->num_parameters()),
              gpt2->num_parameters() / 64.0, gpt2->num_tensors());

  absl::StatusOr<GradientProfile> same = ScaledProfile(*mix, 1);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->tensors, mix->tensors);
  for (const double bad : {0.5, 0.0, -1.0, std::nan("")}) {
    EXPECT_EQ(ScaledProfile(*mix, bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace ringside
