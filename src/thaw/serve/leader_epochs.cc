#include "thaw/serve/leader_epochs.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "thaw/storage/file_io.h"

namespace thaw::serve {

int32_t EpochAt(const std::vector<EpochStart>& history, int64_t offset) {
  int32_t epoch = history.empty() ? 0 : history.front().epoch;
  for (const auto& e : history) {
    if (e.start_offset > offset) break;
    epoch = e.epoch;
  }
  return epoch;
}

Result<std::unique_ptr<LeaderEpochs>> LeaderEpochs::Open(std::string path, std::string table_uuid) {
  std::unique_ptr<LeaderEpochs> e(new LeaderEpochs(std::move(path), std::move(table_uuid)));
  if (!e->path_.empty()) RETURN_NOT_OK(e->Load());
  return e;
}

Status LeaderEpochs::Load() {
  storage::LocalFileIO io;
  ASSIGN_OR_RAISE(bool exists, io.Exists(path_));
  if (!exists) return Status::OK();
  ASSIGN_OR_RAISE(std::string text, io.ReadAll(path_));
  auto bad = [&](const std::string& why) {
    return Status::Invalid(
        "{}: not a leader-epoch file of thaw serve ({}); remove it to start this topic's leader epochs over at 0 "
        "(consumers that know a higher epoch then wait for metadata.max.age.ms before they accept the new one)",
        path_, why);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (j.value("table-uuid", std::string()) != table_uuid_) return Status::OK();  // another table: start over
  try {
    if (j.contains("snapshot-id") && j["snapshot-id"].is_number_integer()) {
      saved_snapshot_ = j["snapshot-id"].get<int64_t>();
    }
    for (const auto& [key, v] : j.at("partitions").items()) {
      const int32_t p = std::stoi(key);
      Partition part;
      part.high_watermark = v.at("high-watermark").get<int64_t>();
      part.history.clear();
      for (const auto& e : v.at("epochs")) {
        EpochStart s{e.at(0).get<int32_t>(), e.at(1).get<int64_t>()};
        if (!part.history.empty() &&
            (s.epoch <= part.history.back().epoch || s.start_offset < part.history.back().start_offset)) {
          return bad(fmt::format("partition {}: epochs and their start offsets must ascend", p));
        }
        part.history.push_back(s);
      }
      if (part.history.empty()) part.history.push_back({0, 0});
      part.max_epoch = std::max(v.value("max-epoch", 0), part.history.back().epoch);
      parts_[p] = std::move(part);
    }
  } catch (const std::exception& ex) {
    return bad(ex.what());
  }
  return Status::OK();
}

int32_t LeaderEpochs::Current(int32_t p) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = parts_.find(p);
  return it == parts_.end() ? 0 : it->second.history.back().epoch;
}

int32_t LeaderEpochs::EpochAt(int32_t p, int64_t offset) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = parts_.find(p);
  return it == parts_.end() ? 0 : serve::EpochAt(it->second.history, offset);
}

std::vector<EpochStart> LeaderEpochs::History(int32_t p) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = parts_.find(p);
  return it == parts_.end() ? Partition().history : it->second.history;
}

std::pair<int32_t, int64_t> LeaderEpochs::EndOffsetFor(int32_t p, int32_t requested, int64_t high_watermark) const {
  const auto h = History(p);
  if (requested < 0 || requested > h.back().epoch) return {-1, -1};
  if (requested == h.back().epoch) return {requested, high_watermark};
  // The first entry after `requested` ends the epoch that was current then.
  auto higher = std::find_if(h.begin(), h.end(), [&](const EpochStart& e) { return e.epoch > requested; });
  if (higher == h.begin()) return {requested, higher->start_offset};
  return {std::prev(higher)->epoch, higher->start_offset};
}

void LeaderEpochs::Observe(int32_t p, int64_t high_watermark) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& part = parts_[p];
  if (high_watermark > part.high_watermark) {
    part.high_watermark = high_watermark;
    dirty_ = true;
  }
}

std::optional<int32_t> LeaderEpochs::Truncate(int32_t p, int64_t high_watermark) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = parts_.find(p);
  if (it == parts_.end() || high_watermark >= it->second.high_watermark) return std::nullopt;
  auto& part = it->second;
  while (!part.history.empty() && part.history.back().start_offset >= high_watermark) part.history.pop_back();
  part.max_epoch = std::max(part.max_epoch, part.history.empty() ? 0 : part.history.back().epoch) + 1;
  part.history.push_back({part.max_epoch, high_watermark});
  part.high_watermark = high_watermark;
  dirty_ = true;
  return part.max_epoch;
}

std::map<int32_t, int64_t> LeaderEpochs::Observed() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<int32_t, int64_t> out;
  for (const auto& [p, part] : parts_) out[p] = part.high_watermark;
  return out;
}

std::optional<int64_t> LeaderEpochs::saved_snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return saved_snapshot_;
}

Status LeaderEpochs::Save(std::optional<int64_t> snapshot_id) {
  nlohmann::json j;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (path_.empty() || (!dirty_ && snapshot_id == saved_snapshot_)) return Status::OK();
    j["table-uuid"] = table_uuid_;
    if (snapshot_id) j["snapshot-id"] = *snapshot_id;
    nlohmann::json parts = nlohmann::json::object();
    for (const auto& [p, part] : parts_) {
      nlohmann::json epochs = nlohmann::json::array();
      for (const auto& e : part.history) epochs.push_back({e.epoch, e.start_offset});
      parts[std::to_string(p)] = {
          {"high-watermark", part.high_watermark}, {"max-epoch", part.max_epoch}, {"epochs", std::move(epochs)}};
    }
    j["partitions"] = std::move(parts);
    dirty_ = false;
    saved_snapshot_ = snapshot_id;
  }
  const std::string text = j.dump(1) + "\n";
  storage::LocalFileIO io;
  auto out = io.Create(path_);
  Status st = out.ok() ? (*out)->Write(text.data(), static_cast<int64_t>(text.size())) : out.status();
  if (st.ok()) st = (*out)->Close();
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;  // written again at the next Save
    return st.WithContext("saving the leader epochs of thaw serve");
  }
  return Status::OK();
}

}  // namespace thaw::serve
