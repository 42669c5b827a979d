#include "experiments/cost/grpc_bulk.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/method_handler.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "common/chunk_wire.h"
#include "common/grpc_credentials.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "common/stopwatch.h"
#include "experiments/cost/bulk_stream.grpc.pb.h"
#include "server/ps_server_runner.h"
#include "worker/strategies/ps/ps_shard_client.h"

namespace ringside {
namespace {

// Method indices in bulk_stream.proto's service.
constexpr int kUploadMethod = 0, kDownloadMethod = 1;

// Serves Upload and Download over raw byte buffers, as ParameterServerService
// serves Push and Pull.
class BulkService final : public proto::BulkStream::Service {
 public:
  using RawStream = grpc::ServerReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>;
  using RawHandler = grpc::internal::BidiStreamingHandler<
      BulkService, grpc::ByteBuffer, grpc::ByteBuffer>;

  explicit BulkService(int64_t bytes) : source_(bytes / 4 + 1, 0.5f) {
    MarkMethodStreamed(kUploadMethod,
                       new RawHandler(&BulkService::RawUpload, this));
    MarkMethodStreamed(kDownloadMethod,
                       new RawHandler(&BulkService::RawDownload, this));
  }

 private:
  grpc::Status RawUpload(grpc::ServerContext*, RawStream* stream) {
    // One copy per chunk into this call's buffer, as a shard sums a push.
    thread_local std::vector<float> sink;
    grpc::ByteBuffer message;
    DecodedChunk chunk;
    int64_t chunks = 0;
    while (stream->Read(&message)) {
      if (absl::Status d = DecodeChunk(message, &chunk); !d.ok()) {
        return ToGrpcStatus(d);
      }
      const int64_t end = chunk.header.offset + chunk.payload_bytes / 4;
      if (chunk.header.offset < 0 || end > static_cast<int64_t>(source_.size())) {
        return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "chunk past the end");
      }
      if (sink.size() < source_.size()) sink.resize(source_.size());
      CopyPayload(chunk, sink.data() + chunk.header.offset);
      ++chunks;
    }
    proto::BulkReply reply;
    reply.set_chunks(chunks);
    grpc::ByteBuffer buffer;
    bool own = false;
    if (!grpc::SerializationTraits<proto::BulkReply>::Serialize(reply, &buffer,
                                                               &own)
             .ok() ||
        !stream->Write(buffer)) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "reply not sent");
    }
    return grpc::Status::OK;
  }

  grpc::Status RawDownload(grpc::ServerContext*, RawStream* stream) {
    grpc::ByteBuffer message;
    proto::BulkRequest request;
    if (!stream->Read(&message) ||
        !grpc::SerializationTraits<proto::BulkRequest>::Deserialize(&message,
                                                                   &request)
             .ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request");
    }
    const int64_t elements = request.elements();
    const int64_t per_chunk = request.chunk_elements();
    if (per_chunk < 1 || elements < 0 ||
        elements > static_cast<int64_t>(source_.size())) {
      return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "bad request");
    }
    ChunkHeader header;
    for (header.offset = 0; header.offset < elements;
         header.offset += per_chunk) {
      const int64_t n = std::min(per_chunk, elements - header.offset);
      if (!stream->Write(EncodeChunk(
              header, absl::MakeConstSpan(source_).subspan(header.offset, n)))) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream broke");
      }
    }
    return grpc::Status::OK;
  }

  const std::vector<float> source_;
};

// One client's channel and its two methods, called with raw byte buffers.
class BulkClient {
 public:
  explicit BulkClient(const std::string& address)
      : channel_(MakeChannel(address, GrpcSecurity{}, BulkChannelArguments())),
        upload_(Name("Upload").c_str(),
                grpc::internal::RpcMethod::CLIENT_STREAMING, channel_),
        download_(Name("Download").c_str(),
                  grpc::internal::RpcMethod::SERVER_STREAMING, channel_) {}

