#include "experiments/report/plots.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "experiments/job/process_group.h"

namespace ringside {
namespace {

// A label as one double-quoted field of an inline data block.
std::string DataLabel(const std::string& s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "'"}}), "\"");
}

std::string Title(absl::string_view first, const PlotOptions& o) {
  return GnuplotString(o.subtitle.empty()
                           ? std::string(first)
                           : absl::StrCat(first, "\n", o.subtitle));
}

// Settings every plot starts from (`reset` keeps the data blocks).
std::string Preamble(const PlotOptions& o, const std::string& file,
                     absl::string_view title, int width) {
  return absl::StrCat("reset\n", "set terminal ", o.terminal, " size ", width,
                      ",", o.height, " noenhanced\n", "set output ",
                      GnuplotString(absl::StrCat(o.dir, "/", file)), "\n",
                      "set title ", Title(title, o), "\n", "set grid ytics\n",
                      "set border 3\n", "set tics nomirror\n");
}

// A bar chart's strategy labels rotated so that long ones ("SPS [server
// beside rank 0, b=1] (emulated)") do not run into each other at any
// number of strategies, with the bottom margin (in character heights) the
// longest needs.
std::string RotatedLabels(const std::vector<std::string>& labels) {
  size_t longest = 0;
  for (const std::string& l : labels) longest = std::max(longest, l.size());
  // At 35 degrees a label reaches down about 0.3 character heights a
  // character; at most 16 of the chart's 540 pixels' ~38 lines.
  const int margin = std::min<int>(
      16, 2 + static_cast<int>(0.3 * static_cast<double>(longest)));
  return absl::StrCat("set xtics rotate by 35 right\n", "set bmargin ",
                      margin, "\n");
}

std::string Pct(double fraction) {
  return absl::StrFormat("%.2f", 100 * fraction);
}

// "n = 2 workers", "n = 1 worker".
std::string OfN(int n) {
  return absl::StrCat("n = ", n, n == 1 ? " worker" : " workers");
}

// A plot clause drawing `data` (e.g. "$speedup using 1:2") as a line with
// points titled `title`, the `index`-th of its plot: gnuplot's default
// colours repeat after 8, so from the 9th on the line is dashed and the
// points are squares.
std::string SeriesClause(absl::string_view data, absl::string_view title,
                         size_t index) {
  const char* style = index < 8 ? "pointtype 7" : "pointtype 5 dashtype 2";
  return absl::StrCat(data, " with linespoints ", style, " linewidth 2 title ",
                      GnuplotString(title));
}

// A plot clause drawing `expression` (e.g. "x") as a gray dashed reference
// line titled `title`.
std::string ReferenceClause(absl::string_view expression,
                            absl::string_view title) {
  return absl::StrCat(expression,
                      " with lines dashtype 2 linecolor rgb \"gray40\" title ",
                      GnuplotString(title));
}

// "set ytics (...)" with six labelled values spaced evenly on a log scale
// between the lowest and highest loss of `rows`' curves (and the target);
// gnuplot labels only whole decades on a log axis, which a narrow range may
// not hold.
std::string LogTics(const std::vector<ReportRow>& rows, double target) {
  double lo = target > 0 ? target : 0, hi = target;
  for (const ReportRow& r : rows) {
    for (const EvalPoint& p : r.curve) {
      if (!(p.loss > 0)) continue;
      lo = lo > 0 ? std::min(lo, p.loss) : p.loss;
      hi = std::max(hi, p.loss);
    }
  }
  if (!(lo > 0) || !(hi > lo)) return "";
  std::vector<std::string> tics;
  for (int i = 0; i <= 5; ++i) {
    const double v = lo * std::pow(hi / lo, i / 5.0);
    tics.push_back(absl::StrFormat("\"%.3g\" %.6g", v, v));
  }
  return absl::StrCat("set ytics (", absl::StrJoin(tics, ", "), ")\n");
}

