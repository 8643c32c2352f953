#include "thaw/archive/maintain_plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

namespace thaw::archive {

int64_t SmallFileThreshold(int64_t target_bytes) { return target_bytes / 4 * 3; }

std::vector<CompactionGroup> PlanCompactionGroups(const std::vector<CompactionInput>& files, int64_t target_bytes) {
  std::vector<size_t> order(files.size());
  std::iota(order.begin(), order.end(), 0);
  // Files without bounds first (they break runs anyway), then by offset range.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto& x = files[a];
    const auto& y = files[b];
    if (x.has_offset_bounds != y.has_offset_bounds) return !x.has_offset_bounds;
    if (x.offset_lo != y.offset_lo) return x.offset_lo < y.offset_lo;
    if (x.offset_hi != y.offset_hi) return x.offset_hi < y.offset_hi;
    return x.path < y.path;
  });
  // Which files overlap another: sorted by lower bound, file i overlaps an
  // earlier one when its lower bound is <= the running maximum upper bound,
  // and a later one when the next lower bound is <= its upper bound.
  std::vector<bool> overlaps(order.size(), false);
  bool have_max = false;
  int64_t max_hi = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& f = files[order[k]];
    if (!f.has_offset_bounds) {
      overlaps[k] = true;  // unknown range: treat as overlapping everything
      continue;
    }
    if (have_max && f.offset_lo <= max_hi) overlaps[k] = true;
    if (k + 1 < order.size() && files[order[k + 1]].offset_lo <= f.offset_hi) overlaps[k] = true;
    max_hi = have_max ? std::max(max_hi, f.offset_hi) : f.offset_hi;
    have_max = true;
  }
  // Any file without bounds may hold any offset: then nothing is safe to group.
  for (size_t k = 0; k < order.size(); ++k) {
    if (!files[order[k]].has_offset_bounds) return {};
  }
  const int64_t small = SmallFileThreshold(target_bytes);
  std::vector<CompactionGroup> groups;
  CompactionGroup cur;
  auto close = [&]() {
    if (cur.inputs.size() >= 2) groups.push_back(cur);
    cur = CompactionGroup{};
  };
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& f = files[order[k]];
    bool candidate = !overlaps[k] && f.rewritable && f.file_size < small;
    if (!candidate) {
      close();
      continue;
    }
    if (!cur.inputs.empty() && cur.bytes + f.file_size > target_bytes) close();
    if (cur.inputs.empty()) cur.offset_lo = f.offset_lo;
    cur.inputs.push_back(order[k]);
    cur.offset_hi = f.offset_hi;
    cur.bytes += f.file_size;
    cur.records += f.record_count;
    cur.max_data_sequence_number = std::max(cur.max_data_sequence_number, f.data_sequence_number);
  }
  close();
  return groups;
}

std::optional<int32_t> FileSortOrderId(std::string_view metadata_json) {
  const auto md = nlohmann::json::parse(metadata_json, nullptr, false);
  if (md.is_discarded() || !md.is_object()) return std::nullopt;
  auto id_it = md.find("default-sort-order-id");
  if (id_it == md.end() || !id_it->is_number_integer()) return std::nullopt;
  const int64_t id = id_it->get<int64_t>();
  if (id <= 0) return std::nullopt;
  auto orders = md.find("sort-orders");
  if (orders == md.end() || !orders->is_array()) return std::nullopt;
  for (const auto& o : *orders) {
    if (!o.is_object() || !o.contains("order-id") || !o["order-id"].is_number_integer() ||
        o["order-id"].get<int64_t>() != id) {
      continue;
    }
    if (!o.contains("fields") || !o["fields"].is_array() || o["fields"].empty()) return std::nullopt;
    const auto& fields = o["fields"];
    for (size_t i = 0; i < fields.size(); ++i) {
      const auto& f = fields[i];
      if (!f.is_object() || f.value("transform", std::string()) != "identity" ||
          f.value("direction", std::string()) != "asc" || !f.contains("source-id") ||
          !f["source-id"].is_number_integer()) {
        return std::nullopt;
      }
      const int64_t src = f["source-id"].get<int64_t>();
      const bool constant_in_file = src == 1 || src == 11;
      const bool offset_last = src == 2 && i + 1 == fields.size();
      if (!constant_in_file && !offset_last) return std::nullopt;
    }
    return static_cast<int32_t>(id);
  }
  return std::nullopt;
}

