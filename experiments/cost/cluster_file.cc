#include "experiments/cost/cluster_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "experiments/cost/builtin_link_tables.h"

namespace ringside {
namespace {

// One field's parser: sets the spec from the value, or says what is wrong.
using FieldSetter =
    std::function<std::string(const std::string& value, ClusterSpec& spec)>;

FieldSetter Int(int64_t ClusterSpec::*field, int64_t min) {
  return [field, min](const std::string& v, ClusterSpec& s) -> std::string {
    int64_t x = 0;
    if (!absl::SimpleAtoi(v, &x)) return absl::StrCat("'", v, "' is not an integer");
    if (x < min) return absl::StrCat(x, " is below ", min);
    s.*field = x;
    return "";
  };
}

FieldSetter Real(double ClusterSpec::*field, double min, bool strict) {
  return [=](const std::string& v, ClusterSpec& s) -> std::string {
    double x = 0;
    if (!absl::SimpleAtod(v, &x) || !std::isfinite(x)) {
      return absl::StrCat("'", v, "' is not a finite number");
    }
    if (strict ? !(x > min) : !(x >= min)) {
      return absl::StrCat(x, " must be ", strict ? "> " : ">= ", min);
    }
    s.*field = x;
    return "";
  };
}

FieldSetter Text(std::string ClusterSpec::*field) {
  return [field](const std::string& v, ClusterSpec& s) -> std::string {
    if (v.empty()) return "empty value";
    s.*field = v;
    return "";
  };
}

FieldSetter Files(LinkPricing ClusterSpec::*link) {
  return [link](const std::string& v, ClusterSpec& s) -> std::string {
    for (absl::string_view f : absl::StrSplit(v, ',')) {
      const std::string file(absl::StripAsciiWhitespace(f));
      if (file.empty()) return absl::StrCat("'", v, "' has an empty file name");
      (s.*link).files.push_back(file);
    }
    return "";
  };
}

FieldSetter LinkName(LinkPricing ClusterSpec::*link) {
  return [link](const std::string& v, ClusterSpec& s) -> std::string {
    if (v.empty()) return "empty value";
    (s.*link).link = v;
    return "";
  };
}

const std::map<std::string, FieldSetter>& Fields() {
  static const auto* fields = new std::map<std::string, FieldSetter>{
      {"nodes", Int(&ClusterSpec::nodes, 1)},
      {"gpus_per_node", Int(&ClusterSpec::gpus_per_node, 1)},
      {"intra_node_gbit", Real(&ClusterSpec::intra_node_gbit, 0, true)},
      {"intra_node_latency_us",
       Real(&ClusterSpec::intra_node_latency_us, 0, false)},
      {"inter_node_gbit", Real(&ClusterSpec::inter_node_gbit, 0, true)},
      {"inter_node_latency_us",
       Real(&ClusterSpec::inter_node_latency_us, 0, false)},
      {"compute_ms", Real(&ClusterSpec::compute_ms, 0, true)},
      {"compute_from", Text(&ClusterSpec::compute_from)},
      {"profile", Text(&ClusterSpec::profile)},
      {"model_bytes", Int(&ClusterSpec::model_bytes, 1)},
      {"tensors", Int(&ClusterSpec::tensors, 1)},
      {"batch_size", Int(&ClusterSpec::batch_size, 1)},
      {"servers", Int(&ClusterSpec::servers, 1)},
      {"servers_per_node", Int(&ClusterSpec::servers_per_node, 0)},
      {"server_hosts", Int(&ClusterSpec::server_hosts, 0)},
      {"compute_slowdown", Real(&ClusterSpec::compute_slowdown, 0, false)},
      {"sync_fixed_ms", Real(&ClusterSpec::sync_fixed_ms, 0, false)},
      {"optimizer", Text(&ClusterSpec::optimizer)},
      {"momentum", Real(&ClusterSpec::momentum, 0, false)},
      {"intra_node_collectives", Files(&ClusterSpec::intra_node)},
      {"inter_node_collectives", Files(&ClusterSpec::inter_node)},
      {"intra_node_link", LinkName(&ClusterSpec::intra_node)},
      {"inter_node_link", LinkName(&ClusterSpec::inter_node)},
  };
  return *fields;
}

}  // namespace

absl::StatusOr<ClusterSpec> ParseClusterFile(const std::string& text,
                                             const std::string& path) {
  ClusterSpec spec;
  spec.path = path;
  std::set<std::string> seen;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const std::string line(
        absl::StripAsciiWhitespace(raw.substr(0, raw.find('#'))));
    if (line.empty()) continue;
    const std::string where = absl::StrCat(path, ":", line_number, ": ");
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "'", line, "' is not KEY = VALUE"));
    }
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, eq)));
    const std::string value(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    const auto field = Fields().find(key);
    if (field == Fields().end()) {
      std::vector<std::string> known;
      for (const auto& [name, setter] : Fields()) known.push_back(name);
      return absl::InvalidArgumentError(
          absl::StrCat(where, "field '", key, "': unknown (known: ",
                       absl::StrJoin(known, ", "), ")"));
    }
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "field '", key, "': given twice"));
    }
    if (const std::string bad = field->second(value, spec); !bad.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "field '", key, "': ", bad));
    }
  }
  for (const char* required :
       {"nodes", "gpus_per_node", "intra_node_gbit", "intra_node_latency_us",
        "inter_node_gbit", "inter_node_latency_us"}) {
    if (seen.count(required) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": field '", required, "' is missing"));
    }
  }
  if (seen.count("compute_ms") + seen.count("compute_from") != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": give exactly one of compute_ms and compute_from"));
  }
  const bool explicit_model = seen.count("model_bytes") || seen.count("tensors");
  if (seen.count("profile") == explicit_model ||
      (explicit_model &&
       (seen.count("model_bytes") == 0 || seen.count("tensors") == 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": give either profile or both model_bytes and tensors"));
  }
  if (spec.servers_per_node == 0 && spec.server_hosts == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": fields 'servers_per_node' and 'server_hosts' are both 0: "
        "byteps would have no summation servers"));
  }
  if (!spec.compute_from.empty() &&
      spec.compute_from.find(':') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": field 'compute_from': '", spec.compute_from,
        "' is not PATH:STRATEGY (e.g. out/compare.json:ring)"));
  }
  return spec;
}