// Per n where the baseline or a run at n has a curve: one data block per
// such row ("step samples train_wall_s loss" lines), then
// loss_time_n<N>.png and loss_samples_n<N>.png, the loss on a log scale (a
// diverging run would flatten the others).
void AppendLossPlots(const std::vector<ReportRow>& rows,
                     const std::vector<int>& workers, const PlotOptions& o,
                     PlotScript* script) {
  struct Axis {
    const char* file;     // file name prefix
    int column;           // x column of the data blocks
    const char* against;  // for titles and captions
    const char* label;    // x axis label
  };
  const Axis axes[] = {{"loss_time", 3, "training wall time",
                        "training wall time (s), evaluations excluded"},
                       {"loss_samples", 2, "global training samples",
                        "global training samples"}};
  std::string& t = script->text;
  for (int n : workers) {
    std::vector<ReportRow> table = UtilizationRows(rows, n);
    table.erase(
        std::remove_if(table.begin(), table.end(),
                       [](const ReportRow& r) { return r.curve.empty(); }),
        table.end());
    if (table.empty()) continue;
    std::vector<std::string> blocks;
    for (const ReportRow& r : table) {
      blocks.push_back(absl::StrCat("$loss_n", n, "_", blocks.size()));
      absl::StrAppend(&t, "\n# Validation loss of ", r.strategy, ", ", OfN(n),
                      ": step samples train_wall_s loss\n", blocks.back(),
                      " << EOD\n");
      for (const EvalPoint& p : r.curve) {
        absl::StrAppend(&t, p.step, " ", p.samples, " ",
                        absl::StrFormat("%.4f %.6g", p.train_wall_s, p.loss),
                        "\n");
      }
      absl::StrAppend(&t, "EOD\n");
    }
    for (const Axis& axis : axes) {
      const std::string file = absl::StrCat(axis.file, "_n", n, ".png");
      std::vector<std::string> clauses;
      if (o.target_loss > 0) {
        clauses.push_back(ReferenceClause(
            absl::StrFormat("%.6g", o.target_loss),
            absl::StrFormat("target loss %.4f", o.target_loss)));
      }
      for (size_t i = 0; i < table.size(); ++i) {
        clauses.push_back(
            SeriesClause(absl::StrCat(blocks[i], " using ", axis.column, ":4"),
                         table[i].display_name, i));
      }
      absl::StrAppend(&t,
                      Preamble(o, file,
                               absl::StrCat("Validation loss against ",
                                            axis.against, ", ", OfN(n)),
                               o.width),
                      "set xlabel \"", axis.label, "\"\n",
                      "set ylabel \"validation loss (rank 0), log scale\"\n",
                      "set xrange [0:*]\n", "set logscale y\n",
                      // The data's own range, not whole decades, with
                      // labelled tics inside it.
                      "set autoscale yfix\n",
                      "set offsets 0, 0, graph 0.05, graph 0.05\n",
                      LogTics(table, o.target_loss),
                      "set key right top\n", "plot ",
                      absl::StrJoin(clauses, ", \\\n     "), "\n");
      script->images.push_back(
          {file, absl::StrCat("Validation loss (rank 0) against ", axis.against,
                              " by strategy, ", OfN(n))});
    }
  }
}

}  // namespace

std::string GnuplotString(absl::string_view s) {
  return absl::StrCat(
      "\"",
      absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}),
      "\"");
}

