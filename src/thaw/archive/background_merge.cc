#include "thaw/archive/background_merge.h"

#include <fmt/format.h>

#include <chrono>
#include <set>

#include "thaw/common/log.h"
#include "thaw/iceberg/manifest_merge.h"

namespace thaw::archive {

namespace {

// What a background merge writes as its snapshot id: none of the table's
// (ids are positive); the commit that takes a merged manifest names itself.
constexpr int64_t kNoSnapshot = 0;

}  // namespace

BackgroundMerge::~BackgroundMerge() {
  if (running_) Take(/*wait=*/true);
  if (finished_ && !finished_->used_by) Drop(*finished_);
}

void BackgroundMerge::Drop(Finished& f) {
  for (const auto& m : f.produced) {
    Status st = io_->Delete(m.path);
    if (!st.ok()) log::Debug("deleting merged manifest {} no commit took: {}", m.path, st.message());
  }
  f.produced.clear();
}

void BackgroundMerge::Take(bool wait) {
  if (!running_ || finished_) return;
  if (!wait && running_->merged.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  auto merged = running_->merged.get();
  std::vector<iceberg::ManifestFile> inputs = std::move(running_->inputs);
  running_.reset();
  if (!merged.ok()) {
    log::Warn("merging the table's small manifests failed ({}); a later commit tries again",
              merged.status().message());
    return;
  }
  std::set<std::string> in, out;
  for (const auto& m : inputs) in.insert(m.path);
  for (const auto& m : *merged) out.insert(m.path);
  Finished f;
  for (const auto& m : inputs) {
    if (!out.count(m.path)) f.consumed.push_back(m.path);
  }
  for (auto& m : *merged) {
    if (!in.count(m.path)) f.produced.push_back(std::move(m));
  }
  if (f.consumed.empty() && f.produced.empty()) return;
  finished_ = std::move(f);
}

Result<std::vector<iceberg::ManifestFile>> BackgroundMerge::ForCommit(const iceberg::TableMetadata& md,
                                                                      int64_t snapshot_id,
                                                                      std::vector<iceberg::ManifestFile> manifests,
                                                                      size_t own, const std::string& prefix,
                                                                      bool last) {
  Take(/*wait=*/last);
  if (finished_) {
    finished_->used_by.reset();
    std::set<std::string> listed;
    for (size_t i = own; i < manifests.size(); ++i) listed.insert(manifests[i].path);
    bool all_there = true;
    for (const auto& p : finished_->consumed) all_there = all_there && listed.count(p);
    if (all_there) {
      const std::set<std::string> consumed(finished_->consumed.begin(), finished_->consumed.end());
      std::vector<iceberg::ManifestFile> out(manifests.begin(), manifests.begin() + static_cast<ptrdiff_t>(own));
      for (size_t i = own; i < manifests.size(); ++i) {
        if (!consumed.count(manifests[i].path)) out.push_back(std::move(manifests[i]));
      }
      for (auto m : finished_->produced) {
        m.added_snapshot_id = snapshot_id;
        out.push_back(std::move(m));
      }
      manifests = std::move(out);
      finished_->used_by = snapshot_id;
    } else {
      log::Debug("a background manifest merge is dropped: the table no longer lists what it merged");
      Drop(*finished_);
      finished_.reset();
    }
  }
  const auto options = iceberg::ManifestMergeOptions::FromProperties(md);
  if (last) return iceberg::MergeManifests(*io_, md, snapshot_id, manifests, prefix, options);
  if (running_ || (finished_ && finished_->used_by) || !options.enabled || md.format_version != 2) return manifests;
  int64_t candidates = 0;
  for (size_t i = own; i < manifests.size(); ++i) candidates += iceberg::MergeCandidate(manifests[i], md, options);
  if (candidates < options.min_count) return manifests;
  Running r;
  r.inputs.assign(manifests.begin() + static_cast<ptrdiff_t>(own), manifests.end());
  const std::string at = fmt::format("{}-bg{}", prefix, ++started_);
  r.merged = std::async(std::launch::async, [io = io_, md, inputs = r.inputs, at, options]() {
    return iceberg::MergeManifests(*io, md, kNoSnapshot, inputs, at, options);
  });
  running_ = std::move(r);
  return manifests;
}

void BackgroundMerge::Committed(int64_t snapshot_id) {
  if (!finished_) return;
  if (finished_->used_by == snapshot_id) {
    ++taken_count_;
  } else {
    Drop(*finished_);
  }
  finished_.reset();
}

}  // namespace thaw::archive
