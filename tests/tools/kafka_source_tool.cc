// Test tool for archive's data path on a real broker
// (tests/integration/test_kafka_source.py): reads a topic with
// archive::KafkaSource and optionally writes what it read with
// parquet::DataFileWriter, one file per partition.
//
//   thaw_kafka_source_tool --brokers B --topic T [--partitions 0,2] [--resume P=N,...]
//       [--from earliest|latest|N] [--follow-ms MS] [--stop-after-ms MS] [--max-bytes N]
//       [--group G] [--parquet DIR [--abort]] [-p K=V]... [-X K=V]...
//
// Without --follow-ms it polls until the source is Done(); with it, for MS
// milliseconds. --stop-after-ms sets the stop flag after MS from another
// thread. --abort aborts the Parquet writers instead of finishing them
// (after all records were appended). -p sets FileIO properties. Prints one JSON object: {"ok", "code", "error",
// "start", "stop", "records": [{partition, offset, timestamp, timestamp_type, key, value, headers}] (bytes as hex, null
// kept), "positions", "done", "seconds", "files": [{path, record_count, file_size, value_counts, null_value_counts,
// column_sizes, lower_bounds, upper_bounds (hex), split_offsets}]}.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "thaw/archive/kafka_source.h"
#include "thaw/parquet/data_file_writer.h"
#include "thaw/storage/file_io_registry.h"

