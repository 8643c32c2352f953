// Cost of the generated Kafka codec on the serving path: encoding a Fetch
// response that carries PARTITIONS partitions of MIB MiB of record batches
// each (response header + body into one buffer, as the server sends it), next
// to a bare memcpy of the same record bytes; and decoding it back. Prints one
// JSON line: bytes per response and GB/s for each (best of ROUNDS).
//
//   kafka_codec_bench [PARTITIONS [MIB [ROUNDS [VERSION]]]]     (default 16 1 20 12)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "thaw/kafka/protocol/messages.h"

using Clock = std::chrono::steady_clock;
using namespace thaw::kafka;

int main(int argc, char** argv) {
  const int partitions = argc > 1 ? std::atoi(argv[1]) : 16;
  const int mib = argc > 2 ? std::atoi(argv[2]) : 1;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  const int16_t version = static_cast<int16_t>(argc > 4 ? std::atoi(argv[4]) : 12);

  msg::FetchResponse resp;
  auto& topic = resp.responses.emplace_back();
  topic.topic = "orders";
  for (int p = 0; p < partitions; ++p) {
    auto& part = topic.partitions.emplace_back();
    part.partition_index = p;
    part.high_watermark = 1000000;
    part.records = std::string(static_cast<size_t>(mib) << 20, static_cast<char>('a' + p % 26));
  }
  msg::ResponseHeader header;
  header.correlation_id = 7;
  const int16_t hv = msg::ResponseHeaderVersion(msg::FetchResponse::kApiKey, version);

  double best_encode = 1e9, best_copy = 1e9, best_decode = 1e9;
  size_t bytes = 0;
  std::string frame;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = Clock::now();
    std::string out;
    WireWriter w(&out);
    w.WriteInt32(0);  // frame size, patched below
    header.Write(w, hv);
    resp.Write(w, version);
    uint32_t size = static_cast<uint32_t>(out.size() - 4);
    uint32_t be = __builtin_bswap32(size);
    std::memcpy(out.data(), &be, 4);
    auto t1 = Clock::now();
    best_encode = std::min(best_encode, std::chrono::duration<double>(t1 - t0).count());
    bytes = out.size();

    auto c0 = Clock::now();
    std::string copy;
    for (const auto& part : topic.partitions) copy.append(*part.records);
    auto c1 = Clock::now();
    best_copy = std::min(best_copy, std::chrono::duration<double>(c1 - c0).count());
    if (copy.size() > out.size()) return 1;

    auto d0 = Clock::now();
    WireReader r(std::string_view(out).substr(4));
    msg::ResponseHeader h;
    msg::FetchResponse back;
    if (!h.Read(r, hv).ok() || !back.Read(r, version).ok() || !r.done()) {
      std::fprintf(stderr, "decode failed\n");
      return 1;
    }
    auto d1 = Clock::now();
    best_decode = std::min(best_decode, std::chrono::duration<double>(d1 - d0).count());
    frame = std::move(out);
  }
  std::printf(
      "{\"version\": %d, \"partitions\": %d, \"mib_per_partition\": %d, \"response_bytes\": %zu, "
      "\"encode_gb_s\": %.2f, \"memcpy_gb_s\": %.2f, \"decode_gb_s\": %.2f, \"encode_ms\": %.3f}\n",
      version, partitions, mib, bytes, bytes / best_encode / 1e9, bytes / best_copy / 1e9, bytes / best_decode / 1e9,
      best_encode * 1e3);
  return 0;
}
