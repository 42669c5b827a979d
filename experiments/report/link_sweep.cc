#include "experiments/report/link_sweep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ringside {
namespace {

using nlohmann::json;

std::string Num(double v) { return absl::StrFormat("%g", v); }

// Whether `a` and `b` (> 0) tie: the larger within kCrossoverTie of the
// smaller.
bool Ties(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  return lo > 0 && hi / lo <= 1 + kCrossoverTie + 1e-12;
}

// Whether `label` is in `list` (fastest first) and ties with its first.
bool TiesWithFastest(const std::vector<LabelThroughput>& list,
                     const std::string& label) {
  if (list.empty()) return false;
  for (const LabelThroughput& t : list) {
    if (t.label == label) return Ties(t.throughput, list[0].throughput);
  }
  return false;
}

// Keeps the largest throughput per label (first-seen order), then sorts
// fastest first, stably.
void AddThroughput(const std::string& label, double throughput,
                   const std::string& updates,
                   std::vector<LabelThroughput>* list) {
  if (!(throughput > 0) || !std::isfinite(throughput)) return;
  for (LabelThroughput& t : *list) {
    if (t.label == label) {
      t.throughput = std::max(t.throughput, throughput);
      return;
    }
  }
  list->push_back({label, throughput, updates});
}

// The exact entries of `list`, in order.
std::vector<LabelThroughput> ExactOnly(const std::vector<LabelThroughput>& list) {
  std::vector<LabelThroughput> out;
  for (const LabelThroughput& t : list) {
    if (t.exact()) out.push_back(t);
  }
  return out;
}

void SortFastestFirst(std::vector<LabelThroughput>* list) {
  std::stable_sort(list->begin(), list->end(),
                   [](const LabelThroughput& a, const LabelThroughput& b) {
                     return a.throughput > b.throughput;
                   });
}

// The throughput `run` predicts at `point` (file comment); nullopt when it
// has none.
std::optional<double> PredictedThroughput(const LinkSweepPoint& point,
                                          const PredictedRun& run,
                                          double batch_per_worker) {
  if (!run.prediction || !(run.prediction->step_s > 0)) return std::nullopt;
  const double step = run.prediction->step_s;
  for (const ReportRow& r : point.rows) {
    if (r.strategy == run.strategy &&
        ParallelTypeLabel(r) == run.parallel_type &&
        r.workers() == run.workers && r.prm_srv == run.prm_srv &&
        r.step_s == run.measured_step_s && r.step_s > 0 && r.throughput > 0) {
      return r.throughput * r.step_s / step;
    }
  }
  if (batch_per_worker > 0) return run.workers * batch_per_worker / step;
  return std::nullopt;
}

std::string Throughput(double v) { return absl::StrFormat("%.1f", v); }
std::string Csv4(double v) { return absl::StrFormat("%.4f", v); }

json OrNull(const std::string& s) { return s.empty() ? json() : json(s); }
json OrNull(double v, bool present) { return present ? json(v) : json(); }

// "$bw_n2" or, with several latencies, "$bw_n2_l1".
std::string BlockPrefix(int n, size_t latency_index, bool several) {
  return several ? absl::StrCat("$bw_n", n, "_l", latency_index)
                 : absl::StrCat("$bw_n", n);
}

std::string OfN(int n) {
  return absl::StrCat("n = ", n, n == 1 ? " worker" : " workers");
}

std::string Title(absl::string_view first, const PlotOptions& o) {
  return GnuplotString(o.subtitle.empty()
                           ? std::string(first)
                           : absl::StrCat(first, "\n", o.subtitle));
}

// "set ytics (...)" with six labelled values spaced evenly on a log scale
// from `lo` to `hi`, labelled without exponents (gnuplot labels only whole
// decades on a log axis, which a narrow range may not hold); "" when lo == hi.
std::string LogTics(double lo, double hi) {
  if (!(lo > 0) || !(hi > lo)) return "";
  std::vector<std::string> tics;
  for (int i = 0; i <= 5; ++i) {
    const double v = lo * std::pow(hi / lo, i / 5.0);
    tics.push_back(absl::StrFormat(
        "\"%s\" %.6g",
        v >= 100 ? absl::StrFormat("%.0f", v) : absl::StrFormat("%.3g", v), v));
  }
  return absl::StrCat("set ytics (", absl::StrJoin(tics, ", "), ")\n");
}

}  // namespace