namespace {

using nlohmann::json;
using thaw::Status;

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

json Bytes(const std::optional<std::string_view>& s) { return s ? json(Hex(*s)) : json(nullptr); }

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

template <typename M>
json IdMap(const M& m, bool hex = false) {
  json j = json::object();
  for (const auto& [k, v] : m) {
    if constexpr (std::is_same_v<typename M::mapped_type, std::string>) {
      j[std::to_string(k)] = hex ? Hex(v) : v;
    } else {
      j[std::to_string(k)] = v;
    }
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  thaw::archive::SourceOptions opt;
  std::atomic<bool> stop{false};
  opt.kafka.stop = &stop;
  int64_t follow_ms = -1, stop_after_ms = -1, max_bytes = 1 << 20;
  std::string parquet_dir;
  bool abort_files = false;
  thaw::storage::PropertyMap props;
  json out;
  Status st = [&]() -> Status {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--abort") {
        abort_files = true;
        continue;
      }
      if (i + 1 >= argc) return Status::Invalid("{} needs a value", a);
      const std::string v = argv[++i];
      if (a == "--brokers") {
        opt.kafka.brokers = v;
      } else if (a == "--topic") {
        opt.topic = v;
      } else if (a == "--partitions") {
        for (const auto& p : Split(v, ',')) opt.partitions.push_back(std::stoi(p));
      } else if (a == "--resume") {
        for (const auto& kv : Split(v, ',')) {
          auto eq = kv.find('=');
          opt.resume[std::stoi(kv.substr(0, eq))] = std::stoll(kv.substr(eq + 1));
        }
      } else if (a == "--from") {
        ASSIGN_OR_RAISE(opt.from, thaw::archive::FromOffset::Parse(v));
      } else if (a == "--follow-ms") {
        follow_ms = std::stoll(v);
        opt.follow = true;
      } else if (a == "--stop-after-ms") {
        stop_after_ms = std::stoll(v);
      } else if (a == "--max-bytes") {
        max_bytes = std::stoll(v);
      } else if (a == "--group") {
        opt.group_id = v;
      } else if (a == "--parquet") {
        parquet_dir = v;
      } else if (a == "-p") {
        auto eq = v.find('=');
        props[v.substr(0, eq)] = v.substr(eq + 1);
      } else if (a == "-X") {
        RETURN_NOT_OK(thaw::kafka::rdkafka::ParseProperty(v, &opt.kafka.properties));
      } else {
        return Status::Invalid("unknown argument {}", a);
      }
    }
    opt.timeout_ms = 20000;
    const auto t0 = std::chrono::steady_clock::now();
    std::thread stopper;
    if (stop_after_ms >= 0) {
      stopper = std::thread([&]() {
        std::this_thread::sleep_for(std::chrono::milliseconds(stop_after_ms));
        stop = true;
      });
    }
    auto finish = [&]() {
      if (stopper.joinable()) stopper.join();
      out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    auto source = thaw::archive::KafkaSource::Make(opt);
    if (!source.ok()) {
      finish();
      return source.status();
    }
    auto& src = **source;
    out["start"] = IdMap(src.start_offsets());
    out["stop"] = IdMap(src.stop_offsets());
    out["records"] = json::array();
    std::vector<thaw::records::RecordBatch> batches;
    int polls = 0;
    while (!src.Done() && !stop) {
      const auto elapsed =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
      if (follow_ms >= 0 && elapsed >= follow_ms) break;
      const int64_t wait = follow_ms >= 0 ? std::max<int64_t>(1, follow_ms - elapsed) : 30000;
      thaw::records::RecordBatch batch;
      Status polled = src.Poll(&batch, max_bytes, std::chrono::milliseconds(wait));
      if (!polled.ok()) {
        finish();
        return polled;
      }
      ++polls;
      if (follow_ms < 0 && batch.size() == 0 && !src.Done() && !stop) {
        finish();
        return Status::IOError("no records for 30 s before the stop offsets");
      }
      for (const auto& r : batch.records) {
        json h = json::array();
        for (const auto& hd : batch.HeadersOf(r)) h.push_back({Hex(hd.key), Bytes(hd.value)});
        out["records"].push_back({{"partition", r.partition},
                                  {"offset", r.offset},
                                  {"timestamp", r.timestamp_ms},
                                  {"timestamp_type", static_cast<int>(r.timestamp_type)},
                                  {"key", Bytes(r.key)},
                                  {"value", Bytes(r.value)},
                                  {"headers", h}});
      }
      batches.push_back(std::move(batch));  // the views stay valid after more polls
    }
    out["polls"] = polls;
    out["positions"] = IdMap(src.positions());
    out["done"] = src.Done();
    src.CommitGroupOffsets(src.positions());
    finish();
    if (parquet_dir.empty()) return Status::OK();

    auto schema = thaw::iceberg::Schema::FromJson(json::parse(thaw::parquet::CanonicalSchemaJson(false)));
    RETURN_NOT_OK(schema.status());
    ASSIGN_OR_RAISE(auto io, thaw::storage::FileIOFor(parquet_dir, props));
    std::map<int32_t, std::unique_ptr<thaw::parquet::DataFileWriter>> writers;
    for (const auto& b : batches) {
      for (size_t i = 0; i < b.size(); ++i) {
        const int32_t p = b.records[i].partition;
        auto& w = writers[p];
        if (!w) {
          thaw::iceberg::Datum d;
          d.kind = thaw::iceberg::Datum::kInt;
          d.i = p;
          thaw::parquet::DataFileWriterOptions wo;
          wo.row_group_bytes = 1 << 20;
          ASSIGN_OR_RAISE(w, thaw::parquet::DataFileWriter::Make(
                                 *io, parquet_dir + "/kafka_partition=" + std::to_string(p) + "/data.parquet", *schema,
                                 0, {d}, wo));
        }
        RETURN_NOT_OK(w->Append(b, i, i + 1));
      }
    }
    out["files"] = json::array();
    for (auto& [p, w] : writers) {
      if (abort_files) {
        out["written_before_abort"] = out.value("written_before_abort", int64_t{0}) + w->written_bytes();
        w->Abort();
        continue;
      }
      ASSIGN_OR_RAISE(auto df, w->Finish());
      out["files"].push_back({{"path", df.path},
                              {"record_count", df.record_count},
                              {"file_size", df.file_size},
                              {"value_counts", IdMap(df.value_counts)},
                              {"null_value_counts", IdMap(df.null_value_counts)},
                              {"column_sizes", IdMap(df.column_sizes)},
                              {"lower_bounds", IdMap(df.lower_bounds, true)},
                              {"upper_bounds", IdMap(df.upper_bounds, true)},
                              {"split_offsets", df.split_offsets}});
    }
    return Status::OK();
  }();
  out["ok"] = st.ok();
  if (!st.ok()) {
    out["code"] = thaw::StatusCodeName(st.code());
    out["error"] = st.message();
  }
  std::printf("%s\n", out.dump().c_str());
  return st.ok() ? 0 : 1;
}