std::vector<int64_t> SnapshotsToExpire(const iceberg::TableMetadata& md, int64_t cutoff_ms, int retain_last,
                                       std::map<std::string, int64_t>* held) {
  std::set<int64_t> keep;
  if (md.current_snapshot_id) keep.insert(*md.current_snapshot_id);
  for (const auto& [name, ref] : md.refs) keep.insert(ref.snapshot_id);
  // The newest retain_last snapshots of main's ancestry.
  std::optional<int64_t> head;
  if (auto it = md.refs.find("main"); it != md.refs.end()) {
    head = it->second.snapshot_id;
  } else {
    head = md.current_snapshot_id;
  }
  std::set<int64_t> seen;
  for (int kept = 0; head && kept < retain_last && !seen.count(*head); ++kept) {
    seen.insert(*head);
    keep.insert(*head);
    const auto* s = md.SnapshotById(*head);
    if (!s) break;
    head = s->parent_snapshot_id;
  }
  // Replay jobs: what a follower reads after its tagged snapshot, on every
  // branch that descends from it.
  std::map<std::string, std::set<int64_t>> for_jobs;
  for (const auto& [name, ref] : md.refs) {
    if (ref.type != "tag" || name.rfind(kReplayTagPrefix, 0) != 0) continue;
    auto& path_kept = for_jobs[name.substr(kReplayTagPrefix.size())];
    std::vector<std::optional<int64_t>> heads;
    for (const auto& [bname, b] : md.refs) {
      if (b.type == "branch") heads.push_back(b.snapshot_id);
    }
    if (md.refs.find("main") == md.refs.end()) heads.push_back(md.current_snapshot_id);
    for (auto h : heads) {
      std::vector<int64_t> path;
      std::set<int64_t> walked;
      while (h && *h != ref.snapshot_id && walked.insert(*h).second) {
        path.push_back(*h);
        const auto* snap = md.SnapshotById(*h);
        h = snap ? snap->parent_snapshot_id : std::nullopt;
      }
      if (h && *h == ref.snapshot_id) path_kept.insert(path.begin(), path.end());
    }
  }
  std::vector<int64_t> out;
  for (const auto& s : md.snapshots) {
    if (s->timestamp_ms >= cutoff_ms || keep.count(s->snapshot_id)) continue;
    bool job_needs = false;
    for (const auto& [job, ids] : for_jobs) {
      if (!ids.count(s->snapshot_id)) continue;
      job_needs = true;
      if (held) ++(*held)[job];
    }
    if (!job_needs) out.push_back(s->snapshot_id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> FilesOnlyIn(const ReachableFiles& before, const ReachableFiles& after) {
  std::vector<std::string> out;
  auto add = [&](const std::set<std::string>& b, const std::set<std::string>& a) {
    for (const auto& f : b) {
      if (!a.count(f)) out.push_back(f);
    }
  };
  add(before.content_files, after.content_files);
  add(before.manifests, after.manifests);
  add(before.manifest_lists, after.manifest_lists);
  return out;
}

std::string NormalizeLocation(std::string_view location) {
  std::string scheme, rest;
  if (location.rfind("file://", 0) == 0) {
    rest = std::string(location.substr(7));
  } else if (location.rfind("file:", 0) == 0) {
    rest = std::string(location.substr(5));
  } else if (auto p = location.find("://"); p != std::string_view::npos) {
    scheme = std::string(location.substr(0, p));
    if (scheme == "s3a" || scheme == "s3n") scheme = "s3";
    if (scheme == "abfs") scheme = "abfss";
    if (scheme == "gcs") scheme = "gs";
    rest = std::string(location.substr(p + 3));
  } else {
    rest = std::string(location);
  }
  std::string path;
  path.reserve(rest.size());
  for (char c : rest) {
    if (c == '/' && !path.empty() && path.back() == '/') continue;
    path += c;
  }
  return scheme.empty() ? path : scheme + "://" + path;
}

std::vector<ListedFile> FindOrphans(const std::vector<ListedFile>& listed, const std::set<std::string>& referenced,
                                    int64_t older_than_ms) {
  std::vector<ListedFile> out;
  for (const auto& f : listed) {
    if (f.mtime_ms >= older_than_ms) continue;
    if (referenced.count(NormalizeLocation(f.location))) continue;
    out.push_back(f);
  }
  std::sort(out.begin(), out.end(), [](const ListedFile& a, const ListedFile& b) { return a.location < b.location; });
  return out;
}

}  // namespace thaw::archive
