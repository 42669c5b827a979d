// Fuzz target: the rendezvous store's request handling. The input is a
// fuzz::StoreFuzzInput — a sequence of Set, Get, Wait and Add requests (the
// wire messages of proto/store.proto) — replayed through StoreService's own
// handlers (with a server context of no deadline) on one InMemoryStore.
//
// Invariants checked after every call:
//   - a rejected call leaves the store as it was (key count, the key's
//     value);
//   - after a Set, Get returns the value; after an Add, the key holds the
//     returned value as decimal text;
//   - a Get or Wait on present keys succeeds.
// Waiting requests wait at most 1 ms (timeout_ms above 1 is cut to 0) so
// that an input cannot stall the fuzzer.
#include <google/protobuf/stubs/logging.h>
#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collectives/in_memory_store.h"
#include "collectives/store_service.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_inputs.pb.h"

namespace ringside {
namespace {

constexpr int kMaxCalls = 64;

int64_t ShortWait(int64_t timeout_ms) { return timeout_ms > 1 ? 0 : timeout_ms; }

// The key's value, if present.
std::optional<std::string> Peek(InMemoryStore& store, const std::string& key) {
  absl::StatusOr<std::string> v = store.Get(key, absl::ZeroDuration());
  if (!v.ok()) return std::nullopt;
  return *v;
}

}  // namespace
}  // namespace ringside

// Protobuf logs every string field with invalid UTF-8 it refuses to parse;
// the fuzzer makes many.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringside;
  fuzz::StoreFuzzInput input;
  if (!input.ParseFromArray(data, static_cast<int>(size))) return 0;
  InMemoryStore store;
  StoreService service(&store);
  int calls = 0;
  for (const fuzz::StoreCall& call : input.calls()) {
    if (++calls > kMaxCalls) break;
    grpc::ServerContext context;
    const size_t keys_before = store.size();
    switch (call.call_case()) {
      case fuzz::StoreCall::kSet: {
        proto::StoreSetReply reply;
        grpc::Status s = service.Set(&context, &call.set(), &reply);
        FUZZ_CHECK(s.ok(), "Set failed: %s", s.error_message().c_str());
        FUZZ_CHECK(Peek(store, call.set().key()) == call.set().value(),
                   "Get after Set differs");
        break;
      }
      case fuzz::StoreCall::kGet: {
        proto::StoreGetRequest request = call.get();
        request.set_timeout_ms(ShortWait(request.timeout_ms()));
        const std::optional<std::string> held = Peek(store, request.key());
        proto::StoreGetReply reply;
        grpc::Status s = service.Get(&context, &request, &reply);
        if (s.ok()) {
          FUZZ_CHECK(held.has_value() && reply.value() == *held,
                     "Get returned another value");
        } else {
          FUZZ_CHECK(s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED,
                     "Get failed with %d: %s", s.error_code(),
                     s.error_message().c_str());
          FUZZ_CHECK(!held.has_value(), "Get of a present key failed: %s",
                     s.error_message().c_str());
        }
        break;
      }
      case fuzz::StoreCall::kWait: {
        proto::StoreWaitRequest request = call.wait();
        request.set_timeout_ms(ShortWait(request.timeout_ms()));
        bool all_present = true;
        for (const std::string& key : request.keys()) {
          all_present = all_present && store.Get(key, absl::ZeroDuration()).ok();
        }
        proto::StoreWaitReply reply;
        grpc::Status s = service.Wait(&context, &request, &reply);
        FUZZ_CHECK(s.ok() == all_present, "Wait answered %d with keys %s",
                   s.error_code(), all_present ? "present" : "missing");
        break;
      }
      case fuzz::StoreCall::kAdd: {
        const std::optional<std::string> held = Peek(store, call.add().key());
        proto::StoreAddReply reply;
        grpc::Status s = service.Add(&context, &call.add(), &reply);
        if (s.ok()) {
          FUZZ_CHECK(Peek(store, call.add().key()) ==
                         std::optional<std::string>(absl::StrCat(reply.value())),
                     "Add returned %lld but the key holds something else",
                     static_cast<long long>(reply.value()));
        } else {
          FUZZ_CHECK(Peek(store, call.add().key()) == held &&
                         store.size() == keys_before,
                     "a rejected Add changed the store: %s",
                     s.error_message().c_str());
        }
        break;
      }
      case fuzz::StoreCall::CALL_NOT_SET:
        break;
    }
  }
  return 0;
}
