#include "worker/strategies/ps/ps_bulk_client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/bulk_socket.h"
#include "common/status_macros.h"

namespace ringside {

BulkConnection::BulkConnection(BulkEndpoint endpoint, BulkRole role)
    : endpoint_(std::move(endpoint)),
      role_(role),
      what_(absl::StrCat("parameter server ", endpoint_.host, ":",
                         endpoint_.port, " (bulk ",
                         role == BulkRole::kPush ? "push" : "pull", ")")) {}

BulkConnection::~BulkConnection() { Close(); }

void BulkConnection::Close() {
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void BulkConnection::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

absl::Status BulkConnection::Broken(absl::Status status) {
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    cancelled = cancelled_;
    cancelled_ = false;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  if (cancelled) return absl::CancelledError(absl::StrCat(what_, ": cancelled"));
  return status;
}

BulkHeader BulkConnection::Frame(BulkKind kind, int64_t step,
                                 int64_t count) const {
  return MakeBulkHeader(kind, endpoint_.shard, endpoint_.rank, step, count);
}

int BulkConnection::fd() {
  absl::MutexLock lock(&mu_);
  return fd_;
}

absl::Status BulkConnection::Connect(absl::Time deadline) {
  {
    absl::MutexLock lock(&mu_);
    if (fd_ >= 0) return absl::OkStatus();
    cancelled_ = false;
  }
  RS_ASSIGN_OR_RETURN(int fd, ConnectTcp(endpoint_.host, endpoint_.port,
                                         deadline, what_));
  absl::Status handshake = [&]() -> absl::Status {
    std::string hello(kBulkHelloBytes, '\0');
    RS_RETURN_IF_ERROR(ReadFull(fd, hello.data(), hello.size(), deadline, what_));
    RS_ASSIGN_OR_RETURN(std::string server_nonce, ParseBulkHello(hello));
    BulkAuth auth;
    auth.rank = endpoint_.rank;
    auth.shard = endpoint_.shard;
    auth.role = role_;
    auth.client_nonce = NewBulkNonce();
    auth.proof = BulkProof(endpoint_.auth_token, /*client=*/true, server_nonce,
                           auth.client_nonce, auth.rank, auth.shard, role_);
    RS_RETURN_IF_ERROR(WriteFull(fd, EncodeBulkAuth(auth), deadline, what_));
    std::string welcome(kBulkWelcomeBytes, '\0');
    RS_RETURN_IF_ERROR(
        ReadFull(fd, welcome.data(), welcome.size(), deadline, what_));
    RS_ASSIGN_OR_RETURN(std::string proof, ParseBulkWelcome(welcome));
    if (!BulkProofsEqual(
            proof, BulkProof(endpoint_.auth_token, /*client=*/false,
                             server_nonce, auth.client_nonce, auth.rank,
                             auth.shard, role_))) {
      return absl::PermissionDeniedError(
          "bulk path: the server could not prove it holds the job's token");
    }
    return absl::OkStatus();
  }();
  if (!handshake.ok()) {
    ::close(fd);
    return Annotate(handshake, what_);
  }
  absl::MutexLock lock(&mu_);
  fd_ = fd;
  return absl::OkStatus();
}

absl::StatusOr<BulkHeader> BulkConnection::ReadHeader(absl::Time deadline,
                                                      absl::Status* refusal) {
  const int fd = this->fd();
  std::string bytes(kBulkHeaderBytes, '\0');
  RS_RETURN_IF_ERROR(ReadFull(fd, bytes.data(), bytes.size(), deadline, what_));
  BulkLimits limits;
  limits.shard = endpoint_.shard;
  limits.rank = endpoint_.rank;
  limits.server = false;
  limits.role = role_;
  limits.max_chunk_elements = endpoint_.max_chunk_elements;
  limits.range_begin = endpoint_.range.begin;
  limits.range_end = endpoint_.range.end;
  RS_ASSIGN_OR_RETURN(BulkHeader h, ParseBulkHeader(bytes, limits));
  if (h.kind != BulkKind::kError) return h;
  std::string message(h.count, '\0');
  RS_RETURN_IF_ERROR(
      ReadFull(fd, message.data(), message.size(), deadline, what_));
  const int code = static_cast<int>(h.step);
  *refusal = absl::Status(
      code > 0 && code <= 16 ? static_cast<absl::StatusCode>(code)
                             : absl::StatusCode::kUnknown,
      absl::StrCat(what_, ": ", message));
  return h;
}

absl::Status BulkConnection::PushChunk(int64_t step, const KeyRange& chunk,
                                       absl::Span<const float> grads,
                                       absl::Time deadline) {
  RS_RETURN_IF_ERROR(Connect(deadline));
  BulkHeader h = Frame(BulkKind::kPushChunk, step, chunk.size());
  h.offset = chunk.begin;
  const std::string header = EncodeBulkHeader(h);
  iovec parts[2] = {
      {const_cast<char*>(header.data()), header.size()},
      {const_cast<float*>(grads.data() + chunk.begin),
       static_cast<size_t>(chunk.size()) * sizeof(float)}};
  absl::Status s = WriteFull(fd(), parts, 2, deadline, what_);
  return s.ok() ? s : Broken(s);
}

absl::Status BulkConnection::EndPush(int64_t step, int64_t chunks,
                                     absl::Time deadline) {
  RS_RETURN_IF_ERROR(Connect(deadline));
  if (absl::Status s =
          WriteFull(fd(), EncodeBulkHeader(Frame(BulkKind::kPushEnd, step, chunks)),
                    deadline, what_);
      !s.ok()) {
    return Broken(s);
  }
  absl::Status refusal;
  absl::StatusOr<BulkHeader> answer = ReadHeader(deadline, &refusal);
  if (!answer.ok()) return Broken(answer.status());
  // A refusal the server sent keeps the connection usable.
  if (answer->kind == BulkKind::kError) return refusal;
  if (answer->step != step || answer->count != chunks) {
    return Broken(absl::DataLossError(absl::StrCat(
        what_, ": push of step ", step, " with ", chunks,
        " chunks answered for step ", answer->step, " with ", answer->count)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> BulkConnection::Pull(
    int64_t version, int num_chunks, absl::Span<float> params,
    absl::Time deadline,
    const std::function<void(int64_t, int64_t)>& on_chunk) {
  RS_RETURN_IF_ERROR(Connect(deadline));
  const int fd = this->fd();
  absl::Status s = WriteFull(
      fd, EncodeBulkHeader(Frame(BulkKind::kPullRequest, version, num_chunks)),
      deadline, what_);
  if (!s.ok()) return Broken(s);
  int64_t bytes = 0;
  for (int received = 0;; ) {
    absl::Status refusal;
    absl::StatusOr<BulkHeader> h = ReadHeader(deadline, &refusal);
    if (!h.ok()) return Broken(h.status());
    if (h->kind == BulkKind::kError) return refusal;
    if (h->step != version) {
      return Broken(absl::DataLossError(absl::StrCat(
          what_, ": pull of version ", version, " got version ", h->step)));
    }
    if (h->kind == BulkKind::kPullEnd) {
      if (h->count != received || received != num_chunks) {
        return Broken(absl::DataLossError(absl::StrCat(
            what_, ": pull of version ", version, " ended after ", received,
            " chunks (the server says ", h->count, "; ", num_chunks,
            " expected)")));
      }
      return bytes;
    }
    if (h->offset + h->count > static_cast<int64_t>(params.size())) {
      return Broken(absl::DataLossError(absl::StrCat(
          what_, ": a chunk past the buffer's end")));
    }
    s = ReadFull(fd, reinterpret_cast<char*>(params.data() + h->offset),
                 h->count * 4, deadline, what_);
    if (!s.ok()) return Broken(s);
    bytes += h->count * 4;
    ++received;
    if (on_chunk) on_chunk(h->offset, h->count);
  }
}

}  // namespace ringside
