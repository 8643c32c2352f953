// `thaw inspect`: what a table holds, as Kafka sees it. Summary mode reads
// every record through the record reader (the same path replay and serve
// use), so what it reports is what a replay would produce; without --where
// it projects only the partition, offset and timestamp columns
// (ReadOptions::metadata_only), never keys, values or headers.
#include "thaw/cli/inspect.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "thaw/cli/log_args.h"
#include "thaw/cli/table_args.h"
#include "thaw/common/time_parse.h"
#include "thaw/common/utf8.h"
#include "thaw/records/json_row.h"
#include "thaw/records/read_summary.h"
#include "thaw/records/record_filter.h"
#include "thaw/records/record_reader.h"

namespace thaw::cli {

namespace {

using json = nlohmann::ordered_json;
using records::Record;
using records::RecordBatch;

struct InspectArgs {
  TableArgs table;
  bool json = false;
  bool records = false;
  std::set<int32_t> partitions;
  std::optional<std::string> from_offset;  // N, earliest, latest, or -N: N before each partition's end
  std::optional<int64_t> to_offset, limit;
  std::string from_time, to_time;
  std::string format = "text";
  std::optional<std::string> where;  // set but empty is an error, like blanks
  LogArgs log;
};

std::string TimestampTypeName(records::TimestampType t) {
  return t == records::TimestampType::kLogAppendTime ? "LogAppendTime" : "CreateTime";
}

std::string IsoMs(int64_t ms) {
  if (ms < 0) return "-";
  int64_t us = ms * 1000;
  std::string s = records::FormatTimestampMicros(us);
  return s.substr(0, 23) + "Z";
}

// Bytes as kcat -J shows them: the text when it is valid UTF-8, else base64;
// `*encoding` says which ("utf8" or "base64"; null for a null value).
void PutBytes(json& j, const char* field, const char* encoding_field, const std::optional<std::string_view>& v) {
  if (!v) {
    j[field] = nullptr;
    j[encoding_field] = nullptr;
  } else if (IsValidUtf8(*v)) {
    j[field] = std::string(*v);
    j[encoding_field] = "utf8";
  } else {
    j[field] = records::Base64Encode(*v);
    j[encoding_field] = "base64";
  }
}

// A record of --records --format json (docs/inspect.md#records-as-json).
json RecordJson(const std::string& topic, const RecordBatch& b, const Record& r) {
  json j;
  j["topic"] = r.topic ? std::string(*r.topic) : topic;
  j["partition"] = r.partition;
  j["offset"] = r.offset;
  j["timestamp"] = r.timestamp_ms;
  j["timestamp_type"] = TimestampTypeName(r.timestamp_type);
  PutBytes(j, "key", "key_encoding", r.key);
  PutBytes(j, "value", "value_encoding", r.value);
  json hs = json::array();
  for (const auto& h : b.HeadersOf(r)) {
    json hj;
    hj["key"] = std::string(h.key);
    PutBytes(hj, "value", "encoding", h.value);
    hs.push_back(hj);
  }
  j["headers"] = hs;
  return j;
}

// kcat-style format tokens: %t topic (the row's stored source topic where the
// layout has a topic column, else `topic`), %p partition, %o offset, %k key,
// %s value, %T timestamp ms, %h headers, %K key length, %S value length.
std::string FormatRecord(const std::string& fmt_str, const std::string& topic, const RecordBatch& b, const Record& r) {
  std::string out;
  for (size_t i = 0; i < fmt_str.size(); ++i) {
    char c = fmt_str[i];
    if (c == '\\' && i + 1 < fmt_str.size()) {
      char n = fmt_str[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
      continue;
    }
    if (c != '%' || i + 1 == fmt_str.size()) {
      out += c;
      continue;
    }
    char t = fmt_str[++i];
    switch (t) {
      case 't':
        out += r.topic ? std::string(*r.topic) : topic;
        break;
      case 'p':
        out += std::to_string(r.partition);
        break;
      case 'o':
        out += std::to_string(r.offset);
        break;
      case 'T':
        out += std::to_string(r.timestamp_ms);
        break;
      case 'k':
        out += r.key ? std::string(*r.key) : "";
        break;
      case 's':
        out += r.value ? std::string(*r.value) : "";
        break;
      case 'K':
        out += r.key ? std::to_string(r.key->size()) : "-1";
        break;
      case 'S':
        out += r.value ? std::to_string(r.value->size()) : "-1";
        break;
      case 'h': {
        bool first = true;
        for (const auto& h : b.HeadersOf(r)) {
          if (!first) out += ',';
          first = false;
          out += std::string(h.key) + "=" + (h.value ? std::string(*h.value) : "");
        }
        break;
      }
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        out += t;
    }
  }
  return out;
}

json ColumnsJson(const records::Layout& l) {
  json j = json::object();
  auto put = [&](const char* name, const std::optional<records::ColumnPath>& c) {
    j[name] = c ? json(c->dotted()) : json(nullptr);
  };
  for (const auto& [name, c] : l.KafkaColumns()) put(name, *c);
  if (!l.value_json.empty()) {
    json cols = json::array();
    for (const auto& c : l.value_json) cols.push_back(c.dotted());
    j["value_json"] = cols;
  }
  return j;
}

Status RunInspect(const InspectArgs& a) {
  ASSIGN_OR_RAISE(auto table, a.table.Load());
  records::ReadOptions opt;
  RETURN_NOT_OK(a.table.Apply(&opt));
  if (!a.partitions.empty()) opt.partitions = std::set<int32_t>(a.partitions.begin(), a.partitions.end());
  // --from-offset as kcat's -o: an offset, earliest, latest (each
  // partition's end), or -N (N records before each partition's end).
  std::optional<int64_t> from_end;
  if (a.from_offset && *a.from_offset != "earliest") {
    const std::string& f = *a.from_offset;
    if (f == "latest") {
      from_end = 0;
    } else if (f.size() > 1 && f[0] == '-') {
      ASSIGN_OR_RAISE(from_end, ParseOffset(f.substr(1), "--from-offset -N: N"));
    } else {
      ASSIGN_OR_RAISE(opt.from_offset, ParseOffset(f, "--from-offset"));
    }
  }
  if (a.to_offset) opt.to_offset = *a.to_offset;
  if (from_end) {
    ASSIGN_OR_RAISE(auto ends, PartitionEnds(table, opt));
    for (const auto& [p, end] : ends) opt.start_offsets[p] = std::max<int64_t>(0, end - *from_end);
  }
  if (!a.from_time.empty()) {
    ASSIGN_OR_RAISE(opt.from_time_ms, ParseTimeMs(a.from_time, "--from-time"));
  }
  if (!a.to_time.empty()) {
    ASSIGN_OR_RAISE(opt.to_time_ms, ParseTimeMs(a.to_time, "--to-time"));
  }
  if (a.limit && *a.limit < 0) return Status::Invalid("--limit must be >= 0");
  std::shared_ptr<records::RecordFilter> filter;
  if (a.where) {
    ASSIGN_OR_RAISE(filter, records::RecordFilter::Make(*a.where, table->metadata, &opt));
  }
  const auto& md = table->metadata;
  if (a.records) {
    // All of partition p before p + 1.
    opt.order = records::ReadOrder::kPartitionMajor;
    ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, opt));
    const std::string topic = md.Property("thaw.source.topic", table->name);
    RecordBatch batch;
    int64_t printed = 0;
    std::string line;
    while (!a.limit || printed < *a.limit) {
      ASSIGN_OR_RAISE(bool more, reader->Next(&batch));
      if (!more) break;
      for (const auto& r : batch.records) {
        if (a.limit && printed >= *a.limit) break;
        if (filter && !filter->Matches(batch, r)) continue;
        if (a.format == "json") {
          line = RecordJson(topic, batch, r).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
        } else {
          line = FormatRecord(a.format == "text" ? "%p:%o\t%T\tkey=%k\theaders=%h\t%s\\n" : a.format, topic, batch, r);
        }
        std::fwrite(line.data(), 1, line.size(), stdout);
        ++printed;
      }
    }
    return Status::OK();
  }

