// Timeline: the file is a JSON event array that Perfetto loads (process and
// lane names as metadata, complete events with microsecond ts/dur), "{rank}"
// is substituted, concurrent spans all land, null timelines record nothing,
// and MergeTimelines concatenates per-rank files, truncated ones included.
#include "common/timeline.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ringside {
namespace {

using nlohmann::json;

std::string TmpPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Parses a file that must be one JSON array (strictly: no tolerance).
json ParseFile(const std::string& path) {
  json j = json::parse(ReadText(path), nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << path << " is not valid JSON";
  EXPECT_TRUE(j.is_array()) << path;
  return j;
}

// Complete ("X") events only.
std::vector<json> Spans(const json& events) {
  std::vector<json> out;
  for (const json& e : events) {
    if (e.value("ph", "") == "X") out.push_back(e);
  }
  return out;
}

// (pid, tid) -> lane name, from the thread_name metadata.
std::map<std::pair<int, int>, std::string> LaneNames(const json& events) {
  std::map<std::pair<int, int>, std::string> lanes;
  for (const json& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
      lanes[{e["pid"].get<int>(), e["tid"].get<int>()}] =
          e["args"]["name"].get<std::string>();
    }
  }
  return lanes;
}

TEST(TimelineTest, WritesMetadataAndSpansInMicroseconds) {
  const std::string path = TmpPath("basic.json");
  absl::StatusOr<std::unique_ptr<Timeline>> t = Timeline::Open(path, 3);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->path(), path);
  (*t)->Span("step", "FORWARD_BACKWARD", 10.0, 10.25, {{"step", 7}});
  (*t)->Span("fc0.weight", "ALLREDUCE", 10.25, 10.2500015);
  (*t)->Span("step", "FINISH_STEP", 10.5, 10.25);  // end before start: dur 0
  ASSERT_TRUE((*t)->Close().ok());
  ASSERT_TRUE((*t)->Close().ok());         // idempotent
  (*t)->Span("step", "LATE", 11.0, 12.0);  // dropped after Close

  const json events = ParseFile(path);
  bool process_named = false;
  for (const json& e : events) {
    EXPECT_EQ(e["pid"], 3) << e;
    if (e["name"] == "process_name") {
      EXPECT_EQ(e["ph"], "M");
      EXPECT_EQ(e["args"]["name"], "rank 3");
      process_named = true;
    }
  }
  EXPECT_TRUE(process_named);
  const auto lanes = LaneNames(events);
  ASSERT_EQ(lanes.size(), 2u);
  const std::vector<json> spans = Spans(events);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0]["name"], "FORWARD_BACKWARD");
  EXPECT_EQ(lanes.at({3, spans[0]["tid"].get<int>()}), "step");
  EXPECT_EQ(spans[0]["ts"].get<int64_t>(), 10000000);
  EXPECT_EQ(spans[0]["dur"].get<int64_t>(), 250000);
  EXPECT_EQ(spans[0]["args"]["step"], 7);
  EXPECT_EQ(spans[1]["name"], "ALLREDUCE");
  EXPECT_EQ(lanes.at({3, spans[1]["tid"].get<int>()}), "fc0.weight");
  EXPECT_EQ(spans[1]["ts"].get<int64_t>(), 10250000);
  EXPECT_EQ(spans[1]["dur"].get<int64_t>(), 2);  // 1.5 us, rounded
  EXPECT_FALSE(spans[1].contains("args"));
  EXPECT_EQ(spans[2]["dur"].get<int64_t>(), 0);
  EXPECT_EQ(spans[2]["tid"], spans[0]["tid"]);  // same lane, same track
}

TEST(TimelineTest, SubstitutesRankInPath) {
  absl::StatusOr<std::unique_ptr<Timeline>> t =
      Timeline::Open(TmpPath("job.{rank}.json"), 7);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->path(), TmpPath("job.7.json"));
  ASSERT_TRUE((*t)->Close().ok());
  const json events = ParseFile(TmpPath("job.7.json"));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["pid"], 7);
}

TEST(TimelineTest, UnwritablePathIsAnErrorNamingIt) {
  absl::StatusOr<std::unique_ptr<Timeline>> t =
      Timeline::Open(TmpPath("no/such/folder/t.json"), 0);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("no/such/folder/t.json"),
            std::string::npos)
      << t.status();
  EXPECT_FALSE(Timeline::Open("", 0).ok());
}

