// `thaw replay --verify`: the user's proof that a restore is whole. Reads the
// target topic back as a read_committed consumer would and checks, by the
// thaw.source.* link headers, that every source offset the job selects
// arrived exactly once, and in order within each target partition.
#include <algorithm>
#include <charconv>
#include <set>

#include "thaw/replay/replay.h"

namespace thaw::replay {

namespace {

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

void Problem(VerifyResult* r, std::string text) {
  if (r->first_problem.empty()) r->first_problem = std::move(text);
}

}  // namespace

Result<VerifyResult> VerifyReplay(std::shared_ptr<const iceberg::Table> table, const std::string& table_name,
                                  const ReplayOptions& o, int64_t expected_records) {
  VerifyResult res;
  // Source partition -> source offsets as they arrived (all target partitions).
  std::map<int32_t, std::vector<int64_t>> arrived;
  // (target partition, source partition) -> last source offset seen there.
  std::map<std::pair<int32_t, int32_t>, int64_t> last;
  int64_t linked = 0, unlinked = 0;
  struct Reordered {
    int32_t source_partition;
    int64_t offset, after;
    int32_t target_partition;
  };
  std::vector<Reordered> reordered;  // candidates: a resent duplicate also arrives "late"
  RETURN_NOT_OK(ScanTopic(o.kafka, o.topic, o.timeout_ms, [&](const TopicMessage& m) {
    std::optional<std::string_view> t, sp, so;
    for (const auto& [k, v] : m.headers) {
      if (!v) continue;
      if (k == "thaw.source.table") t = v;
      else if (k == "thaw.source.partition") sp = v;
      else if (k == "thaw.source.offset") so = v;
    }
    if (!t || !sp || !so) {
      ++unlinked;
      return Status::OK();
    }
    if (*t != table_name) return Status::OK();
    auto p = ParseInt(*sp), off = ParseInt(*so);
    if (!p || !off || *p < 0 || *p > std::numeric_limits<int32_t>::max()) {
      return Status::Corrupt("topic '{}' partition {} offset {}: link headers thaw.source.partition='{}' "
                             "thaw.source.offset='{}' are not numbers", o.topic, m.partition, m.offset, *sp, *so);
    }
    ++linked;
    const int32_t part = static_cast<int32_t>(*p);
    auto [it, fresh] = last.try_emplace({m.partition, part}, *off);
    if (!fresh) {
      if (*off < it->second) reordered.push_back({part, *off, it->second, m.partition});
      it->second = std::max(it->second, *off);
    }
    arrived[part].push_back(*off);
    return Status::OK();
  }));
  if (linked == 0 && unlinked > 0) {
    return Status::Invalid("topic '{}' holds {} records but none has thaw.source.* link headers: --verify needs a "
                           "replay with the link headers (the default; not --link-headers=false)", o.topic, unlinked);
  }
  std::set<std::pair<int32_t, int64_t>> duplicated;
  for (auto& [p, offs] : arrived) {
    std::sort(offs.begin(), offs.end());
    auto end = offs.begin();
    for (auto it = offs.begin(); it != offs.end(); ++it) {
      if (end != offs.begin() && *(end - 1) == *it) {
        ++res.duplicates;
        duplicated.insert({p, *it});
        Problem(&res, fmt::format("source partition {}: offset {} arrived more than once", p, *it));
        continue;
      }
      *end++ = *it;
    }
    offs.erase(end, offs.end());
    res.records += static_cast<int64_t>(offs.size());
  }
  for (const auto& r : reordered) {
    if (duplicated.count({r.source_partition, r.offset})) continue;  // counted as a duplicate
    ++res.out_of_order;
    Problem(&res, fmt::format("source partition {}: offset {} arrived after offset {} in target partition {}",
                              r.source_partition, r.offset, r.after, r.target_partition));
  }

  if (table) {
    // What the job selects: the same read, filter and exclusions.
    res.against_table = true;
    ASSIGN_OR_RAISE(auto reader, records::RecordReader::Make(table, o.read));
    records::RecordBatch batch;
    std::map<int32_t, size_t> pos;  // index into arrived[p] of the next unmatched offset
    std::set<int32_t> parts;
    while (true) {
      ASSIGN_OR_RAISE(bool more, reader->Next(&batch));
      if (!more) break;
      for (const auto& rec : batch.records) {
        if (!o.exclude.empty() && o.exclude.count({rec.partition, rec.offset})) continue;
        if (o.filter && !o.filter(batch, rec)) continue;
        ++res.expected;
        parts.insert(rec.partition);
        auto& offs = arrived[rec.partition];
        size_t& i = pos[rec.partition];
        while (i < offs.size() && offs[i] < rec.offset) {
          ++res.unexpected;
          Problem(&res, fmt::format("source partition {}: offset {} arrived but the job does not select it",
                                    rec.partition, offs[i]));
          ++i;
        }
        if (i < offs.size() && offs[i] == rec.offset) {
          ++i;
        } else {
          ++res.missing;
          Problem(&res, fmt::format("source partition {}: offset {} is missing", rec.partition, rec.offset));
        }
      }
    }
    for (const auto& [p, offs] : arrived) {
      const size_t i = pos.count(p) ? pos[p] : 0;
      if (i < offs.size()) {
        res.unexpected += static_cast<int64_t>(offs.size() - i);
        Problem(&res, fmt::format("source partition {}: offset {} arrived but the job does not select it", p, offs[i]));
      }
    }
    res.partitions = static_cast<int64_t>(parts.size());
  } else {
    res.partitions = static_cast<int64_t>(arrived.size());
    res.expected = expected_records;
    if (expected_records >= 0 && res.records < expected_records) {
      res.missing = expected_records - res.records;
      Problem(&res, fmt::format("{} distinct linked records in the topic, but the job's checkpoint counts {}",
                                res.records, expected_records));
    }
  }
  res.ok = res.missing == 0 && res.duplicates == 0 && res.out_of_order == 0 && res.unexpected == 0;
  return res;
}

}  // namespace thaw::replay
