#include "worker/strategies/ps/ps_options.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "worker/strategy_option_set.h"

ABSL_FLAG(int64_t, chunk_kb, ringside::PsOptions().chunk_bytes / 1024,
          "Parameter-server chunk size (KiB); 0: about 16 chunks per server "
          "within [128 KiB, 1 MiB] (AutoChunkBytes, core/ps_chunks.h).");

ABSL_FLAG(std::string, ps_transport, ringside::PsOptions().transport,
          "How the parameter-server strategies push and pull: grpc (the "
          "ParameterServer service's streams) or tcp (the servers' bulk data "
          "path: ringside's framing on persistent TCP connections; refused "
          "with TLS, which it does not carry).");

namespace ringside {

absl::Status PsOptions::Validate() const {
  if (chunk_bytes < 0 || chunk_bytes % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "chunk_bytes must be a multiple of 4, > 0 or 0 (auto), got ",
        chunk_bytes));
  }
  if (transport != "grpc" && transport != "tcp") {
    return absl::InvalidArgumentError(absl::StrCat(
        "ps_transport must be grpc or tcp, got '", transport, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PsOptions> PsOptionsFromFlags() {
  PsOptions options;
  options.chunk_bytes = absl::GetFlag(FLAGS_chunk_kb) * 1024;
  options.transport = absl::GetFlag(FLAGS_ps_transport);
  return ValidatedFromFlags(options, "--chunk_kb and --ps_transport");
}

RINGSIDE_REGISTER_OPTION_FLAGS(PsOptions, PsOptionsFromFlags);

}  // namespace ringside