absl::StatusOr<double> ComputeFromCompareJson(const std::string& json_path,
                                              const std::string& strategy) {
  std::ifstream in(json_path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", json_path));
  }
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.contains("cost_model") ||
      !j["cost_model"].contains("runs")) {
    return absl::InvalidArgumentError(absl::StrCat(
        json_path, " is not compare's JSON (no cost_model.runs)"));
  }
  std::set<std::string> names;
  double best_ms = 0;
  int64_t best_n = -1;
  for (const nlohmann::json& run : j["cost_model"]["runs"]) {
    const std::string name = run.value("strategy", "");
    names.insert(name);
    const int64_t n = run.value("workers", int64_t{0});
    const double compute_s = run.value("compute_s", 0.0);
    if (name != strategy || compute_s <= 0) continue;
    if (best_n < 0 || n < best_n) {
      best_n = n;
      best_ms = compute_s * 1e3;
    }
  }
  if (best_n < 0) {
    return absl::NotFoundError(absl::StrCat(
        json_path, " has no run of '", strategy, "' with its compute (runs: ",
        absl::StrJoin(names, ", "), ")"));
  }
  return best_ms;
}

absl::StatusOr<ClusterSpec> ReadClusterFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<ClusterSpec> spec = ParseClusterFile(text.str(), path);
  if (!spec.ok()) return spec;
  if (absl::Status s = ResolveLinkPricing(*spec); !s.ok()) return s;
  if (spec->compute_from.empty()) return spec;
  const size_t colon = spec->compute_from.rfind(':');
  std::filesystem::path json = spec->compute_from.substr(0, colon);
  if (json.is_relative()) {
    json = std::filesystem::path(path).parent_path() / json;
  }
  absl::StatusOr<double> ms = ComputeFromCompareJson(
      json.string(), spec->compute_from.substr(colon + 1));
  if (!ms.ok()) {
    return absl::Status(ms.status().code(),
                        absl::StrCat(path, ": field 'compute_from': ",
                                     ms.status().message()));
  }
  spec->compute_ms = *ms;
  return spec;
}