TEST(TimelineTest, ConcurrentSpansAllLand) {
  const std::string path = TmpPath("threads.json");
  absl::StatusOr<std::unique_ptr<Timeline>> t = Timeline::Open(path, 0);
  ASSERT_TRUE(t.ok()) << t.status();
  constexpr int kThreads = 8, kSpans = 250;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&t, i] {
      for (int j = 0; j < kSpans; ++j) {
        // Half the lanes shared between threads, half private.
        const std::string lane =
            j % 2 ? absl::StrCat("shared ", j % 4) : absl::StrCat("own ", i);
        (*t)->Span(lane, "WORK", j, j + 0.5, {{"thread", i}, {"j", j}});
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_TRUE((*t)->Close().ok());

  const json events = ParseFile(path);
  const std::vector<json> spans = Spans(events);
  ASSERT_EQ(spans.size(), static_cast<size_t>(kThreads * kSpans));
  const auto lanes = LaneNames(events);
  EXPECT_EQ(lanes.size(), static_cast<size_t>(kThreads + 2));
  std::set<std::string> names;
  for (const auto& [key, name] : lanes) names.insert(name);
  EXPECT_EQ(names.size(), lanes.size()) << "a lane was named twice";
  std::set<std::pair<int, int>> seen;
  for (const json& s : spans) {
    ASSERT_TRUE(lanes.count({0, s["tid"].get<int>()})) << s;
    const int i = s["args"]["thread"].get<int>();
    const int j = s["args"]["j"].get<int>();
    const std::string want =
        j % 2 ? absl::StrCat("shared ", j % 4) : absl::StrCat("own ", i);
    EXPECT_EQ(lanes.at({0, s["tid"].get<int>()}), want);
    seen.insert({i, j});
  }
  EXPECT_EQ(seen.size(), spans.size());
}

TEST(TimelineTest, NullTimelineRecordsNothing) {
  RecordSpan(nullptr, "step", "X", 0, 1);
  { ScopedSpan span(nullptr, "step", "X"); }
  const std::string path = TmpPath("scoped.json");
  {
    absl::StatusOr<std::unique_ptr<Timeline>> t = Timeline::Open(path, 1);
    ASSERT_TRUE(t.ok()) << t.status();
    RecordSpan(t->get(), "step", "RECORDED", 1, 2);
    { ScopedSpan span(t->get(), "step", "SCOPED", {{"k", 1}}); }
  }  // the destructor closes
  const std::vector<json> spans = Spans(ParseFile(path));
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["name"], "RECORDED");
  EXPECT_EQ(spans[1]["name"], "SCOPED");
  EXPECT_EQ(spans[1]["args"]["k"], 1);
  EXPECT_GE(spans[1]["dur"].get<int64_t>(), 0);
}

// Two ranks' files, the second cut short the way a killed writer leaves it.
TEST(TimelineTest, MergeConcatenatesRanksIncludingTruncatedFile) {
  std::vector<std::string> parts;
  for (int rank = 0; rank < 2; ++rank) {
    absl::StatusOr<std::unique_ptr<Timeline>> t =
        Timeline::Open(TmpPath("part.{rank}.json"), rank);
    ASSERT_TRUE(t.ok()) << t.status();
    (*t)->Span("step", "FORWARD_BACKWARD", rank, rank + 1);
    (*t)->Span("fc0.bias", "ALLREDUCE", rank + 1, rank + 2);
    ASSERT_TRUE((*t)->Close().ok());
    parts.push_back((*t)->path());
  }
  std::string text = ReadText(parts[1]);
  const size_t bracket = text.rfind(']');
  ASSERT_NE(bracket, std::string::npos);
  text.resize(bracket);  // no closing bracket: as after a crash
  std::ofstream(parts[1], std::ios::trunc) << text;
  ASSERT_TRUE(json::parse(text, nullptr, false).is_discarded());

  const std::string merged = TmpPath("merged.json");
  ASSERT_TRUE(MergeTimelines(parts, merged).ok());
  const json events = ParseFile(merged);
  std::map<int, int> spans_per_pid;
  std::set<std::pair<int, std::string>> process_names;
  for (const json& e : events) {
    if (e["ph"] == "X") ++spans_per_pid[e["pid"].get<int>()];
    if (e["name"] == "process_name") {
      process_names.emplace(e["pid"].get<int>(),
                            e["args"]["name"].get<std::string>());
    }
  }
  EXPECT_EQ(spans_per_pid, (std::map<int, int>{{0, 2}, {1, 2}}));
  EXPECT_EQ(process_names, (std::set<std::pair<int, std::string>>{
                               {0, "rank 0"}, {1, "rank 1"}}));
  EXPECT_EQ(LaneNames(events).size(), 4u);  // two lanes per rank
}

TEST(TimelineTest, MergeRejectsMissingAndGarbledInputs) {
  const std::string out = TmpPath("merge_out.json");
  absl::Status missing = MergeTimelines({TmpPath("absent.json")}, out);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  const std::string garbled = TmpPath("garbled.json");
  std::ofstream(garbled) << "[{\"name\": oops";
  absl::Status bad = MergeTimelines({garbled}, out);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument) << bad;
  EXPECT_NE(bad.message().find("garbled.json"), std::string::npos) << bad;
}

}  // namespace
}  // namespace ringside
