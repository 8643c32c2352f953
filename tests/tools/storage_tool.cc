// Test tool for FileIO on real stores (tests/integration/test_object_store.py
// drives it against moto): writes, aborted writes, reads, deletes, and the
// FileIO's request counts.
//
//   thaw_storage_tool [-p KEY=VALUE]... put LOCATION SIZE      writes SIZE bytes (byte i = i % 251), closes
//   thaw_storage_tool [-p KEY=VALUE]... put-abort LOCATION SIZE writes SIZE bytes, then aborts
//   thaw_storage_tool [-p KEY=VALUE]... put-drop LOCATION SIZE  writes SIZE bytes, destroys the file unclosed
//   thaw_storage_tool [-p KEY=VALUE]... get LOCATION [LOCATION...]  reads each whole (ReadAll) twice
//   thaw_storage_tool [-p KEY=VALUE]... delete LOCATION
//   thaw_storage_tool [-p KEY=VALUE]... list PREFIX        adds "files": [{location, size, mtime_ms}] (FileIO::List)
//   thaw_storage_tool [-p KEY=VALUE]... parquet LOCATION   opens and reads a Parquet file twice; adds
//                                      "rows" and "requests_first"/"requests_second" (per open + read)
//
// Prints one JSON line: {"ok": bool, "code": StatusCode name, "error": message, "size": N, "checksum": N,
// "requests": N, "bytes_read": N, "retries": N}.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "thaw/parquet/parquet_file.h"
#include "thaw/storage/file_io_registry.h"

namespace {

using thaw::Status;
using thaw::storage::FileIO;

std::string Pattern(int64_t from, int64_t n) {
  std::string s(static_cast<size_t>(n), '\0');
  for (int64_t i = 0; i < n; ++i) s[static_cast<size_t>(i)] = static_cast<char>((from + i) % 251);
  return s;
}

Status Put(FileIO& io, const std::string& location, int64_t size, const std::string& how) {
  ASSIGN_OR_RAISE(auto out, io.Create(location));
  const int64_t chunk = 1 << 20;
  for (int64_t at = 0; at < size; at += chunk) {
    std::string part = Pattern(at, std::min(chunk, size - at));
    RETURN_NOT_OK(out->Write(part.data(), static_cast<int64_t>(part.size())));
  }
  if (how == "put") return out->Close();
  if (how == "put-abort") out->Abort();
  return Status::OK();  // put-drop: the destructor aborts
}

// The top-level columns with field ids 1..999 (Iceberg data files), in id order.
std::vector<int> AllTopLevel(thaw::pq::ParquetFile& pf) {
  std::vector<int> out;
  for (int32_t id = 1; id < 1000; ++id) {
    int idx = pf.TopLevelField(id, "");
    if (idx >= 0 && std::find(out.begin(), out.end(), idx) == out.end()) out.push_back(idx);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  thaw::storage::PropertyMap props;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
      std::string kv = argv[++i];
      auto eq = kv.find('=');
      props[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    } else {
      args.emplace_back(argv[i]);
    }
  }
  if (args.size() < 2) {
    std::fprintf(stderr, "usage: thaw_storage_tool [-p K=V]... put|put-abort|put-drop|get|delete|list LOCATION...\n");
    return 2;
  }
  nlohmann::json out;
  std::shared_ptr<FileIO> io;
  Status st = [&]() -> Status {
    ASSIGN_OR_RAISE(io, thaw::storage::FileIOFor(args[1], props));
    const std::string& cmd = args[0];
    if (cmd == "put" || cmd == "put-abort" || cmd == "put-drop") {
      if (args.size() != 3) return Status::Invalid("{} LOCATION SIZE", cmd);
      return Put(*io, args[1], std::stoll(args[2]), cmd);
    }
    if (cmd == "get") {
      int64_t size = 0, checksum = 0;
      for (size_t i = 1; i < args.size(); ++i) {
        for (int round = 0; round < 2; ++round) {
          ASSIGN_OR_RAISE(auto data, io->ReadAll(args[i]));
          if (round == 0) {
            size += static_cast<int64_t>(data.size());
            for (unsigned char c : data) checksum = (checksum * 31 + c) % 1000000007;
          }
        }
      }
      out["size"] = size;
      out["checksum"] = checksum;
      return Status::OK();
    }
    if (cmd == "delete") return io->Delete(args[1]);
    if (cmd == "list") {
      ASSIGN_OR_RAISE(auto files, io->List(args[1]));
      out["files"] = nlohmann::json::array();
      for (const auto& f : files) {
        out["files"].push_back({{"location", f.location}, {"size", f.size}, {"mtime_ms", f.mtime_ms}});
      }
      return Status::OK();
    }
    if (cmd == "parquet") {
      int64_t rows = 0;
      for (int round = 0; round < 2; ++round) {
        const int64_t before = io->stats().requests;
        ASSIGN_OR_RAISE(auto pf, thaw::pq::ParquetFile::Open(*io, args[1]));
        std::vector<int> groups;
        for (int g = 0; g < pf->num_row_groups(); ++g) groups.push_back(g);
        ASSIGN_OR_RAISE(auto reader, pf->Read(groups, AllTopLevel(*pf), 8192));
        rows = 0;
        while (true) {
          std::shared_ptr<arrow::RecordBatch> batch;
          auto st = reader->ReadNext(&batch);
          if (!st.ok()) return Status::IOError("{}", st.message());
          if (!batch) break;
          rows += batch->num_rows();
        }
        out[round == 0 ? "requests_first" : "requests_second"] = io->stats().requests - before;
      }
      out["rows"] = rows;
      return Status::OK();
    }
    return Status::Invalid("unknown command '{}'", cmd);
  }();
  out["ok"] = st.ok();
  out["code"] = thaw::StatusCodeName(st.code());
  out["error"] = st.message();
  if (io) {
    auto s = io->stats();
    out["requests"] = s.requests;
    out["bytes_read"] = s.bytes_read;
    out["retries"] = s.retries;
  }
  std::printf("%s\n", out.dump().c_str());
  return st.ok() ? 0 : 1;
}
