#include "common/timeline.h"

#include <glog/logging.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/stopwatch.h"

namespace ringside {
namespace {

int64_t Micros(double seconds) { return std::llround(seconds * 1e6); }

}  // namespace

absl::StatusOr<std::unique_ptr<Timeline>> Timeline::Open(
    const std::string& path, int rank) {
  if (path.empty()) return absl::InvalidArgumentError("timeline path is empty");
  const std::string resolved =
      absl::StrReplaceAll(path, {{"{rank}", absl::StrCat(rank)}});
  std::FILE* file = std::fopen(resolved.c_str(), "w");
  if (file == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot write timeline ", resolved, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<Timeline>(new Timeline(resolved, file, rank));
}

Timeline::Timeline(std::string path, std::FILE* file, int rank)
    : path_(std::move(path)), rank_(rank), file_(file) {
  absl::MutexLock lock(&mu_);
  std::fputs("[\n", file_);
  WriteEvent({{"name", "process_name"},
              {"ph", "M"},
              {"pid", rank_},
              {"args", {{"name", absl::StrCat("rank ", rank_)}}}});
  WriteEvent({{"name", "process_sort_index"},
              {"ph", "M"},
              {"pid", rank_},
              {"args", {{"sort_index", rank_}}}});
}

Timeline::~Timeline() {
  absl::Status s = Close();
  if (!s.ok()) LOG(ERROR) << s;
}

void Timeline::WriteEvent(const nlohmann::json& event) {
  if (!first_event_) std::fputs(",\n", file_);
  first_event_ = false;
  std::fputs(event.dump().c_str(), file_);
}

int Timeline::LaneId(absl::string_view lane) {
  auto it = lanes_.find(lane);
  if (it != lanes_.end()) return it->second;
  const int id = static_cast<int>(lanes_.size());
  lanes_.emplace(std::string(lane), id);
  WriteEvent({{"name", "thread_name"},
              {"ph", "M"},
              {"pid", rank_},
              {"tid", id},
              {"args", {{"name", std::string(lane)}}}});
  WriteEvent({{"name", "thread_sort_index"},
              {"ph", "M"},
              {"pid", rank_},
              {"tid", id},
              {"args", {{"sort_index", id}}}});
  return id;
}

void Timeline::Span(absl::string_view lane, absl::string_view phase,
                    double start_s, double end_s, const nlohmann::json& args) {
  absl::MutexLock lock(&mu_);
  if (file_ == nullptr) return;
  nlohmann::json event = {{"name", std::string(phase)},
                          {"cat", std::string(phase)},
                          {"ph", "X"},
                          {"pid", rank_},
                          {"tid", LaneId(lane)},
                          {"ts", Micros(start_s)},
                          {"dur", std::max<int64_t>(0, Micros(end_s) -
                                                           Micros(start_s))}};
  if (args.is_object() && !args.empty()) event["args"] = args;
  WriteEvent(event);
}

absl::Status Timeline::Close() {
  absl::MutexLock lock(&mu_);
  if (file_ == nullptr) return absl::OkStatus();
  std::fputs("\n]\n", file_);
  const bool write_failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (write_failed || close_failed) {
    return absl::DataLossError(
        absl::StrCat("writing timeline ", path_, " failed"));
  }
  return absl::OkStatus();
}

void RecordSpan(Timeline* timeline, absl::string_view lane,
                absl::string_view phase, double start_s, double end_s,
                const nlohmann::json& args) {
  if (timeline != nullptr) timeline->Span(lane, phase, start_s, end_s, args);
}

ScopedSpan::ScopedSpan(Timeline* timeline, std::string lane,
                       std::string phase, nlohmann::json args)
    : timeline_(timeline),
      lane_(std::move(lane)),
      phase_(std::move(phase)),
      args_(std::move(args)),
      start_s_(timeline ? NowSeconds() : 0.0) {}

ScopedSpan::~ScopedSpan() {
  RecordSpan(timeline_, lane_, phase_, start_s_, NowSeconds(), args_);
}

absl::Status MergeTimelines(const std::vector<std::string>& inputs,
                            const std::string& out_path) {
  nlohmann::json merged = nlohmann::json::array();
  for (const std::string& input : inputs) {
    std::ifstream in(input);
    if (!in) {
      return absl::NotFoundError(absl::StrCat("cannot read timeline ", input));
    }
    std::stringstream text;
    text << in.rdbuf();
    std::string body = text.str();
    // A writer killed before Close() leaves no closing bracket.
    const size_t last = body.find_last_not_of(" \n\r\t,");
    if (last != std::string::npos && body[last] != ']') {
      body.resize(last + 1);
      body += "\n]";
    }
    nlohmann::json events = nlohmann::json::parse(body, nullptr, false);
    if (events.is_discarded() || !events.is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat("timeline ", input, " is not a JSON event array"));
    }
    for (auto& event : events) merged.push_back(std::move(event));
  }
  std::ofstream out(out_path);
  out << merged.dump() << "\n";
  out.close();
  if (!out) {
    return absl::DataLossError(absl::StrCat("writing timeline ", out_path,
                                            " failed"));
  }
  return absl::OkStatus();
}

}  // namespace ringside