PlotScript GnuplotScript(const std::vector<ReportRow>& rows,
                         const std::vector<int>& workers,
                         const PlotOptions& o) {
  PlotScript script;
  std::string& t = script.text;
  const std::string compute = ComputeLabel(rows);
  absl::StrAppend(&t, "# Plots of a ringside compare sweep; run: gnuplot ",
                  "plots.gp\n", "set encoding utf8\n");

  // Per-worker utilization per strategy, one bar chart per n.
  for (int n : workers) {
    const std::vector<ReportRow> table = UtilizationRows(rows, n);
    if (table.empty()) continue;
    const std::string block = absl::StrCat("$util_n", n);
    absl::StrAppend(&t, "\n# Per-worker utilization (%), n = ", n, "\n", block,
                    " << EOD\n");
    std::vector<std::string> labels;
    for (const ReportRow& r : table) {
      labels.push_back(r.display_name);
      std::vector<std::string> line = {DataLabel(r.display_name)};
      for (int w = 0; w < n; ++w) {
        line.push_back(w < r.workers() ? Pct(r.utilization[w]) : "0");
      }
      absl::StrAppend(&t, absl::StrJoin(line, " "), "\n");
    }
    absl::StrAppend(&t, "EOD\n");
    const std::string file = absl::StrCat("utilization_n", n, ".png");
    absl::StrAppend(
        &t,
        Preamble(o, file, absl::StrCat("Per-worker utilization, ", OfN(n)),
                 // Wide enough for every strategy's label.
                 std::max<int>(o.width, 130 * table.size() + 240)),
        RotatedLabels(labels), "set style data histogram\n",
        "set style histogram clustered gap 1\n",
        "set style fill solid 0.85 border -1\n", "set yrange [0:105]\n",
        "set ylabel \"utilization (% of wall time)\"\n",
        "set key outside right top vertical\n", "plot ");
    std::vector<std::string> clauses;
    for (int w = 0; w < n; ++w) {
      clauses.push_back(absl::StrCat(block, " using ", w + 2,
                                     w == 0 ? ":xtic(1)" : "", " title \"W", w,
                                     "\""));
    }
    absl::StrAppend(&t, absl::StrJoin(clauses, ", \\\n     "), "\n");
    script.images.push_back(
        {file, absl::StrCat("Per-worker utilization by strategy, ", OfN(n),
                            " (", compute, " compute)")});
  }

  // Memory per rank, one bar chart per n: measured against the formula.
  for (int n : workers) {
    std::vector<const ReportRow*> table;
    for (const ReportRow& r : rows) {
      if (r.workers() == n && r.worker_held_bytes > 0) table.push_back(&r);
    }
    if (table.empty()) continue;
    const std::string block = absl::StrCat("$memory_n", n);
    absl::StrAppend(&t, "\n# Memory per rank (MB), n = ", n,
                    ": Mem/worker, its formula, peak RSS/worker, Mem/server, "
                    "its formula (NaN: not reported)\n",
                    block, " << EOD\n");
    auto mb = [](double bytes) {
      return bytes > 0 ? absl::StrFormat("%.2f", bytes / 1e6)
                       : std::string("NaN");
    };
    // Columns 2..6; a column with no value in any row is left out of the
    // plot (gnuplot refuses a histogram with no valid point).
    struct Column {
      const char* title;
      const char* style;
    };
    const Column columns[] = {{"Mem/worker", ""},
                              {"formula", " fillstyle pattern 4"},
                              {"peak RSS/worker", ""},
                              {"Mem/server", ""},
                              {"formula (server)", " fillstyle pattern 5"}};
    bool present[5] = {false, false, false, false, false};
    std::vector<std::string> labels;
    for (const ReportRow* r : table) {
      labels.push_back(ParallelTypeLabel(*r));
      const std::optional<MemoryPerRank> f = FormulaMemory(*r);
      const double values[5] = {static_cast<double>(r->worker_held_bytes),
                                f ? f->worker_bytes : 0.0,
                                static_cast<double>(r->worker_peak_rss_bytes),
                                static_cast<double>(r->server_state_bytes),
                                f ? f->server_bytes : 0.0};
      std::vector<std::string> line = {DataLabel(ParallelTypeLabel(*r))};
      for (int c = 0; c < 5; ++c) {
        line.push_back(mb(values[c]));
        present[c] = present[c] || values[c] > 0;
      }
      absl::StrAppend(&t, absl::StrJoin(line, " "), "\n");
    }
    absl::StrAppend(&t, "EOD\n");
    std::vector<std::string> clauses;
    for (int c = 0; c < 5; ++c) {
      if (!present[c]) continue;
      clauses.push_back(absl::StrCat(block, " using ", c + 2,
                                     clauses.empty() ? ":xtic(1)" : "",
                                     " title \"", columns[c].title, "\"",
                                     columns[c].style));
    }
    const std::string file = absl::StrCat("memory_n", n, ".png");
    absl::StrAppend(
        &t,
        Preamble(o, file, absl::StrCat("Memory per rank, ", OfN(n)),
                 std::max<int>(o.width, 130 * table.size() + 240)),
        RotatedLabels(labels), "set style data histogram\n",
        "set style histogram clustered gap 1\n",
        "set style fill solid 0.85 border -1\n", "set yrange [0:*]\n",
        "set ylabel \"MB per rank\"\n", "set key outside right top vertical\n",
        "plot ", absl::StrJoin(clauses, ", \\\n     "), "\n");
    script.images.push_back(
        {file,
         absl::StrCat("Memory per rank by strategy, ", OfN(n),
                      ": measured (parameters, gradients, optimizer state; "
                      "servers' state) beside the cost model's formula, and "
                      "peak RSS")});
  }

  // Speedup against n with the linear line.
  const std::optional<double> base = BaselineThroughput(rows);
  const std::vector<std::string> strategies = SweepStrategies(rows);
  if (base && !strategies.empty() && !workers.empty()) {
    absl::StrAppend(&t, "\n# Speedup: n, then one column per strategy (",
                    absl::StrJoin(strategies, ", "), ")\n$speedup << EOD\n");
    for (int n : workers) {
      std::vector<std::string> line = {absl::StrCat(n)};
      for (const std::string& s : strategies) {
        std::optional<double> v;
        for (const ReportRow& r : rows) {
          if (r.strategy == s && r.workers() == n) v = Speedup(r, base);
        }
        line.push_back(v ? absl::StrFormat("%.4f", *v) : "NaN");
      }
      absl::StrAppend(&t, absl::StrJoin(line, " "), "\n");
    }
    absl::StrAppend(&t, "EOD\n");
    std::vector<std::string> xtics;
    for (int n : workers) xtics.push_back(absl::StrCat("\"", n, "\" ", n));
    absl::StrAppend(
        &t, Preamble(o, "speedup.png", "Speedup against workers", o.width),
        "set xlabel \"workers n\"\n",
        "set ylabel \"speedup (throughput / baseline throughput)\"\n",
        "set xrange [0:", workers.back() * 1.1, "]\n", "set yrange [0:*]\n",
        "set xtics (", absl::StrJoin(xtics, ", "), ")\n", "set key left top\n",
        "plot ", ReferenceClause("x", "linear (ideal)"));
    for (size_t i = 0; i < strategies.size(); ++i) {
      absl::StrAppend(
          &t, ", \\\n     ",
          SeriesClause(absl::StrCat("$speedup using 1:", i + 2),
                       FirstRowOf(rows, strategies[i])->display_name, i));
    }
    absl::StrAppend(&t, "\n");
    script.images.push_back(
        {"speedup.png",
         absl::StrCat("Speedup against workers n, with the linear (ideal) "
                      "speedup (",
                      compute, " compute)")});
  }
  AppendLossPlots(rows, workers, o, &script);
  return script;
}

