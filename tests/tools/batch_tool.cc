// Test tool for Kafka record batches: the cross-checks against real peers
// (tests/integration/test_record_batch_peers.py) drive it.
//
//   thaw_batch_tool encode [--compression C] [--batch-records N] [--leader-epoch E] OUT < records.jsonl
//   thaw_batch_tool decode [--allow-partial-tail] IN > records.jsonl
//
// Record lines: {"offset": N, "timestamp": MS, "timestamp_type": "create"|"log_append" (default create),
//   "key": BASE64|null, "value": BASE64|null, "headers": [[KEY, BASE64|null], ...]}
// decode prints the same fields per record plus "batch" (index), "base_offset", "compression",
// "control", and one final line {"batches": N, "records": M, "partial_tail_bytes": K}.
// encode splits records into batches of --batch-records (default: all in one batch).
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "thaw/kafka/protocol/record_batch.h"

namespace {

using json = nlohmann::json;
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string B64Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += {kB64[v >> 18], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], kB64[v & 63]};
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    out += {kB64[v >> 18], kB64[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8);
    out += {kB64[v >> 18], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], '='};
  }
  return out;
}

std::string B64Decode(std::string_view in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = c ? std::strchr(kB64, c) : nullptr;
    if (!p) continue;  // '=' and whitespace
    acc = (acc << 6) | uint32_t(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

json Nullable(const std::optional<std::string>& s) { return s ? json(B64Encode(*s)) : json(nullptr); }

int Fail(const std::string& msg) {
  std::fprintf(stderr, "thaw_batch_tool: %s\n", msg.c_str());
  return 1;
}

int Encode(int argc, char** argv) {
  thaw::kafka::BatchOptions options;
  size_t per_batch = 0;
  std::string out_path;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--compression" && i + 1 < argc) {
      auto c = thaw::kafka::ParseCompression(argv[++i]);
      if (!c.ok()) return Fail(c.status().ToString());
      options.compression = *c;
    } else if (a == "--batch-records" && i + 1 < argc) {
      per_batch = std::stoul(argv[++i]);
    } else if (a == "--leader-epoch" && i + 1 < argc) {
      options.leader_epoch = std::stoi(argv[++i]);
    } else if (out_path.empty()) {
      out_path = a;
    } else {
      return Fail("unexpected argument " + a);
    }
  }
  if (out_path.empty()) return Fail("encode needs an output file");
  std::deque<std::string> store;
  auto keep = [&](const json& j) -> std::optional<std::string_view> {
    if (j.is_null()) return std::nullopt;
    return std::string_view(store.emplace_back(B64Decode(j.get<std::string>())));
  };
  thaw::kafka::RecordBatch batch;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json j = json::parse(line);
    thaw::kafka::Record r;
    r.offset = j.at("offset").get<int64_t>();
    r.timestamp_ms = j.at("timestamp").get<int64_t>();
    if (j.value("timestamp_type", "create") == "log_append")
      r.timestamp_type = thaw::kafka::TimestampType::kLogAppendTime;
    r.key = keep(j.value("key", json(nullptr)));
    r.value = keep(j.value("value", json(nullptr)));
    r.header_begin = static_cast<uint32_t>(batch.headers.size());
    for (const auto& h : j.value("headers", json::array())) {
      batch.headers.push_back({std::string_view(store.emplace_back(h.at(0).get<std::string>())), keep(h.at(1))});
    }
    r.header_count = static_cast<uint32_t>(batch.headers.size() - r.header_begin);
    batch.records.push_back(r);
  }
  std::string out;
  std::span<const thaw::kafka::Record> all(batch.records);
  size_t step = per_batch ? per_batch : all.size();
  for (size_t i = 0; i < all.size(); i += step) {
    auto st = thaw::kafka::AppendRecordBatch(all.subspan(i, std::min(step, all.size() - i)), batch, options, &out);
    if (!st.ok()) return Fail(st.ToString());
  }
  std::ofstream f(out_path, std::ios::binary);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  return f.good() ? 0 : Fail("cannot write " + out_path);
}

int Decode(int argc, char** argv) {
  thaw::kafka::DecodeOptions options;
  std::string in_path;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--allow-partial-tail")
      options.allow_partial_tail = true;
    else if (in_path.empty())
      in_path = a;
    else
      return Fail("unexpected argument " + a);
  }
  if (in_path.empty()) return Fail("decode needs an input file");
  std::ifstream f(in_path, std::ios::binary);
  if (!f) return Fail("cannot read " + in_path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string bytes = ss.str();
  auto r = thaw::kafka::DecodeRecordBatches(bytes, options);
  if (!r.ok()) return Fail(r.status().ToString());
  size_t n = 0;
  for (size_t b = 0; b < r->batches.size(); ++b) {
    const auto& batch = r->batches[b];
    for (const auto& rec : batch.records) {
      json headers = json::array();
      for (const auto& [k, v] : rec.headers) headers.push_back(json::array({k, Nullable(v)}));
      json j = {{"batch", b},
                {"base_offset", batch.base_offset},
                {"compression", std::string(thaw::kafka::CompressionName(batch.compression()))},
                {"control", batch.is_control()},
                {"offset", rec.offset},
                {"timestamp", rec.timestamp_ms},
                {"timestamp_type",
                 batch.timestamp_type() == thaw::kafka::TimestampType::kLogAppendTime ? "log_append" : "create"},
                {"key", Nullable(rec.key)},
                {"value", Nullable(rec.value)},
                {"headers", headers}};
      std::cout << j.dump() << "\n";
      ++n;
    }
  }
  std::cout
      << json{{"batches", r->batches.size()}, {"records", n}, {"partial_tail_bytes", r->partial_tail_bytes}}.dump()
      << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "encode") == 0) return Encode(argc, argv);
  if (argc >= 2 && std::strcmp(argv[1], "decode") == 0) return Decode(argc, argv);
  std::fprintf(stderr,
               "usage: thaw_batch_tool encode [--compression C] [--batch-records N] [--leader-epoch E] OUT < jsonl\n"
               "       thaw_batch_tool decode [--allow-partial-tail] IN > jsonl\n");
  return 2;
}
