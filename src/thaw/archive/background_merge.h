// Manifest merging beside a running archive (issue 20). A merge append
// rewrites up to commit.manifest.target-size-bytes of manifests; done on the
// commit path, as Iceberg Java's merge append does it, that was the latency
// of every hundredth commit, seconds once the merged manifest had grown. So
// the commit that finds commit.manifest.min-count-to-merge small manifests
// starts their merge (iceberg::MergeManifests) on a thread of its own, on
// its parent's list, and commits without waiting; the first commit after
// the merge finished takes the merged manifests in place of those it merged,
// when its parent still lists every one of them (else the merge is dropped
// and its files deleted: another writer rewrote them). The last commit of a
// run waits for a merge still running and merges inline what is left, so a
// run that ends leaves what a merge append would.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/manifest.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/storage/file_io.h"

namespace thaw::archive {

class BackgroundMerge {
 public:
  explicit BackgroundMerge(std::shared_ptr<storage::FileIO> io) : io_(std::move(io)) {}
  ~BackgroundMerge();  // waits for a running merge; deletes merged files no commit took
  BackgroundMerge(const BackgroundMerge&) = delete;
  BackgroundMerge& operator=(const BackgroundMerge&) = delete;

  // The manifest list for one attempt of commit `snapshot_id` on `md`:
  // `manifests` holds the commit's own `own` manifests first, then the
  // parent's. `prefix` names merged manifests written inline. Called again
  // for each attempt of the same commit (a conflict changes the parent).
  Result<std::vector<iceberg::ManifestFile>> ForCommit(const iceberg::TableMetadata& md, int64_t snapshot_id,
                                                       std::vector<iceberg::ManifestFile> manifests, size_t own,
                                                       const std::string& prefix, bool last);
  // After commit `snapshot_id` succeeded: a merge it did not use is dropped.
  void Committed(int64_t snapshot_id);

  int64_t merges_taken() const { return taken_count_; }

 private:
  struct Running {
    std::vector<iceberg::ManifestFile> inputs;
    std::future<Result<std::vector<iceberg::ManifestFile>>> merged;
  };
  struct Finished {
    std::vector<std::string> consumed;              // input manifests merged away
    std::vector<iceberg::ManifestFile> produced;    // the merged manifests
    std::optional<int64_t> used_by;                 // the commit attempt that lists them
  };
  void Take(bool wait);
  void Drop(Finished& f);

  std::shared_ptr<storage::FileIO> io_;
  std::optional<Running> running_;
  std::optional<Finished> finished_;
  int64_t started_ = 0;
  int64_t taken_count_ = 0;
};

}  // namespace thaw::archive
