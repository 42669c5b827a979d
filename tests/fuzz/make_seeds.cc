// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/
// seed-*): small, valid sessions of each server and valid checkpoint files,
// from which the fuzzers mutate. Checked in; rerun after changing the
// formats:
//
//   bazel run //tests/fuzz:make_seeds -- $PWD/tests/fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/checkpoint.h"
#include "core/optimizer_config.h"
#include "core/tensor_layout.h"
#include "server/partitioner.h"
#include "tests/fuzz/fuzz_inputs.pb.h"

namespace ringside {
namespace {

void Write(const std::filesystem::path& dir, const std::string& name,
           const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string Floats(int64_t n, float value) {
  std::vector<float> v(n, value);
  return std::string(reinterpret_cast<const char*>(v.data()), n * 4);
}

// One BSP job: every rank registers, rank 0 initializes, every rank pushes
// step 0, pulls version 1, finishes.
fuzz::PsFuzzInput Job(int workers, int shards, int shard,
                      const TensorLayout& layout, const OptimizerConfig& opt,
                      int64_t chunk_bytes) {
  fuzz::PsFuzzInput in;
  in.set_num_workers(workers - 1);  // mapped to 1 + value % 4
  in.set_num_shards(shards - 1);
  in.set_shard(shard);
  std::vector<KeyRange> ranges =
      *(*MakePartitioner("even_bytes"))->Partition(layout, shards);
  const std::vector<KeyRange> chunks =
      ChunkRange(ranges[shard], chunk_bytes / 4);
  for (int r = 0; r < workers; ++r) {
    proto::RegisterRequest* reg = in.add_calls()->mutable_register_();
    reg->set_rank(r);
    reg->set_world_size(workers);
    *reg->mutable_layout() = layout.ToProto();
    *reg->mutable_optimizer() = opt.ToProto();
    reg->set_chunk_bytes(chunk_bytes);
    reg->set_num_shards(shards);
    reg->set_partitioner("even_bytes");
  }
  for (const KeyRange& c : chunks) {
    proto::ParamChunk* p = in.add_calls()->mutable_push_init();
    p->set_rank(0);
    p->set_offset(c.begin);
    p->set_dtype("float32");
    p->set_data(Floats(c.size(), 0.5f));
  }
  for (int r = 0; r < workers; ++r) {
    for (const KeyRange& c : chunks) {
      proto::GradChunk* g = in.add_calls()->mutable_push();
      g->set_rank(r);
      g->set_step(0);
      g->set_offset(c.begin);
      g->set_dtype("float32");
      g->set_data(Floats(c.size(), 0.25f * (r + 1)));
    }
  }
  for (int r = 0; r < workers; ++r) {
    proto::PullRequest* pull = in.add_calls()->mutable_pull();
    pull->set_rank(r);
    pull->set_version(1);
  }
  for (int r = 0; r < workers; ++r) in.add_calls()->mutable_finish()->set_rank(r);
  return in;
}

void PsSeeds(const std::filesystem::path& dir) {
  const TensorLayout small = *TensorLayout::FromShapes({{"w", {4, 3}}, {"b", {3}}});
  const TensorLayout three =
      *TensorLayout::FromShapes({{"w1", {8, 4}}, {"b1", {4}}, {"w2", {4, 2}}});
  OptimizerConfig sgd;
  OptimizerConfig adam;
  adam.type = "adam";
  adam.lr = 0.001f;
  Write(dir, "seed-sps-2workers", Job(2, 1, 0, small, sgd, 16).SerializeAsString());
  Write(dir, "seed-dps-shard1of2", Job(3, 2, 1, three, sgd, 32).SerializeAsString());
  Write(dir, "seed-adam-1worker", Job(1, 1, 0, three, adam, 4).SerializeAsString());
  // Bad requests the server must refuse.
  fuzz::PsFuzzInput bad = Job(2, 1, 0, small, sgd, 16);
  bad.mutable_calls(3)->mutable_push_init()->set_dtype("float16");
  bad.mutable_calls(4)->mutable_push_init()->set_data("xyz");
  bad.mutable_calls(1)->mutable_register_()->set_chunk_bytes(6);
  Write(dir, "seed-bad-requests", bad.SerializeAsString());
  // Requests the server must refuse: a registration with no tensors,
  // chunk_bytes = 2^62, a heartbeat from rank -4; each refused, then the
  // real job.
  const fuzz::PsFuzzInput job = Job(2, 1, 0, small, sgd, 16);
  fuzz::PsFuzzInput refused;
  refused.set_num_workers(1);  // 2 workers
  proto::RegisterRequest* empty = refused.add_calls()->mutable_register_();
  *empty = job.calls(0).register_();
  empty->mutable_layout()->clear_tensors();
  proto::RegisterRequest* huge = refused.add_calls()->mutable_register_();
  *huge = job.calls(0).register_();
  huge->set_chunk_bytes(int64_t{1} << 62);
  refused.add_calls()->mutable_heartbeat()->set_rank(-4);
  for (const fuzz::PsCall& call : job.calls()) *refused.add_calls() = call;
  refused.add_calls()->mutable_heartbeat()->set_rank(1);
  Write(dir, "seed-refused-registrations", refused.SerializeAsString());
}

void StoreSeeds(const std::filesystem::path& dir) {
  fuzz::StoreFuzzInput in;
  auto set = [&in](const std::string& k, const std::string& v) {
    proto::StoreSetRequest* s = in.add_calls()->mutable_set();
    s->set_key(k);
    s->set_value(v);
  };
  set("gloo/rank0", std::string("\0\1addr", 6));
  set("nccl_id", "abcdefgh");
  in.add_calls()->mutable_get()->set_key("nccl_id");
  in.add_calls()->mutable_get()->set_key("missing");
  proto::StoreWaitRequest* w = in.add_calls()->mutable_wait();
  w->add_keys("gloo/rank0");
  w->add_keys("nccl_id");
  proto::StoreAddRequest* a = in.add_calls()->mutable_add();
  a->set_key("barrier/0");
  a->set_delta(1);
  a = in.add_calls()->mutable_add();
  a->set_key("barrier/0");
  a->set_delta(-7);
  a = in.add_calls()->mutable_add();
  a->set_key("nccl_id");  // not an integer: refused
  a->set_delta(1);
  Write(dir, "seed-rendezvous", in.SerializeAsString());
}

void CheckpointSeeds(const std::filesystem::path& dir) {
  Checkpoint c;
  c.step = 3;
  c.shard = 1;
  c.num_shards = 2;
  c.layout = *TensorLayout::FromShapes({{"w", {4, 3}}, {"b", {3}}});
  c.pieces = {{8, 15}};
  c.writer = "ps_server shard 1 of 2";
  c.params = std::vector<float>(7, 0.5f);
  c.optimizer_state = std::vector<float>(7, 0.125f);  // SGD momentum
  for (const bool adam : {false, true}) {
    if (adam) {
      c.optimizer.type = "adam";
      c.optimizer_state = std::vector<float>(14, 0.25f);  // m and v
    }
    const std::string file = SerializeCheckpoint(c);
    const std::string name = adam ? "adam" : "sgd";
    // Mode byte 0: the file as it is; 1: the harness appends the CRC.
    Write(dir, "seed-" + name, std::string(1, '\0') + file);
    Write(dir, "seed-" + name + "-crc-fixed",
          std::string(1, '\1') + file.substr(0, file.size() - 4));
  }
}

}  // namespace
}  // namespace ringside

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_DIR\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  ringside::PsSeeds(root / "ps_request");
  ringside::StoreSeeds(root / "store_request");
  ringside::CheckpointSeeds(root / "checkpoint");
  std::printf("wrote seeds under %s\n", argv[1]);
  return 0;
}
