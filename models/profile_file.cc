#include "models/profile_file.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace ringside {
namespace {

using json = nlohmann::json;

// Limits that keep a hostile file from exhausting memory.
constexpr size_t kMaxTensors = 1000000;
constexpr size_t kMaxRank = 16;
constexpr int64_t kMaxElements = int64_t{1} << 40;

class Reader {
 public:
  explicit Reader(absl::string_view source) : source_(source) {}

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("profile ", source_, ": ", what));
  }
  // Refuses fields of `object` outside `known`, naming the first.
  absl::Status OnlyKnown(const json& object, const std::set<std::string>& known,
                         absl::string_view where) const {
    for (const auto& [key, value] : object.items()) {
      if (!known.count(key)) {
        return Error(absl::StrCat(where, "unknown field \"", key,
                                  "\" (known: ", absl::StrJoin(known, ", "),
                                  ")"));
      }
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> String(const json& object, const char* field,
                                     absl::string_view where,
                                     bool required) const {
    if (!object.contains(field)) {
      if (required) {
        return Error(absl::StrCat(where, "missing field \"", field, "\""));
      }
      return std::string();
    }
    if (!object[field].is_string()) {
      return Error(absl::StrCat(where, "\"", field, "\" must be a string"));
    }
    return object[field].get<std::string>();
  }
  // A non-negative number of `field` (`integer`: a whole one).
  absl::StatusOr<double> Number(const json& object, const char* field,
                                absl::string_view where, bool integer) const {
    const json& v = object[field];
    const bool ok = integer ? (v.is_number_integer() && v.get<int64_t>() >= 0)
                            : (v.is_number() && std::isfinite(v.get<double>()) &&
                               v.get<double>() >= 0);
    if (!ok) {
      return Error(absl::StrCat(where, "\"", field, "\" must be a ",
                                integer ? "whole number" : "number", " >= 0"));
    }
    return v.get<double>();
  }

 private:
  std::string source_;
};

absl::Status ReadTensors(const Reader& r, const json& list,
                         GradientProfile& p) {
  if (!list.is_array() || list.empty()) {
    return r.Error("\"tensors\" must be a non-empty array");
  }
  if (list.size() > kMaxTensors) {
    return r.Error(absl::StrCat("more than ", kMaxTensors, " tensors"));
  }
  int64_t total = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    std::string where = absl::StrCat("tensor ", i, ": ");
    if (!t.is_object()) return r.Error(where + "must be an object");
    absl::StatusOr<std::string> name = r.String(t, "name", where, true);
    if (!name.ok()) return name.status();
    if (name->empty()) return r.Error(where + "\"name\" is empty");
    where = absl::StrCat("tensor ", i, " (", *name, "): ");
    if (absl::Status s = r.OnlyKnown(t, {"name", "shape", "dtype"}, where);
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::string> dtype = r.String(t, "dtype", where, false);
    if (!dtype.ok()) return dtype.status();
    if (!dtype->empty() && *dtype != "float32") {
      return r.Error(absl::StrCat(where, "dtype \"", *dtype,
                                  "\" (ringside's gradients are float32)"));
    }
    if (!t.contains("shape") || !t["shape"].is_array() ||
        t["shape"].size() > kMaxRank) {
      return r.Error(absl::StrCat(where, "\"shape\" must be an array of at "
                                  "most ", kMaxRank, " dimensions"));
    }
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (const json& d : t["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1) {
        return r.Error(where + "\"shape\" holds a dimension that is not a "
                               "whole number >= 1");
      }
      const int64_t dim = d.get<int64_t>();
      if (dim > kMaxElements / elements) {
        return r.Error(absl::StrCat(where, "more than 2^40 elements"));
      }
      elements *= dim;
      shape.push_back(dim);
    }
    if (elements > kMaxElements - total) {
      return r.Error("the tensors hold more than 2^40 elements in all");
    }
    total += elements;
    p.tensors.emplace_back(*std::move(name), std::move(shape));
  }
  return absl::OkStatus();
}

absl::Status ReadCompute(const Reader& r, const json& c, GradientProfile& p) {
  const std::string where = "compute: ";
  if (!c.is_object()) return r.Error(where + "must be an object");
  if (absl::Status s = r.OnlyKnown(
          c,
          {"batch_size", "device", "forward_ms", "backward_ms", "ready_ms",
           "peak_activation_bytes"},
          where);
      !s.ok()) {
    return s;
  }
  for (const char* required :
       {"batch_size", "device", "forward_ms", "backward_ms"}) {
    if (!c.contains(required)) {
      return r.Error(
          absl::StrCat(where, "missing field \"", required, "\""));
    }
  }
  ProfileCompute compute;
  absl::StatusOr<double> batch = r.Number(c, "batch_size", where, true);
  if (!batch.ok()) return batch.status();
  compute.batch_size = static_cast<int64_t>(*batch);
  if (compute.batch_size < 1) {
    return r.Error(where + "\"batch_size\" must be >= 1");
  }
  absl::StatusOr<std::string> device = r.String(c, "device", where, true);
  if (!device.ok()) return device.status();
  if (*device != "cpu" && *device != "cuda") {
    return r.Error(absl::StrCat(where, "\"device\" must be \"cpu\" or "
                                "\"cuda\", got \"", *device, "\""));
  }
  compute.device = *device;
  absl::StatusOr<double> forward = r.Number(c, "forward_ms", where, false);
  if (!forward.ok()) return forward.status();
  absl::StatusOr<double> backward = r.Number(c, "backward_ms", where, false);
  if (!backward.ok()) return backward.status();
  compute.forward_s = *forward / 1e3;
  compute.backward_s = *backward / 1e3;
  if (c.contains("ready_ms")) {
    const json& ready = c["ready_ms"];
    if (!ready.is_array() || ready.size() != p.tensors.size()) {
      return r.Error(absl::StrCat(
          where, "\"ready_ms\" must be an array of one time per tensor (",
          p.tensors.size(), ")"));
    }
    for (size_t i = 0; i < ready.size(); ++i) {
      if (!ready[i].is_number() || !std::isfinite(ready[i].get<double>()) ||
          ready[i].get<double>() < 0) {
        return r.Error(absl::StrCat(where, "\"ready_ms\" of tensor ", i,
                                    " (", p.tensors[i].first,
                                    ") must be a number >= 0"));
      }
      compute.ready_s.push_back(ready[i].get<double>() / 1e3);
    }
  }
  if (c.contains("peak_activation_bytes")) {
    absl::StatusOr<double> peak =
        r.Number(c, "peak_activation_bytes", where, true);
    if (!peak.ok()) return peak.status();
    compute.peak_activation_bytes = c["peak_activation_bytes"].get<int64_t>();
  }
  p.compute = std::move(compute);
  return absl::OkStatus();
}

}  // namespace