  // Uploads `chunks` chunks of `data` (elements each).
  absl::Status Upload(absl::Span<const float> data, int64_t elements,
                      absl::Time deadline) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(deadline));
    grpc::ByteBuffer reply;
    std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
        grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(
            channel_.get(), upload_, &context, &reply));
    ChunkHeader header;
    for (int64_t at = 0; at < static_cast<int64_t>(data.size()); at += elements) {
      header.offset = at;
      // subspan clamps the last chunk to what is left.
      if (!writer->Write(EncodeChunk(header, data.subspan(at, elements)))) break;
    }
    writer->WritesDone();
    RS_RETURN_IF_ERROR(FromGrpcStatus(writer->Finish(), "Upload"));
    proto::BulkReply counted;
    const int64_t sent =
        (static_cast<int64_t>(data.size()) + elements - 1) / elements;
    if (!grpc::SerializationTraits<proto::BulkReply>::Deserialize(&reply,
                                                                 &counted)
             .ok() ||
        counted.chunks() != sent) {
      return absl::DataLossError(absl::StrCat(
          "Upload: the server counted ", counted.chunks(), " of ", sent,
          " chunks"));
    }
    return absl::OkStatus();
  }

  // Downloads all of `data` in chunks of `elements`; returns the payload
  // bytes received.
  absl::StatusOr<int64_t> Download(absl::Span<float> data, int64_t elements,
                                   absl::Time deadline) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(deadline));
    proto::BulkRequest request;
    request.set_elements(static_cast<int64_t>(data.size()));
    request.set_chunk_elements(elements);
    std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(
        grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
            channel_.get(), download_, &context, request));
    grpc::ByteBuffer message;
    DecodedChunk chunk;
    absl::Status problem;
    int64_t received = 0;
    while (reader->Read(&message)) {
      problem = DecodeChunk(message, &chunk);
      const int64_t end = chunk.header.offset + chunk.payload_bytes / 4;
      if (problem.ok() && (chunk.header.offset < 0 ||
                           end > static_cast<int64_t>(data.size()))) {
        problem = absl::DataLossError("Download: chunk past the end");
      }
      if (!problem.ok()) {
        context.TryCancel();
        break;
      }
      CopyPayload(chunk, data.data() + chunk.header.offset);
      received += chunk.payload_bytes;
    }
    absl::Status s = FromGrpcStatus(reader->Finish(), "Download");
    if (!problem.ok()) return problem;
    if (!s.ok()) return s;
    return received;
  }

 private:
  static std::string Name(const char* method) {
    return absl::StrCat("/", proto::BulkStream::service_full_name(), "/",
                        method);
  }
  std::shared_ptr<grpc::Channel> channel_;
  const grpc::internal::RpcMethod upload_, download_;
};

}  // namespace

absl::StatusOr<GrpcBulkResult> RunGrpcBulk(int clients, int64_t bytes,
                                           int64_t chunk_bytes, int rounds,
                                           int warmup_rounds,
                                           absl::Duration timeout) {
  if (rounds < 1 || warmup_rounds < 0 || clients < 1 || bytes < 4 ||
      chunk_bytes < 4) {
    return absl::InvalidArgumentError(
        "need rounds, clients >= 1, warm-up >= 0, bytes and chunk bytes >= 4");
  }
  const int64_t elements = bytes / 4;
  const int64_t chunk_elements = std::min(elements, chunk_bytes / 4);
  BulkService service(bytes);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  AddBulkServerArguments(
      static_cast<int>(std::max<int64_t>(64, (chunk_bytes >> 20) + 2)),
      &builder);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError("bare gRPC reference: cannot listen");
  }
  const std::string address = absl::StrCat("127.0.0.1:", port);
  const int total_rounds = rounds + warmup_rounds;
  std::vector<absl::Status> status(clients);
  std::vector<double> first_s(clients, 0.0), last_s(clients, 0.0);
  absl::Barrier start(clients), end(clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      BulkClient client(address);
      std::vector<float> out(elements, 1.0f), in(elements);
      absl::Status& s = status[c];
      for (int r = 0; r < total_rounds; ++r) {
        if (r == warmup_rounds) {
          start.Block();
          first_s[c] = NowSeconds();
        }
        if (!s.ok()) continue;
        const absl::Time deadline = absl::Now() + timeout;
        absl::Status up;
        std::thread uploader([&] {
          up = client.Upload(out, chunk_elements, deadline);
        });
        absl::StatusOr<int64_t> down =
            client.Download(absl::MakeSpan(in), chunk_elements, deadline);
        uploader.join();
        s = !down.ok() ? down.status() : up;
        if (s.ok() && *down != elements * 4) {
          s = absl::DataLossError(absl::StrCat("Download: ", *down, " of ",
                                               elements * 4, " bytes"));
        }
        if (s.ok() && in[elements - 1] != 0.5f) {
          s = absl::DataLossError("Download: wrong payload");
        }
      }
      last_s[c] = NowSeconds();
      end.Block();
    });
  }
  for (std::thread& t : threads) t.join();
  server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  GrpcBulkResult result;
  result.seconds = *std::max_element(last_s.begin(), last_s.end()) -
                   *std::min_element(first_s.begin(), first_s.end());
  result.bytes_moved = 2 * elements * 4 * rounds * clients;
  return result;
}

}  // namespace ringside