absl::StatusOr<std::string> FindProgram(absl::string_view program) {
  if (program.empty()) return absl::NotFoundError("no program named");
  if (absl::StrContains(program, "/")) {
    const std::string path(program);
    if (access(path.c_str(), X_OK) == 0) return path;
    return absl::NotFoundError(absl::StrCat(program, " is not executable"));
  }
  const char* env = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(env ? env : "", ':', absl::SkipEmpty())) {
    const std::string path = absl::StrCat(dir, "/", program);
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) &&
        access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return absl::NotFoundError(absl::StrCat(program, " not found on PATH"));
}

absl::StatusOr<std::vector<ReportImage>> RunGnuplotScript(
    const std::string& gnuplot, const std::string& script_path,
    const std::string& dir,
    absl::FunctionRef<PlotScript(const std::string& terminal)> script_for,
    absl::Duration timeout) {
  absl::Status last = absl::OkStatus();
  for (const char* terminal : {"pngcairo", "png"}) {
    const PlotScript script = script_for(terminal);
    {
      std::ofstream out(script_path);
      out << script.text;
      out.close();
      if (!out) {
        return absl::InternalError(absl::StrCat("cannot write ", script_path));
      }
    }
    ProcessGroupOptions group_options;
    group_options.deadline = timeout;
    group_options.relay_stderr = false;
    ChildSpec spec;
    spec.label = "gnuplot";
    spec.argv = {gnuplot, script_path};
    last = RunToCompletion(std::move(spec), group_options);
    if (!last.ok()) continue;
    for (const ReportImage& image : script.images) {
      std::error_code ec;
      const std::string path = dir + "/" + image.path;
      if (std::filesystem::file_size(path, ec) == 0 || ec) {
        return absl::NotFoundError(
            absl::StrCat("gnuplot wrote no image ", path));
      }
    }
    return script.images;
  }
  return last;
}

absl::StatusOr<std::vector<ReportImage>> DrawPlots(
    const std::string& gnuplot, const std::vector<ReportRow>& rows,
    const std::vector<int>& workers, PlotOptions options,
    absl::Duration timeout) {
  return RunGnuplotScript(
      gnuplot, options.dir + "/plots.gp", options.dir,
      [&](const std::string& terminal) {
        options.terminal = terminal;
        return GnuplotScript(rows, workers, options);
      },
      timeout);
}

}  // namespace ringside
