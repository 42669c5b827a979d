#include "models/gradient_profiles.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringside {
namespace {

using Shape = std::vector<int64_t>;

// Appends tensors in definition order.
class Builder {
 public:
  explicit Builder(GradientProfile* profile) : profile_(profile) {}
  void Add(std::string name, Shape shape) {
    profile_->tensors.emplace_back(std::move(name), std::move(shape));
  }
  // nn.Linear / nn.Conv2d with bias: "<prefix>.weight" then "<prefix>.bias".
  void WeightAndBias(const std::string& prefix, Shape weight) {
    const int64_t out = weight.front();
    Add(prefix + ".weight", std::move(weight));
    Add(prefix + ".bias", {out});
  }
  // BatchNorm / LayerNorm affine parameters over `features`.
  void Norm(const std::string& prefix, int64_t features) {
    Add(prefix + ".weight", {features});
    Add(prefix + ".bias", {features});
  }

 private:
  GradientProfile* profile_;
};

// torchvision.models.resnet50: ResNet(Bottleneck, [3, 4, 6, 3]). Each
// Bottleneck registers conv1 (1x1), bn1, conv2 (3x3, carries the stride in
// V1.5), bn2, conv3 (1x1, expansion 4), bn3, then for the first block of a
// stage the downsample (1x1 conv, BN). Convolutions have no bias.
GradientProfile ResNet50() {
  GradientProfile p;
  p.name = "resnet50";
  p.description =
      "ResNet-50 (torchvision resnet50, V1.5, 1000 classes; BN affine "
      "parameters, no running stats)";
  p.published_parameters = 25557032;
  Builder b(&p);
  constexpr int64_t kExpansion = 4;
  b.Add("conv1.weight", {64, 3, 7, 7});
  b.Norm("bn1", 64);
  int64_t inplanes = 64;
  const int64_t planes_of_stage[] = {64, 128, 256, 512};
  const int blocks_of_stage[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = planes_of_stage[stage];
    const int64_t out = planes * kExpansion;
    for (int block = 0; block < blocks_of_stage[stage]; ++block) {
      const std::string pre = absl::StrCat("layer", stage + 1, ".", block, ".");
      b.Add(pre + "conv1.weight", {planes, inplanes, 1, 1});
      b.Norm(pre + "bn1", planes);
      b.Add(pre + "conv2.weight", {planes, planes, 3, 3});
      b.Norm(pre + "bn2", planes);
      b.Add(pre + "conv3.weight", {out, planes, 1, 1});
      b.Norm(pre + "bn3", out);
      if (block == 0) {  // stride or width changes: projection shortcut
        b.Add(pre + "downsample.0.weight", {out, inplanes, 1, 1});
        b.Norm(pre + "downsample.1", out);
      }
      inplanes = out;
    }
  }
  b.WeightAndBias("fc", {1000, inplanes});
  return p;
}

// torchvision.models.vgg16: configuration "D", five stages of 3x3
// convolutions (with bias, each followed by a ReLU) closed by a max-pool,
// then the classifier Linear(512*7*7, 4096), ReLU, Dropout, Linear(4096,
// 4096), ReLU, Dropout, Linear(4096, 1000). Parameter names carry the
// nn.Sequential index, pools and ReLUs included, as torchvision's do.
GradientProfile Vgg16() {
  GradientProfile p;
  p.name = "vgg16";
  p.description = "VGG-16 (torchvision vgg16, no batch norm, 1000 classes)";
  p.published_parameters = 138357544;
  Builder b(&p);
  struct Stage {
    int64_t width;
    int convs;
  };
  const Stage stages[] = {{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}};
  int64_t channels = 3;
  int index = 0;  // position in nn.Sequential `features`
  for (const Stage& stage : stages) {
    for (int conv = 0; conv < stage.convs; ++conv) {
      b.WeightAndBias(absl::StrCat("features.", index),
                      {stage.width, channels, 3, 3});
      channels = stage.width;
      index += 2;  // Conv2d, ReLU
    }
    index += 1;  // MaxPool2d
  }
  // AdaptiveAvgPool2d((7, 7)) feeds the classifier.
  const int64_t widths[] = {channels * 7 * 7, 4096, 4096, 1000};
  for (int layer = 0; layer < 3; ++layer) {
    // Linear, ReLU, Dropout: the Linears sit at indices 0, 3, 6.
    b.WeightAndBias(absl::StrCat("classifier.", 3 * layer),
                    {widths[layer + 1], widths[layer]});
  }
  return p;
}

// HuggingFace BertModel with bert-base-uncased's config: vocab 30522,
// hidden 768, 12 layers, intermediate 3072, 512 positions, 2 token types,
// with the pooler. nn.Linear weights are (out, in).
GradientProfile BertBase() {
  GradientProfile p;
  p.name = "bert-base";
  p.description =
      "BERT-base (HuggingFace BertModel, bert-base-uncased, with pooler)";
  p.published_parameters = 109482240;
  Builder b(&p);
  constexpr int64_t kVocab = 30522, kHidden = 768, kLayers = 12,
                    kIntermediate = 3072, kPositions = 512, kTypes = 2;
  b.Add("embeddings.word_embeddings.weight", {kVocab, kHidden});
  b.Add("embeddings.position_embeddings.weight", {kPositions, kHidden});
  b.Add("embeddings.token_type_embeddings.weight", {kTypes, kHidden});
  b.Norm("embeddings.LayerNorm", kHidden);
  for (int layer = 0; layer < kLayers; ++layer) {
    const std::string pre = absl::StrCat("encoder.layer.", layer, ".");
    for (const char* proj : {"query", "key", "value"}) {
      b.WeightAndBias(pre + "attention.self." + proj, {kHidden, kHidden});
    }
    b.WeightAndBias(pre + "attention.output.dense", {kHidden, kHidden});
    b.Norm(pre + "attention.output.LayerNorm", kHidden);
    b.WeightAndBias(pre + "intermediate.dense", {kIntermediate, kHidden});
    b.WeightAndBias(pre + "output.dense", {kHidden, kIntermediate});
    b.Norm(pre + "output.LayerNorm", kHidden);
  }
  b.WeightAndBias("pooler.dense", {kHidden, kHidden});
  return p;
}

// HuggingFace GPT2Model with GPT-2 small's config: vocab 50257, 1024
// positions, 12 blocks, hidden 768, MLP 4x. The blocks use Conv1D, whose
// weight is (in, out) and bias (out). The LM head shares wte's tensor.
GradientProfile Gpt2Small() {
  GradientProfile p;
  p.name = "gpt2";
  p.description =
      "GPT-2 small, 124M (HuggingFace GPT2Model; LM head tied to wte)";
  p.published_parameters = 124439808;
  Builder b(&p);
  constexpr int64_t kVocab = 50257, kPositions = 1024, kHidden = 768,
                    kLayers = 12, kInner = 4 * kHidden;
  auto conv1d = [&b](const std::string& prefix, int64_t in, int64_t out) {
    b.Add(prefix + ".weight", {in, out});
    b.Add(prefix + ".bias", {out});
  };
  b.Add("wte.weight", {kVocab, kHidden});
  b.Add("wpe.weight", {kPositions, kHidden});
  for (int layer = 0; layer < kLayers; ++layer) {
    const std::string pre = absl::StrCat("h.", layer, ".");
    b.Norm(pre + "ln_1", kHidden);
    conv1d(pre + "attn.c_attn", kHidden, 3 * kHidden);
    conv1d(pre + "attn.c_proj", kHidden, kHidden);
    b.Norm(pre + "ln_2", kHidden);
    conv1d(pre + "mlp.c_fc", kHidden, kInner);
    conv1d(pre + "mlp.c_proj", kInner, kHidden);
  }
  b.Norm("ln_f", kHidden);
  return p;
}

// torchvision.models.mobilenet_v2 (width 1.0, 1000 classes): features.0
// (3x3 conv, stride 2, BN), 17 InvertedResiduals from the settings (t, c,
// n, s) below -- expansion 1: depthwise 3x3 + BN, project 1x1 + BN; else
// expand 1x1 + BN, depthwise 3x3 + BN, project 1x1 + BN -- features.18
// (1x1 conv to 1280, BN), classifier.1 Linear(1280, 1000). Convolutions
// have no bias.
GradientProfile MobileNetV2() {
  GradientProfile p;
  p.name = "mobilenet_v2";
  p.description =
      "MobileNetV2 (torchvision mobilenet_v2, width 1.0, 1000 classes; BN "
      "affine parameters, no running stats)";
  p.published_parameters = 3504872;
  Builder b(&p);
  b.Add("features.0.0.weight", {32, 3, 3, 3});
  b.Norm("features.0.1", 32);
  struct Setting {
    int64_t t, c, n;
  };
  const Setting settings[] = {{1, 16, 1},  {6, 24, 2},  {6, 32, 3}, {6, 64, 4},
                              {6, 96, 3},  {6, 160, 3}, {6, 320, 1}};
  int64_t in = 32;
  int index = 1;
  for (const Setting& s : settings) {
    for (int64_t i = 0; i < s.n; ++i, ++index) {
      const std::string pre = absl::StrCat("features.", index, ".conv.");
      const int64_t hidden = in * s.t;
      int layer = 0;
      if (s.t != 1) {  // expand
        b.Add(absl::StrCat(pre, layer, ".0.weight"), {hidden, in, 1, 1});
        b.Norm(absl::StrCat(pre, layer, ".1"), hidden);
        ++layer;
      }
      b.Add(absl::StrCat(pre, layer, ".0.weight"), {hidden, 1, 3, 3});
      b.Norm(absl::StrCat(pre, layer, ".1"), hidden);
      ++layer;
      b.Add(absl::StrCat(pre, layer, ".weight"), {s.c, hidden, 1, 1});
      b.Norm(absl::StrCat(pre, layer + 1), s.c);
      in = s.c;
    }
  }
  b.Add(absl::StrCat("features.", index, ".0.weight"), {1280, in, 1, 1});
  b.Norm(absl::StrCat("features.", index, ".1"), 1280);
  b.WeightAndBias("classifier.1", {1000, 1280});
  return p;
}

struct Entry {
  const char* name;
  GradientProfile (*build)();
};

constexpr Entry kProfiles[] = {
    {"resnet50", ResNet50},
    {"vgg16", Vgg16},
    {"bert-base", BertBase},
    {"gpt2", Gpt2Small},
    {"mobilenet_v2", MobileNetV2},
};

}  // namespace

