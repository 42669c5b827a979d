#include "server/bulk_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/bulk_socket.h"
#include "common/status_macros.h"

namespace ringside {
namespace {

std::string Peer(const BulkAuth& auth, const char* role) {
  return absl::StrCat("bulk ", role, " connection of worker rank ", auth.rank);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BulkServer>> BulkServer::Start(
    ParamShard* shard, const BulkServerOptions& options,
    std::function<void(int, int64_t)> seen) {
  std::unique_ptr<BulkServer> server(
      new BulkServer(shard, options, std::move(seen)));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = absl::StrCat(options.port);
  if (const int e = ::getaddrinfo(options.host.c_str(), port.c_str(), &hints,
                                  &found);
      e != 0) {
    return absl::UnavailableError(absl::StrCat(
        "bulk path: cannot resolve ", options.host, ": ", ::gai_strerror(e)));
  }
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat(
        "bulk path: cannot listen on ", options.host, ":", options.port, ": ",
        why));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  server->port_ = ntohs(bound.ss_family == AF_INET6
                            ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  server->listen_fd_ = fd;
  server->acceptor_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

BulkServer::~BulkServer() { Shutdown(); }

void BulkServer::Shutdown() {
  if (stopping_.exchange(true)) return;
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    threads.swap(connections_);
  }
  for (std::thread& t : threads) t.join();
}

void BulkServer::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    absl::MutexLock lock(&mu_);
    if (stopping_.load() ||
        static_cast<int>(open_.size()) >= options_.max_connections) {
      ::close(fd);
      continue;
    }
    PrepareBulkSocket(fd);
    open_.insert(fd);
    connections_.emplace_back([this, fd] { Serve(fd); });
  }
}

void BulkServer::Serve(int fd) {
  absl::StatusOr<BulkAuth> auth = Handshake(fd);
  if (auth.ok()) {
    (auth->role == BulkRole::kPush ? ServePush(fd, *auth)
                                   : ServePull(fd, *auth))
        .IgnoreError();
  } else {
    ++refused_;
  }
  absl::MutexLock lock(&mu_);
  open_.erase(fd);
  ::close(fd);
}

absl::StatusOr<BulkAuth> BulkServer::Handshake(int fd) {
  const absl::Time deadline = absl::Now() + options_.io_timeout;
  const std::string what = "bulk path handshake";
  const std::string nonce = NewBulkNonce();
  RS_RETURN_IF_ERROR(WriteFull(fd, EncodeBulkHello(nonce), deadline, what));
  std::string bytes(kBulkAuthBytes, '\0');
  RS_RETURN_IF_ERROR(ReadFull(fd, bytes.data(), bytes.size(), deadline, what));
  RS_ASSIGN_OR_RETURN(BulkAuth auth, ParseBulkAuth(bytes));
  const std::string expected =
      BulkProof(options_.auth_token, /*client=*/true, nonce, auth.client_nonce,
                auth.rank, auth.shard, auth.role);
  const bool accepted = BulkProofsEqual(expected, auth.proof) &&
                        auth.shard == options_.shard &&
                        shard_->CheckRank(auth.rank).ok();
  const std::string proof =
      BulkProof(options_.auth_token, /*client=*/false, nonce,
                auth.client_nonce, auth.rank, auth.shard, auth.role);
  RS_RETURN_IF_ERROR(
      WriteFull(fd, EncodeBulkWelcome(accepted, proof), deadline, what));
  if (!accepted) {
    return absl::UnauthenticatedError(
        "bulk path: a peer without the job's token (or of another shard or "
        "rank) was refused");
  }
  Seen(auth.rank, -1);
  return auth;
}

BulkLimits BulkServer::Limits(const BulkAuth& auth) const {
  BulkLimits limits;
  limits.shard = options_.shard;
  limits.rank = auth.rank;
  limits.server = true;
  limits.role = auth.role;
  limits.max_chunk_elements = shard_->chunk_elements();
  const KeyRange range = shard_->range();
  limits.range_begin = range.begin;
  limits.range_end = range.end;
  return limits;
}

BulkHeader BulkServer::Frame(BulkKind kind, const BulkAuth& auth,
                             int64_t step, int64_t count) const {
  return MakeBulkHeader(kind, options_.shard, auth.rank, step, count);
}

void BulkServer::SendError(int fd, const BulkAuth& auth,
                           const absl::Status& status) {
  std::string message(status.message().substr(0, kBulkMaxErrorBytes));
  const BulkHeader h =
      Frame(BulkKind::kError, auth, static_cast<int64_t>(status.code()),
            static_cast<int64_t>(message.size()));
  WriteFull(fd, EncodeBulkHeader(h) + message,
            absl::Now() + options_.io_timeout, "bulk path error")
      .IgnoreError();
}

void BulkServer::Seen(int rank, int64_t step) {
  if (seen_) seen_(rank, step);
}

absl::Status BulkServer::ServePush(int fd, const BulkAuth& auth) {
  const std::string what = Peer(auth, "push");
  std::string header(kBulkHeaderBytes, '\0');
  std::string payload;
  int64_t received = 0;
  absl::Status refusal;  // the stream's first refused chunk
  while (!stopping_.load()) {
    RS_RETURN_IF_ERROR(ReadFull(fd, header.data(), header.size(),
                                absl::Now() + options_.idle_timeout, what));
    absl::StatusOr<BulkHeader> h = ParseBulkHeader(header, Limits(auth));
    if (!h.ok()) {
      ++refused_;
      SendError(fd, auth, h.status());
      return h.status();
    }
    if (h->kind == BulkKind::kPushChunk) {
      payload.resize(h->payload_bytes());
      RS_RETURN_IF_ERROR(ReadFull(fd, payload.data(), payload.size(),
                                  absl::Now() + options_.io_timeout, what));
      ++received;
      Seen(auth.rank, h->step);
      if (refusal.ok()) {
        refusal = shard_->PushGradient(auth.rank, h->step, h->offset,
                                       "float32", payload);
      }
      continue;
    }
    // kPushEnd: the stream's answer.
    if (refusal.ok() && h->count != received) {
      refusal = absl::InvalidArgumentError(absl::StrCat(
          "bulk push of step ", h->step, " ended after ", received,
          " chunks but says ", h->count));
    }
    if (!refusal.ok()) {
      SendError(fd, auth, refusal);
    } else {
      const BulkHeader ack =
          Frame(BulkKind::kPushAck, auth, h->step, received);
      RS_RETURN_IF_ERROR(WriteFull(fd, EncodeBulkHeader(ack),
                                   absl::Now() + options_.io_timeout, what));
    }
    received = 0;
    refusal = absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status BulkServer::ServePull(int fd, const BulkAuth& auth) {
  const std::string what = Peer(auth, "pull");
  std::string header(kBulkHeaderBytes, '\0');
  while (!stopping_.load()) {
    RS_RETURN_IF_ERROR(ReadFull(fd, header.data(), header.size(),
                                absl::Now() + options_.idle_timeout, what));
    absl::StatusOr<BulkHeader> request = ParseBulkHeader(header, Limits(auth));
    if (!request.ok()) {
      ++refused_;
      SendError(fd, auth, request.status());
      return request.status();
    }
    const int64_t version = request->step;
    Seen(auth.rank, version - 1);
    absl::StatusOr<ParamShard::PullCursor> cursor =
        shard_->StartPull(auth.rank, version);
    if (!cursor.ok()) {
      SendError(fd, auth, cursor.status());
      continue;
    }
    const absl::Time deadline = absl::Now() + options_.max_pull_wait;
    BulkHeader chunk = Frame(BulkKind::kPullChunk, auth, version, 0);
    int64_t sent = 0;
    absl::Status failed;
    while (cursor->remaining > 0 && !stopping_.load()) {
      absl::Span<const float> data;
      failed = shard_->NextReadyChunk(
          &*cursor, std::min(deadline, absl::Now() + absl::Seconds(1)),
          &chunk.offset, &data);
      if (absl::IsDeadlineExceeded(failed) && absl::Now() < deadline) {
        failed = absl::OkStatus();
        continue;
      }
      if (!failed.ok()) break;
      chunk.count = static_cast<int64_t>(data.size());
      const std::string h = EncodeBulkHeader(chunk);
      iovec parts[2] = {
          {const_cast<char*>(h.data()), h.size()},
          {const_cast<float*>(data.data()), data.size() * sizeof(float)}};
      RS_RETURN_IF_ERROR(WriteFull(fd, parts, 2,
                                   absl::Now() + options_.io_timeout, what));
      ++sent;
    }
    if (!failed.ok()) {
      SendError(fd, auth, failed);
      continue;
    }
    const BulkHeader end = Frame(BulkKind::kPullEnd, auth, version, sent);
    RS_RETURN_IF_ERROR(WriteFull(fd, EncodeBulkHeader(end),
                                 absl::Now() + options_.io_timeout, what));
  }
  return absl::OkStatus();
}

}  // namespace ringside
