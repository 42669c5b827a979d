// PNG plots of a sweep report (sweep_report.h), drawn by gnuplot run as a
// subprocess on a generated script:
//
//  - utilization_n<N>.png per n: per-worker utilization (%) of every
//    strategy as clustered bars (W0..W(N-1) per strategy, the baseline's
//    one worker first);
//  - memory_n<N>.png per n where runs report memory: per strategy the
//    bytes a worker holds and the cost model's formula for it, the
//    worker's peak RSS, and a server's state and its formula (MB);
//  - speedup.png: speedup against workers n, one line per strategy, with
//    the linear (ideal) speedup as a dashed line.
//  - loss_time_n<N>.png and loss_samples_n<N>.png per n where runs have a
//    loss curve (ReportRow::curve): rank 0's validation loss against
//    training wall time (evaluations excluded) and against global training
//    samples, one line per strategy, with the target loss dashed.
//
// Titles carry a subtitle (the caller's: compute real/emulated, hardware).
// GnuplotScript is pure; DrawPlots writes the script next to the images and
// runs gnuplot, trying the pngcairo terminal first and then png
// (RunGnuplotScript, which other plot modules share).
//
// Thread-safety: GnuplotScript and FindProgram are thread-safe; DrawPlots
// and RunGnuplotScript are blocking and may run on several threads for
// different folders.
#ifndef RINGSIDE_EXPERIMENTS_REPORT_PLOTS_H_
#define RINGSIDE_EXPERIMENTS_REPORT_PLOTS_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "experiments/report/report.h"
#include "experiments/report/sweep_report.h"

namespace ringside {

struct PlotOptions {
  // Folder the PNG files are written to (it must exist). Paths in the
  // script are dir + "/" + file name. Required.
  std::string dir;
  // gnuplot terminal: "pngcairo" (antialiased, needs cairo) or "png"
  // (libgd). Default pngcairo.
  std::string terminal = "pngcairo";
  // Second title line of every plot, e.g. "real compute; 2 cores (nproc),
  // AMD EPYC". Default none.
  std::string subtitle;
  // Image size in pixels. Default 960 x 540; utilization charts grow wider
  // with the number of strategies.
  int width = 960;
  int height = 540;
  // The target loss (loss_curves.h), a dashed line on the loss plots; 0 =
  // none. Default none.
  double target_loss = 0;
};

struct PlotScript {
  std::string text;                 // the gnuplot script
  std::vector<ReportImage> images;  // what it draws: file name + caption
};

// `s` as a gnuplot double-quoted string literal ('\' and '"' escaped,
// newlines as \n).
std::string GnuplotString(absl::string_view s);

// The script drawing the plots of `rows` over `workers` (ascending): one
// utilization bar chart per n, the memory charts, the speedup plot (when
// there is a baseline and a non-baseline row), then per n the two loss
// plots (when a row of that n, or the baseline, has a curve). Images are
// named by file name only (no folder) in the result.
PlotScript GnuplotScript(const std::vector<ReportRow>& rows,
                         const std::vector<int>& workers,
                         const PlotOptions& options);

// `program` if it contains a '/' and is executable, else the first
// executable `program` on $PATH. NOT_FOUND otherwise.
absl::StatusOr<std::string> FindProgram(absl::string_view program);

// Writes `script_for("pngcairo")` to `script_path` and runs `gnuplot` on it
// (bounded by `timeout`); if that fails, writes `script_for("png")` there
// and tries once more. Returns the script's images (file names, in `dir`),
// each checked to be a non-empty file. Fails with the gnuplot error (its
// last stderr lines), INTERNAL when the script cannot be written, or
// NOT_FOUND for a missing image.
absl::StatusOr<std::vector<ReportImage>> RunGnuplotScript(
    const std::string& gnuplot, const std::string& script_path,
    const std::string& dir,
    absl::FunctionRef<PlotScript(const std::string& terminal)> script_for,
    absl::Duration timeout);

// Writes GnuplotScript to options.dir + "/plots.gp" and runs `gnuplot` on
// it (RunGnuplotScript: bounded by `timeout`; if that fails with the
// pngcairo terminal, tries once more with png). Returns the images (file
// names, in options.dir), each checked to be a non-empty file. Fails with
// the gnuplot error (its last stderr lines) or NOT_FOUND for a missing
// image.
absl::StatusOr<std::vector<ReportImage>> DrawPlots(
    const std::string& gnuplot, const std::vector<ReportRow>& rows,
    const std::vector<int>& workers, PlotOptions options,
    absl::Duration timeout = absl::Seconds(60));

}  // namespace ringside

#endif  // RINGSIDE_EXPERIMENTS_REPORT_PLOTS_H_