std::string LinkLabel(const LinkPoint& link) {
  if (!(link.gbit > 0)) return "unshaped loopback";
  std::string out = absl::StrCat(Num(link.gbit), " Gbit/s");
  if (link.latency_us > 0)
    absl::StrAppend(&out, ", ", Num(link.latency_us), " µs");
  return out;
}

std::string LinkDirName(const LinkPoint& link) {
  std::string out;
  if (!(link.gbit > 0)) {
    out = "link_unshaped";
  } else {
    out = absl::StrCat("link_", Num(link.gbit), "gbit");
    if (link.latency_us > 0)
      absl::StrAppend(&out, "_", Num(link.latency_us), "us");
  }
  for (char& c : out) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                      c == '_';
    if (!safe) c = '_';
  }
  return out;
}

double SweepBatchPerWorker(const std::vector<LinkSweepPoint>& points,
                           double batch_per_worker) {
  if (batch_per_worker > 0) return batch_per_worker;
  for (const LinkSweepPoint& p : points) {
    for (const ReportRow& r : p.rows) {
      if (r.throughput > 0 && r.step_s > 0 && r.workers() > 0) {
        return r.throughput * r.step_s / r.workers();
      }
    }
  }
  return 0;
}

PointThroughputs ThroughputsAt(const LinkSweepPoint& point, int n,
                               double batch_per_worker) {
  PointThroughputs out;
  for (const ReportRow& r : point.rows) {
    if (r.workers() == n) {
      AddThroughput(ParallelTypeLabel(r), r.throughput, RowUpdatesLabel(r),
                    &out.measured);
    }
  }
  for (const PredictedRun& run : point.predicted) {
    if (run.workers != n) continue;
    const std::optional<double> t =
        PredictedThroughput(point, run, batch_per_worker);
    if (t) AddThroughput(run.parallel_type, *t, run.updates, &out.predicted);
  }
  SortFastestFirst(&out.measured);
  SortFastestFirst(&out.predicted);
  return out;
}

