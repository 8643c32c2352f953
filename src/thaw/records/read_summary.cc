#include "thaw/records/read_summary.h"

#include <fmt/format.h>

#include <algorithm>

namespace thaw::records {

std::string FormatPartitionSet(const std::set<int32_t>& partitions) {
  std::string out;
  for (auto it = partitions.begin(); it != partitions.end();) {
    const int32_t first = *it;
    int32_t last = first;
    ++it;
    while (it != partitions.end() && static_cast<int64_t>(*it) == static_cast<int64_t>(last) + 1) last = *it++;
    if (!out.empty()) out += ',';
    out += first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

std::string CanonicalRange(const ReadOptions& o, size_t exclusions, std::string_view where) {
  std::vector<std::string> parts;
  if (o.source_topic) parts.push_back("source-topic=" + *o.source_topic);
  if (o.partitions) parts.push_back("partitions=" + FormatPartitionSet(*o.partitions));
  if (o.from_offset) parts.push_back(fmt::format("from-offset={}", *o.from_offset));
  if (o.to_offset) parts.push_back(fmt::format("to-offset={}", *o.to_offset));
  if (o.from_time_ms) parts.push_back(fmt::format("from-time={}", *o.from_time_ms));
  if (o.to_time_ms) parts.push_back(fmt::format("to-time={}", *o.to_time_ms));
  if (exclusions > 0) parts.push_back(fmt::format("exclude={} offsets", exclusions));
  if (!where.empty()) parts.push_back(fmt::format("where={}", where));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

void ReadSummary::Add(const Record& r) {
  auto [it, fresh] = partitions_.try_emplace(r.partition);
  PartitionSummary& s = it->second;
  if (fresh) {
    s.min_offset = s.max_offset = r.offset;
    s.min_timestamp_ms = s.max_timestamp_ms = r.timestamp_ms;
  } else {
    if (r.offset > s.max_offset + 1) {
      if (s.gaps.size() < kMaxGaps) s.gaps.emplace_back(s.max_offset + 1, r.offset - 1);
      ++s.gap_count;
    }
    s.max_offset = std::max(s.max_offset, r.offset);
    s.min_timestamp_ms = std::min(s.min_timestamp_ms, r.timestamp_ms);
    s.max_timestamp_ms = std::max(s.max_timestamp_ms, r.timestamp_ms);
  }
  ++s.records;
  ++records_;
}

Result<TableSummary> Summarize(std::shared_ptr<const iceberg::Table> table, ReadOptions options,
                               const SummaryFilter& filter) {
  ASSIGN_OR_RAISE(auto plan, ReadPlan::Make(std::move(table), options));
  return Summarize(std::move(plan), std::move(options), filter);
}

Result<TableSummary> Summarize(std::shared_ptr<const ReadPlan> plan, ReadOptions options, const SummaryFilter& filter) {
  TableSummary out;
  options.metadata_only = !filter;
  out.plan = std::move(plan);
  ASSIGN_OR_RAISE(auto reader, RecordReader::Make(out.plan, options));
  RecordBatch batch;
  while (true) {
    ASSIGN_OR_RAISE(bool more, reader->Next(&batch));
    if (!more) break;
    for (const auto& r : batch.records) {
      if (!filter || filter(batch, r)) out.summary.Add(r);
    }
  }
  out.duplicates = reader->duplicate_stats();
  out.decoded = reader->decode_stats();
  out.deletion_vectors = reader->deletion_vector_stats();
  if (out.duplicates.duplicates > 0 && options.metadata_only) {
    // Whether duplicates differ depends on keys, values and headers: read
    // those once more (only tables with duplicate offsets pay for it).
    options.metadata_only = false;
    ASSIGN_OR_RAISE(auto again, RecordReader::Make(out.plan, options));
    while (true) {
      ASSIGN_OR_RAISE(bool more, again->Next(&batch));
      if (!more) break;
    }
    out.duplicates = again->duplicate_stats();
    out.deletion_vectors = again->deletion_vector_stats();
    const auto d = again->decode_stats();
    out.decoded.row_groups += d.row_groups;
    out.decoded.rows += d.rows;
    out.decoded.bytes += d.bytes;
  }
  return out;
}

}  // namespace thaw::records
