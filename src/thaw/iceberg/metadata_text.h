// The text of a table metadata document without serialising again the
// snapshots it wrote before. A snapshot never changes once it is in a table,
// so each one's text is kept by its id and the "snapshots" array is joined
// from those pieces; only what a commit adds is serialised. A catalog that
// writes metadata.json itself (the SQL catalog) keeps one per table, so a
// commit costs what it adds rather than the table's whole history.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include <nlohmann/json_fwd.hpp>

namespace thaw::iceberg {

class MetadataText {
 public:
  // Byte for byte what doc.dump() gives. Pieces of snapshots no longer in
  // `doc` are dropped, so a removed id re-added later is serialised anew.
  std::string Dump(const nlohmann::json& doc);
  size_t cached_snapshots() const { return snapshots_.size(); }

 private:
  std::unordered_map<int64_t, std::string> snapshots_;
  size_t last_size_ = 0;  // the previous text's length: reserved for the next
};

}  // namespace thaw::iceberg