Crossover CrossoverTable(const std::vector<LinkSweepPoint>& points,
                         const std::vector<int>& workers,
                         double batch_per_worker) {
  Crossover table;
  table.batch_per_worker = SweepBatchPerWorker(points, batch_per_worker);
  std::vector<int> ns = workers;
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  for (const LinkSweepPoint& point : points) {
    for (int n : ns) {
      const PointThroughputs all =
          ThroughputsAt(point, n, table.batch_per_worker);
      if (all.measured.empty() && all.predicted.empty()) continue;
      // Exact strategies are ranked; a lossy or stale one is named apart.
      PointThroughputs t;
      t.measured = ExactOnly(all.measured);
      t.predicted = ExactOnly(all.predicted);
      CrossoverRow row;
      row.link = point.link;
      row.measured = point.measured;
      row.dir = point.dir;
      row.workers = n;
      if (!t.measured.empty()) {
        row.fastest = t.measured[0].label;
        row.fastest_throughput = t.measured[0].throughput;
      }
      if (t.measured.size() > 1) {
        row.runner_up = t.measured[1].label;
        row.runner_up_throughput = t.measured[1].throughput;
        row.margin = row.fastest_throughput / row.runner_up_throughput;
        row.tie = Ties(row.fastest_throughput, row.runner_up_throughput);
      }
      if (!t.predicted.empty()) {
        row.predicted_fastest = t.predicted[0].label;
        row.predicted_throughput = t.predicted[0].throughput;
      }
      if (t.predicted.size() > 1) {
        row.predicted_runner_up = t.predicted[1].label;
        row.predicted_runner_up_throughput = t.predicted[1].throughput;
        row.predicted_tie =
            Ties(row.predicted_throughput, row.predicted_runner_up_throughput);
      }
      for (const LabelThroughput& m : all.measured) {
        if (m.exact()) continue;
        if (row.fastest.empty() ||
            (m.throughput > row.fastest_throughput &&
             !Ties(m.throughput, row.fastest_throughput))) {
          row.faster_not_exact = absl::StrCat(m.label, ", ", m.updates);
          row.faster_not_exact_throughput = m.throughput;
        }
        break;  // the fastest of them decides
      }
      if (row.fastest.empty() || row.predicted_fastest.empty()) {
        row.agree = "-";
      } else {
        row.agree = TiesWithFastest(t.measured, row.predicted_fastest) ||
                            TiesWithFastest(t.predicted, row.fastest)
                        ? "yes"
                        : "no";
      }
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

std::string CrossoverMarkdown(const Crossover& table) {
  std::vector<std::vector<std::string>> cells = {
      {"Link", "n", "Fastest (measured)", "Throughput (samples/s)", "Runner-up",
       "Margin", "Fastest (predicted)", "Predicted (samples/s)", "Agree",
       "Faster, not exact (measured)"}};
  bool inexact = false;
  bool unmeasured = false;
  for (const CrossoverRow& r : table.rows) {
    std::string link = LinkLabel(r.link);
    if (!r.measured) {
      link += " (not measured)";
      unmeasured = true;
    }
    const bool m = !r.fastest.empty(), p = !r.predicted_fastest.empty();
    cells.push_back(
        {link, absl::StrCat(r.workers),
         m ? absl::StrCat(r.fastest, r.tie ? " (tie)" : "") : "-",
         m ? Throughput(r.fastest_throughput) : "-",
         r.runner_up.empty() ? "-" : r.runner_up,
         r.margin ? absl::StrFormat("%.2f×", *r.margin) : "-",
         p ? absl::StrCat(r.predicted_fastest, r.predicted_tie ? " (tie)" : "")
           : "-",
         p ? Throughput(r.predicted_throughput) : "-", r.agree,
         r.faster_not_exact.empty()
             ? "-"
             : absl::StrCat(r.faster_not_exact, ": ",
                            Throughput(r.faster_not_exact_throughput))});
    inexact = inexact || !r.faster_not_exact.empty();
  }
  std::string out = MarkdownGrid(cells);
  absl::StrAppend(
      &out,
      "\nThe fastest, runner-up and predicted fastest are exact strategies "
      "(the same update as one worker on the whole batch). ",
      inexact ? "A lossy or stale one that was faster is named in the last "
                "column: its samples can buy less loss, which the time to "
                "the target loss (the loss tables) weighs.\n"
              : "No lossy or stale strategy was faster.\n");
  if (unmeasured) {
    absl::StrAppend(
        &out,
        "\nLinks marked \"not measured\" could not be shaped here; their "
        "predictions take the compute and model of another link's runs.\n");
  }
  return out;
}

std::string CrossoverCsv(const Crossover& table) {
  std::string out =
      "link_gbit,link_latency_us,link,measured,dir,workers,fastest,"
      "fastest_throughput,runner_up,runner_up_throughput,margin,tie,"
      "predicted_fastest,predicted_throughput,predicted_tie,agree,"
      "faster_not_exact,faster_not_exact_throughput\n";
  for (const CrossoverRow& r : table.rows) {
    const bool m = !r.fastest.empty(), p = !r.predicted_fastest.empty();
    const std::vector<std::string> fields = {
        Num(r.link.gbit),
        Num(r.link.latency_us),
        CsvField(LinkLabel(r.link)),
        r.measured ? "true" : "false",
        CsvField(r.dir),
        absl::StrCat(r.workers),
        CsvField(r.fastest),
        m ? Csv4(r.fastest_throughput) : "",
        CsvField(r.runner_up),
        r.runner_up.empty() ? "" : Csv4(r.runner_up_throughput),
        r.margin ? Csv4(*r.margin) : "",
        r.tie ? "true" : "false",
        CsvField(r.predicted_fastest),
        p ? Csv4(r.predicted_throughput) : "",
        r.predicted_tie ? "true" : "false",
        r.agree,
        CsvField(r.faster_not_exact),
        r.faster_not_exact.empty() ? "" : Csv4(r.faster_not_exact_throughput)};
    absl::StrAppend(&out, absl::StrJoin(fields, ","), "\n");
  }
  return out;
}

json CrossoverJson(const Crossover& table) {
  json out = {{"tie_tolerance", kCrossoverTie},
              {"batch_per_worker",
               OrNull(table.batch_per_worker, table.batch_per_worker > 0)},
              {"rows", json::array()}};
  for (const CrossoverRow& r : table.rows) {
    const bool m = !r.fastest.empty(), p = !r.predicted_fastest.empty();
    out["rows"].push_back(
        {{"link",
          {{"gbit", r.link.gbit},
           {"latency_us", r.link.latency_us},
           {"label", LinkLabel(r.link)},
           {"dir_name", LinkDirName(r.link)}}},
         {"measured", r.measured},
         {"dir", r.dir},
         {"workers", r.workers},
         {"fastest", OrNull(r.fastest)},
         {"fastest_throughput", OrNull(r.fastest_throughput, m)},
         {"runner_up", OrNull(r.runner_up)},
         {"runner_up_throughput",
          OrNull(r.runner_up_throughput, !r.runner_up.empty())},
         {"margin", r.margin ? json(*r.margin) : json()},
         {"tie", r.tie},
         {"predicted_fastest", OrNull(r.predicted_fastest)},
         {"predicted_throughput", OrNull(r.predicted_throughput, p)},
         {"predicted_runner_up", OrNull(r.predicted_runner_up)},
         {"predicted_runner_up_throughput",
          OrNull(r.predicted_runner_up_throughput,
                 !r.predicted_runner_up.empty())},
         {"predicted_tie", r.predicted_tie},
         {"agree", r.agree},
         {"faster_not_exact", OrNull(r.faster_not_exact)},
         {"faster_not_exact_throughput",
          OrNull(r.faster_not_exact_throughput,
                 !r.faster_not_exact.empty())}});
  }
  return out;
}

PlotScript BandwidthPlotScript(const std::vector<LinkSweepPoint>& points,
                               const std::vector<int>& workers,
                               const PlotOptions& o, double batch_per_worker) {
  PlotScript script;
  std::string& t = script.text;
  absl::StrAppend(&t,
                  "# Throughput against link bandwidth of a ringside compare "
                  "link sweep; run: gnuplot link_sweep.gp\n",
                  "set encoding utf8\n");
  const double batch = SweepBatchPerWorker(points, batch_per_worker);
  std::vector<ReportRow> all_rows;
  for (const LinkSweepPoint& p : points) {
    all_rows.insert(all_rows.end(), p.rows.begin(), p.rows.end());
  }
  const std::string compute = ComputeLabel(all_rows);

  // The shaped points' latencies, ascending.
  std::vector<double> latencies;
  for (const LinkSweepPoint& p : points) {
    if (p.link.gbit > 0) latencies.push_back(p.link.latency_us);
  }
  std::sort(latencies.begin(), latencies.end());
  latencies.erase(std::unique(latencies.begin(), latencies.end()),
                  latencies.end());
  const bool several = latencies.size() > 1;
  // The first measured unshaped point.
  const LinkSweepPoint* loopback = nullptr;
  for (const LinkSweepPoint& p : points) {
    if (!(p.link.gbit > 0) && p.measured && loopback == nullptr) {
      loopback = &p;
    }
  }

  std::vector<int> ns = workers;
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  for (int n : ns) {
    for (size_t li = 0; li < latencies.size(); ++li) {
      const double latency = latencies[li];
      // gbit -> throughputs at n of the first point of that bandwidth (and
      // this latency) that has any; `used`: those points.
      std::map<double, PointThroughputs> at;
      std::vector<const LinkSweepPoint*> used;
      for (const LinkSweepPoint& p : points) {
        if (!(p.link.gbit > 0) || p.link.latency_us != latency ||
            at.count(p.link.gbit) > 0) {
          continue;
        }
        PointThroughputs tp = ThroughputsAt(p, n, batch);
        if (tp.measured.empty() && tp.predicted.empty()) continue;
        at[p.link.gbit] = std::move(tp);
        used.push_back(&p);
      }
      if (at.empty()) continue;
      // The labels with a throughput, in first-seen order over the points
      // (their rows, then their predictions), not fastest first.
      std::vector<std::string> ordered;
      auto see = [&](const std::string& label) {
        if (std::find(ordered.begin(), ordered.end(), label) != ordered.end()) {
          return;
        }
        for (const auto& [gbit, tp] : at) {
          for (const auto* list : {&tp.measured, &tp.predicted}) {
            for (const LabelThroughput& lt : *list) {
              if (lt.label == label) {
                ordered.push_back(label);
                return;
              }
            }
          }
        }
      };
      for (const LinkSweepPoint* p : used) {
        for (const ReportRow& r : p->rows) {
          if (r.workers() == n) see(ParallelTypeLabel(r));
        }
        for (const PredictedRun& r : p->predicted) {
          if (r.workers == n) see(r.parallel_type);
        }
      }
      const std::string prefix = BlockPrefix(n, li, several);
      const std::string where =
          latency > 0 ? absl::StrCat(Num(latency), " µs latency")
                      : std::string(several ? "no added latency" : "");
      std::vector<std::string> clauses;
      // The y range: every value drawn, with room on the log axis.
      double ylo = 0, yhi = 0;
      auto span = [&](double v) {
        ylo = ylo > 0 ? std::min(ylo, v) : v;
        yhi = std::max(yhi, v);
      };
      for (const auto& [gbit, tp] : at) {
        for (const auto* list : {&tp.measured, &tp.predicted}) {
          for (const LabelThroughput& lt : *list) span(lt.throughput);
        }
      }
      if (loopback != nullptr) {
        const PointThroughputs lb = ThroughputsAt(*loopback, n, batch);
        if (!lb.measured.empty()) {
          span(lb.measured[0].throughput);
          clauses.push_back(absl::StrCat(
              absl::StrFormat("%.6g", lb.measured[0].throughput),
              " with lines dashtype 3 linewidth 2 linecolor rgb \"gray40\" "
              "title ",
              GnuplotString(absl::StrCat("unshaped loopback (",
                                         lb.measured[0].label, ")"))));
        }
      }
      for (size_t i = 0; i < ordered.size(); ++i) {
        const std::string block = absl::StrCat(prefix, "_", i);
        absl::StrAppend(&t, "\n# ", ordered[i], ", ", OfN(n),
                        where.empty() ? "" : ", ", where,
                        ": gbit measured predicted (samples/s; NaN: none)\n",
                        block, " << EOD\n");
        bool has_measured = false, has_predicted = false;
        for (const auto& [gbit, tp] : at) {
          std::string m = "NaN", p = "NaN";
          for (const LabelThroughput& lt : tp.measured) {
            if (lt.label == ordered[i]) {
              m = absl::StrFormat("%.6g", lt.throughput);
              has_measured = true;
            }
          }
          for (const LabelThroughput& lt : tp.predicted) {
            if (lt.label == ordered[i]) {
              p = absl::StrFormat("%.6g", lt.throughput);
              has_predicted = true;
            }
          }
          absl::StrAppend(&t, absl::StrFormat("%.6g", gbit), " ", m, " ", p,
                          "\n");
        }
        absl::StrAppend(&t, "EOD\n");
        const int color = static_cast<int>(i % 8) + 1;
        const bool squares = i >= 8;
        if (has_measured) {
          clauses.push_back(
              absl::StrCat(block, " using 1:2 with linespoints linecolor ",
                           color, " pointtype ", squares ? 5 : 7,
                           " linewidth 2 title ", GnuplotString(ordered[i])));
        }
        if (has_predicted) {
          clauses.push_back(absl::StrCat(
              block, " using 1:3 with linespoints linecolor ", color,
              " pointtype ", squares ? 4 : 6, " dashtype 2 linewidth 2 title ",
              GnuplotString(absl::StrCat(ordered[i], " (predicted)"))));
        }
      }
      const double lo = at.begin()->first, hi = at.rbegin()->first;
      std::vector<std::string> xtics;
      for (const auto& [gbit, tp] : at) {
        xtics.push_back(absl::StrFormat("\"%g\" %.6g", gbit, gbit));
      }
      const std::string file =
          several ? absl::StrCat("throughput_vs_bandwidth_n", n, "_",
                                 Num(latency), "us.png")
                  : absl::StrCat("throughput_vs_bandwidth_n", n, ".png");
      const std::string title =
          absl::StrCat("Throughput against link bandwidth, ", OfN(n),
                       where.empty() ? "" : ", ", where);
      absl::StrAppend(
          &t, "reset\n", "set terminal ", o.terminal, " size ", o.width + 240,
          ",", o.height, " noenhanced\n", "set output ",
          GnuplotString(absl::StrCat(o.dir, "/", file)), "\n", "set title ",
          Title(title, o), "\n", "set grid xtics ytics\n", "set border 3\n",
          "set tics nomirror\n", "set logscale x 10\n", "set logscale y\n",
          absl::StrFormat("set xrange [%.6g:%.6g]\n", lo / 1.5, hi * 1.5),
          absl::StrFormat("set yrange [%.6g:%.6g]\n", ylo / 1.5, yhi * 1.5),
          LogTics(ylo, yhi), "set xtics (", absl::StrJoin(xtics, ", "), ")\n",
          "set xlabel \"link bandwidth (Gbit/s), log scale\"\n",
          "set ylabel \"throughput (samples/s), log scale\"\n",
          "set key outside right top vertical\n", "plot ",
          absl::StrJoin(clauses, ", \\\n     "), "\n");
      script.images.push_back(
          {file, absl::StrCat(
                     "Throughput against link bandwidth by strategy, ", OfN(n),
                     where.empty() ? "" : ", ", where,
                     ": measured (solid) and the cost model's prediction "
                     "(dashed)",
                     loopback != nullptr ? "; dotted: unshaped loopback" : "",
                     " (", compute, " compute)")});
    }
  }
  return script;
}

absl::StatusOr<std::vector<ReportImage>> DrawBandwidthPlots(
    const std::string& gnuplot, const std::vector<LinkSweepPoint>& points,
    const std::vector<int>& workers, const PlotOptions& options,
    double batch_per_worker, absl::Duration timeout) {
  if (BandwidthPlotScript(points, workers, options, batch_per_worker)
          .images.empty()) {
    return std::vector<ReportImage>();
  }
  return RunGnuplotScript(
      gnuplot, options.dir + "/link_sweep.gp", options.dir,
      [&](const std::string& terminal) {
        PlotOptions o = options;
        o.terminal = terminal;
        return BandwidthPlotScript(points, workers, o, batch_per_worker);
      },
      timeout);
}

}  // namespace ringside