  // The summary takes records in any partition order (each row group decoded
  // once) and, unless --where needs their contents, reads no keys, values or
  // headers.
  records::SummaryFilter keep;
  if (filter) keep = [&filter](const RecordBatch& b, const Record& r) { return filter->Matches(b, r); };
  // A table holding several topics without --source-topic: one summary per
  // topic (their partitions and offsets are separate logs, never merged).
  std::shared_ptr<const records::ReadPlan> whole;
  std::vector<std::optional<std::string>> topics{opt.source_topic};
  if (!opt.source_topic) {
    ASSIGN_OR_RAISE(whole, records::ReadPlan::Make(table, opt));
    if (whole->topics().size() > 1) topics.assign(whole->topics().begin(), whole->topics().end());
  }
  const bool several = topics.size() > 1;
  std::vector<records::TableSummary> sums;
  for (const auto& t : topics) {
    records::ReadOptions o = opt;
    o.source_topic = t;
    auto sum = several || !whole ? records::Summarize(table, o, keep) : records::Summarize(whole, o, keep);
    if (!sum.ok()) return sum.status();
    sums.push_back(std::move(*sum));
  }
  if (!whole) whole = sums.front().plan;
  int64_t total = 0;
  records::DuplicateStats dups;
  records::RecordReader::DecodeStats decoded;
  iceberg::DeletionVectorCache::Stats dv;
  for (const auto& s : sums) {
    total += s.summary.records();
    dups += s.duplicates;
    decoded.row_groups += s.decoded.row_groups;
    decoded.rows += s.decoded.rows;
    decoded.bytes += s.decoded.bytes;
    dv.blobs_read += s.deletion_vectors.blobs_read;
    dv.bytes_read += s.deletion_vectors.bytes_read;
  }
  const int64_t data_files = static_cast<int64_t>(whole->files().size());
  const auto* snap = whole->snapshot();
  const auto& layout = whole->layout();
  const auto& scan = whole->scan_stats();
  if (a.json) {
    json j;
    j["table"] = table->name;
    j["metadata_location"] = table->metadata_location;
    j["format_version"] = md.format_version;
    j["layout"] = layout.name;
    j["columns"] = ColumnsJson(layout);
    j["notes"] = layout.notes;
    j["snapshot_id"] = snap ? json(snap->snapshot_id) : json(nullptr);
    j["snapshot_timestamp"] = snap ? json(snap->timestamp_ms) : json(nullptr);
    j["data_files"] = data_files;
    j["delete_files"] = scan.delete_files;
    j["deletion_vectors"] = {{"blobs_read", dv.blobs_read}, {"bytes_read", dv.bytes_read}};
    j["records"] = total;
    j["duplicates"] = dups.duplicates;
    j["duplicates_differing"] = dups.differing;
    j["source_topic"] = opt.source_topic ? json(*opt.source_topic) : json(nullptr);
    auto partitions = [](const records::ReadSummary& summary) {
      json parts = json::array();
      for (const auto& [p, s] : summary.partitions()) {
        json pj;
        pj["partition"] = p;
        pj["records"] = s.records;
        pj["min_offset"] = s.min_offset;
        pj["max_offset"] = s.max_offset;
        pj["min_timestamp"] = s.min_timestamp_ms;
        pj["max_timestamp"] = s.max_timestamp_ms;
        json gaps = json::array();
        for (const auto& [f, t] : s.gaps) gaps.push_back({{"from", f}, {"to", t}});
        pj["gaps"] = gaps;
        pj["gap_count"] = s.gap_count;
        parts.push_back(pj);
      }
      return parts;
    };
    if (several) {
      json tj = json::array();
      for (size_t i = 0; i < sums.size(); ++i) {
        tj.push_back({{"topic", *topics[i]},
                      {"records", sums[i].summary.records()},
                      {"duplicates", sums[i].duplicates.duplicates},
                      {"partitions", partitions(sums[i].summary)}});
      }
      j["topics"] = tj;
    } else {
      j["partitions"] = partitions(sums.front().summary);
    }
    j["read"] = {{"row_groups", decoded.row_groups}, {"rows", decoded.rows}, {"bytes_decoded", decoded.bytes}};
    std::string out = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::OK();
  }
  std::string out;
  out += fmt::format("table      {}\n", table->name);
  out += fmt::format("metadata   {} (format v{})\n", table->metadata_location, md.format_version);
  out += fmt::format("layout     {}\n", layout.name);
  auto col = [&](const char* n, const std::optional<records::ColumnPath>& c) {
    out += fmt::format("  {:<15}{}\n", n, c ? c->dotted() : std::string("-"));
  };
  for (const auto& [name, c] : layout.KafkaColumns()) {
    if (std::string_view(name) != "headers") col(name, *c);
  }
  if (!layout.value_json.empty()) {
    std::string cols;
    for (const auto& c : layout.value_json) cols += (cols.empty() ? "" : ", ") + c.dotted();
    out += fmt::format("  {:<15}{} (as JSON{})\n", "value (json)", cols,
                       layout.value ? ", when the raw value is null" : "");
  }
  col("headers", layout.headers);
  for (const auto& n : layout.notes) out += fmt::format("note       {}\n", n);
  if (snap) {
    out += fmt::format("snapshot   {} at {} ({})\n", snap->snapshot_id, IsoMs(snap->timestamp_ms), snap->operation());
  } else {
    out += "snapshot   none (the table is empty)\n";
  }
  out += fmt::format("files      {} data, {} delete; {} records\n", data_files, scan.delete_files, total);
  if (several) {
    std::string names;
    for (const auto& t : topics) names += (names.empty() ? "" : ", ") + *t;
    out += fmt::format("topics     {} ({}; read one with --source-topic)\n", topics.size(), names);
  } else if (opt.source_topic) {
    out += fmt::format("topic      {} (--source-topic)\n", *opt.source_topic);
  }
  if (dups.duplicates > 0) {
    out += fmt::format(
        "duplicates {} duplicate offsets dropped, {} with different contents (kept: the row of "
        "the highest data sequence number, then the newest file; docs/layouts.md)\n",
        dups.duplicates, dups.differing);
  } else {
    out += "duplicates 0\n";
  }
  for (size_t i = 0; i < sums.size(); ++i) {
    out += "\n";
    if (several) out += fmt::format("topic {} ({} records)\n", *topics[i], sums[i].summary.records());
    out += fmt::format("{:>9} {:>12} {:>14} {:>14} {:>24} {:>24} {:>6}\n", "partition", "records", "min offset",
                       "max offset", "first timestamp", "last timestamp", "gaps");
    for (const auto& [p, s] : sums[i].summary.partitions()) {
      out += fmt::format("{:>9} {:>12} {:>14} {:>14} {:>24} {:>24} {:>6}\n", p, s.records, s.min_offset, s.max_offset,
                         IsoMs(s.min_timestamp_ms), IsoMs(s.max_timestamp_ms), s.gap_count);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return Status::OK();
}

}  // namespace

void RegisterInspect(CLI::App* app, int* exit_code) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app->add_subcommand("inspect", "Show how a table maps to Kafka records, or print its records");
  args->table.Register(cmd);
  cmd->add_flag("--json", args->json, "Machine-readable summary (documented in docs/inspect.md)");
  cmd->add_flag("--records", args->records, "Print records instead of the summary");
  AddPartitionsOption(cmd, "--partitions,--partition", &args->partitions, "Only these partitions, e.g. 0,3-5");
  cmd->add_option("--from-offset", args->from_offset,
                  "First offset (inclusive): N, earliest, latest (each partition's end), or -N: the last N of each "
                  "partition, as kcat's -o")
      ->type_name("OFFSET");
  cmd->add_option("--to-offset", args->to_offset, "End offset (exclusive)");
  cmd->add_option("--from-time", args->from_time, "Records with timestamp >= this (ISO-8601 or epoch ms)")
      ->check(TimeValidator())
      ->type_name("TIME");
  cmd->add_option("--to-time", args->to_time, "Records with timestamp < this")
      ->check(TimeValidator())
      ->type_name("TIME");
  cmd->add_option("--limit", args->limit, "Print at most this many records");
  cmd->add_option("--where", args->where, "Only records matching this expression (docs/where.md)");
  cmd->add_option("--format", args->format,
                  "Record format: text, json, or a kcat-style string (%t %p %o %k %s %T %h %K %S)")
      ->check(CLI::Validator(
          [](std::string& f) -> std::string {
            if (f == "text" || f == "json") return "";
            if (f.find('%') == std::string::npos) {
              return fmt::format(
                  "unknown format '{}': give text, json, or a kcat-style string with %-tokens "
                  "(%t %p %o %k %s %T %h %K %S %%)",
                  f);
            }
            for (size_t i = 0; i < f.size(); ++i) {
              if (f[i] == '\\') {
                ++i;
              } else if (f[i] == '%') {
                if (i + 1 == f.size() || std::string_view("tpoksThKS%").find(f[i + 1]) == std::string_view::npos) {
                  return fmt::format(
                      "unknown token '{}' in format '{}': the tokens are %t %p %o %k %s %T %h %K %S "
                      "and %% for a literal %",
                      f.substr(i, 2), f);
                }
                ++i;
              }
            }
            return "";
          },
          ""))
      ->type_name("FORMAT");
  args->log.Register(cmd);
  cmd->callback([args, exit_code]() {
    if (Status st = args->log.Apply("inspect"); !st.ok()) return ReportError("inspect", st, exit_code);
    // --partition/--from-offset/--limit imply --records.
    InspectArgs a = *args;
    if (a.limit || (a.format != "text")) a.records = true;
    if (a.records && a.json) {  // --records --json: one JSON object per record
      if (a.format != "text" && a.format != "json") {
        return ReportError("inspect",
                           Status::Invalid("--json prints records as JSON; it cannot be combined with "
                                           "--format '{}'",
                                           a.format),
                           exit_code);
      }
      a.format = "json";
    }
    ReportError("inspect", RunInspect(a), exit_code);
  });
}

}  // namespace thaw::cli