int64_t GradientProfile::num_parameters() const {
  int64_t total = 0;
  for (const auto& [name, shape] : tensors) {
    int64_t size = 1;
    for (int64_t d : shape) size *= d;
    total += size;
  }
  return total;
}

absl::StatusOr<TensorLayout> GradientProfile::Layout() const {
  return TensorLayout::FromShapes(tensors);
}

std::vector<std::string> GradientProfileNames() {
  std::vector<std::string> names;
  for (const Entry& e : kProfiles) names.push_back(e.name);
  return names;
}

std::string GradientProfileNameList() {
  return absl::StrJoin(GradientProfileNames(), ", ");
}

namespace {

constexpr absl::string_view kMixPrefix = "tensors:";
constexpr int64_t kMaxMixTensors = 100000;
constexpr int64_t kMaxMixElements = int64_t{1} << 31;

absl::StatusOr<GradientProfile> TensorMix(absl::string_view spec) {
  GradientProfile p;
  p.name = absl::StrCat(kMixPrefix, spec);
  p.description = "a tensor mix (--profile=tensors:...)";
  int64_t total = 0;
  for (absl::string_view item : absl::StrSplit(spec, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, '*');
    int64_t elements = 0, count = 1;
    if (parts.size() > 2 || !absl::SimpleAtoi(parts[0], &elements) ||
        (parts.size() == 2 && !absl::SimpleAtoi(parts[1], &count)) ||
        elements < 1 || count < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor mix item '", item,
          "': expected E or E*C (E elements per tensor, C tensors, both "
          ">= 1)"));
    }
    if (count > kMaxMixTensors - p.num_tensors() ||
        elements > (kMaxMixElements - total) / count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor mix '", spec, "': more than ", kMaxMixTensors,
          " tensors or 2^31 elements"));
    }
    total += elements * count;
    for (int64_t i = 0; i < count; ++i) {
      p.tensors.push_back({absl::StrCat("t", p.tensors.size()), {elements}});
    }
  }
  p.published_parameters = total;
  return p;
}

}  // namespace

absl::StatusOr<GradientProfile> FindGradientProfile(absl::string_view name) {
  if (absl::StartsWith(name, kMixPrefix)) {
    return TensorMix(name.substr(kMixPrefix.size()));
  }
  for (const Entry& e : kProfiles) {
    if (name == e.name) return e.build();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown gradient profile '", name,
                   "' (known: ", GradientProfileNameList(), ")"));
}

}  // namespace ringside