GradientProfile InLayoutOrder(GradientProfile profile) {
  if (profile.order != GradientProfile::Order::kGradientReady) return profile;
  std::reverse(profile.tensors.begin(), profile.tensors.end());
  if (profile.compute.has_value()) {
    std::reverse(profile.compute->ready_s.begin(),
                 profile.compute->ready_s.end());
  }
  profile.order = GradientProfile::Order::kDefinition;
  return profile;
}

bool IsProfilePath(absl::string_view value) {
  return absl::StrContains(value, '/') || absl::EndsWith(value, ".json");
}

absl::StatusOr<GradientProfile> ParseProfileJson(absl::string_view text,
                                                 absl::string_view source) {
  const Reader r(source);
  const json doc = json::parse(text.begin(), text.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (doc.is_discarded()) return r.Error("not valid JSON");
  if (!doc.is_object()) return r.Error("must be a JSON object");
  if (absl::Status s = r.OnlyKnown(
          doc,
          {"format", "name", "description", "order", "published_parameters",
           "tensors", "compute"},
          "");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> format = r.String(doc, "format", "", true);
  if (!format.ok()) return format.status();
  if (*format != kProfileFormat) {
    return r.Error(absl::StrCat("\"format\" is \"", *format,
                                "\"; this ringside reads \"", kProfileFormat,
                                "\""));
  }
  GradientProfile p;
  absl::StatusOr<std::string> name = r.String(doc, "name", "", true);
  if (!name.ok()) return name.status();
  if (name->empty()) return r.Error("\"name\" is empty");
  p.name = *name;
  absl::StatusOr<std::string> description =
      r.String(doc, "description", "", false);
  if (!description.ok()) return description.status();
  p.description = *description;
  absl::StatusOr<std::string> order = r.String(doc, "order", "", false);
  if (!order.ok()) return order.status();
  if (order->empty() || *order == "definition") {
    p.order = GradientProfile::Order::kDefinition;
  } else if (*order == "gradient_ready") {
    p.order = GradientProfile::Order::kGradientReady;
  } else {
    return r.Error(absl::StrCat("\"order\" must be \"definition\" or "
                                "\"gradient_ready\", got \"", *order, "\""));
  }
  if (!doc.contains("tensors")) return r.Error("missing field \"tensors\"");
  if (absl::Status s = ReadTensors(r, doc["tensors"], p); !s.ok()) return s;
  if (doc.contains("published_parameters")) {
    absl::StatusOr<double> published =
        r.Number(doc, "published_parameters", "", true);
    if (!published.ok()) return published.status();
    p.published_parameters = doc["published_parameters"].get<int64_t>();
    if (p.published_parameters != p.num_parameters()) {
      return r.Error(absl::StrCat(
          "\"published_parameters\" is ", p.published_parameters,
          " but the tensors hold ", p.num_parameters()));
    }
  } else {
    p.published_parameters = p.num_parameters();
  }
  if (doc.contains("compute")) {
    if (absl::Status s = ReadCompute(r, doc["compute"], p); !s.ok()) return s;
  }
  return p;
}

absl::StatusOr<GradientProfile> ReadProfileFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("profile file ", path, ": cannot be opened"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseProfileJson(text.str(), path);
}

std::string ProfileToJson(const GradientProfile& p) {
  // Fields in the documented order, one tensor a line: a file people read
  // and diff.
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  doc["format"] = kProfileFormat;
  doc["name"] = p.name;
  if (!p.description.empty()) doc["description"] = p.description;
  doc["order"] = p.order == GradientProfile::Order::kGradientReady
                     ? "gradient_ready"
                     : "definition";
  doc["published_parameters"] = p.published_parameters;
  if (p.compute.has_value()) {
    const ProfileCompute& c = *p.compute;
    nlohmann::ordered_json compute = {{"batch_size", c.batch_size},
                                      {"device", c.device},
                                      {"forward_ms", c.forward_s * 1e3},
                                      {"backward_ms", c.backward_s * 1e3}};
    if (!c.ready_s.empty()) {
      std::vector<double> ready_ms;
      for (double s : c.ready_s) ready_ms.push_back(s * 1e3);
      compute["ready_ms"] = ready_ms;
    }
    if (c.peak_activation_bytes >= 0) {
      compute["peak_activation_bytes"] = c.peak_activation_bytes;
    }
    doc["compute"] = std::move(compute);
  }
  std::string out = doc.dump(2);
  out.resize(out.size() - 2);  // "\n}": the tensors go last
  out += ",\n  \"tensors\": [\n";
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    nlohmann::ordered_json t = {{"name", p.tensors[i].first},
                                {"shape", p.tensors[i].second},
                                {"dtype", "float32"}};
    out += "    " + t.dump() + (i + 1 < p.tensors.size() ? ",\n" : "\n");
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace ringside