namespace {

// One link's pricing (ResolveLinkPricing): `prefix` is "intra_node" or
// "inter_node".
absl::Status ResolveLink(const std::string& cluster_path,
                         const std::string& prefix, double gbit,
                         double latency_us, LinkPricing& link) {
  const std::string files_key = prefix + "_collectives";
  const std::string link_key = prefix + "_link";
  auto bad = [&](const std::string& key, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(cluster_path, ": field '", key, "': ", what));
  };
  if (!link.files.empty() && !link.link.empty()) {
    return bad(link_key, absl::StrCat("give one of ", files_key, " and ",
                                      link_key, ", not both"));
  }
  if (link.files.empty() && link.link.empty()) {
    link.measured = nullptr;
    link.description =
        absl::StrFormat("nominal %.4g Gbit/s, %.3g us", gbit, latency_us);
    return absl::OkStatus();
  }
  MeasuredCollectives measured;
  std::string key = files_key;
  if (!link.files.empty()) {
    for (const std::string& file : link.files) {
      std::filesystem::path p = file;
      if (p.is_relative()) {
        p = std::filesystem::path(cluster_path).parent_path() / p;
      }
      absl::StatusOr<MeasuredCollectives> one =
          MeasuredCollectives::Read(p.string());
      if (!one.ok()) return bad(files_key, one.status().message());
      if (absl::Status s = measured.Merge(*one); !s.ok()) {
        return bad(files_key, s.message());
      }
    }
    link.description = absl::StrCat("measured: ", absl::StrJoin(link.files, ", "),
                                    " (", measured.Summary(), ")");
  } else {
    key = link_key;
    std::string table;
    absl::StatusOr<MeasuredCollectives> builtin =
        FindBuiltinLinkTable(link.link, &table);
    if (!builtin.ok()) return bad(link_key, builtin.status().message());
    measured = *std::move(builtin);
    double scale = 1;
    if (measured.nominal_gbit() > 0) scale = gbit / measured.nominal_gbit();
    measured.ScaleBandwidth(scale);
    link.description = absl::StrFormat(
        "built-in %s (%s, %s; measured at %.4g Gbit/s nominal, scaled x%.3g "
        "to %.4g Gbit/s; source: %s)",
        table, measured.link(), measured.Summary(), measured.nominal_gbit(),
        scale, gbit, absl::StrJoin(measured.sources(), "; "));
  }
  if (!measured.Has(CollectiveOp::kAllReduce)) {
    return bad(key, "no all_reduce run: the links are priced from the "
                    "all-reduce's times");
  }
  link.measured =
      std::make_shared<const MeasuredCollectives>(std::move(measured));
  return absl::OkStatus();
}

// The α-β line of a link at n ranks: the fit through the measured
// all-reduce at ring's bucket sizes, or the nominal rate and latency.
void PriceLink(const LinkPricing& link, double gbit, double latency_us,
               const CostInputs& in, int64_t ranks, double& bandwidth_Bps,
               double& latency_s) {
  bandwidth_Bps = gbit * 1e9 / 8;
  latency_s = latency_us * 1e-6;
  if (link.measured == nullptr || ranks < 2) return;
  const double M = in.model_bytes;
  const double large =
      in.bucket_bytes > 0
          ? std::min(in.bucket_bytes, M)
          : M / static_cast<double>(std::max<int64_t>(in.num_tensors, 1));
  const double small = std::min(in.first_bucket_bytes, large);
  const std::optional<FittedLink> fit =
      FitAllReduceLink(*link.measured, ranks, small, large);
  if (!fit) return;
  bandwidth_Bps = fit->bandwidth_Bps;
  if (fit->latency_s.has_value()) latency_s = *fit->latency_s;
}

}  // namespace

std::string ClusterSpec::FrameworkTermsDescription() const {
  return absl::StrFormat(
      "compute slowdown under communication %.1f%% (%s); the framework's "
      "fixed cost a step %.3g ms (%s)",
      100 * ComputeSlowdown(),
      compute_slowdown >= 0 ? "given in the cluster file"
                            : kComputeSlowdownSource,
      sync_fixed_ms,
      sync_fixed_ms > 0
          ? "given in the cluster file"
          : "not priced: measure it with experiments/bench/"
            "contention_bench.py");
}

absl::Status ResolveLinkPricing(ClusterSpec& spec) {
  if (absl::Status s =
          ResolveLink(spec.path, "intra_node", spec.intra_node_gbit,
                      spec.intra_node_latency_us, spec.intra_node);
      !s.ok()) {
    return s;
  }
  return ResolveLink(spec.path, "inter_node", spec.inter_node_gbit,
                     spec.inter_node_latency_us, spec.inter_node);
}

CostInputs ClusterInputs(const ClusterSpec& cluster, const CostInputs& base,
                         int64_t workers) {
  CostInputs in = base;
  in.workers = workers;
  in.compute_s = cluster.compute_ms * 1e-3;
  in.servers = cluster.servers > 0 ? cluster.servers : cluster.nodes;
  in.servers_per_host = cluster.servers_per_node;
  in.server_hosts = cluster.server_hosts;
  in.compute_slowdown = cluster.ComputeSlowdown();
  in.sync_fixed_s = cluster.sync_fixed_ms * 1e-3;
  const bool one_host = workers <= cluster.gpus_per_node;
  if (one_host) {
    PriceLink(cluster.intra_node, cluster.intra_node_gbit,
              cluster.intra_node_latency_us, in, workers, in.bandwidth_Bps,
              in.latency_s);
  } else {
    PriceLink(cluster.inter_node, cluster.inter_node_gbit,
              cluster.inter_node_latency_us, in, workers, in.bandwidth_Bps,
              in.latency_s);
  }
  in.ranks_per_host = cluster.gpus_per_node;
  in.workers_per_link = one_host ? 1 : cluster.gpus_per_node;
  PriceLink(cluster.intra_node, cluster.intra_node_gbit,
            cluster.intra_node_latency_us, in,
            std::min(workers, cluster.gpus_per_node), in.intra_bandwidth_Bps,
            in.intra_latency_s);
  return in;
}

}  // namespace ringside
