#include "thaw/merged/cold_views.h"

#include <algorithm>

namespace thaw::merged {

namespace msg = kafka::msg;

const std::string* ColdViews::BaseOf(const std::string& name) const {
  auto it = base_of_.find(name);
  return it == base_of_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------- Metadata

MetadataPlan PrepareMetadata(const ColdViews& views, int16_t version, msg::MetadataRequest& req) {
  MetadataPlan plan;
  // v0: an empty list is every topic; v1+: null is.
  plan.all_topics = !req.topics || (version == 0 && req.topics->empty());
  if (plan.all_topics) return plan;
  std::set<std::string> asked;
  for (const auto& t : *req.topics) {
    if (t.name) asked.insert(*t.name);
  }
  std::vector<msg::MetadataRequest::MetadataRequestTopic> kept;
  for (auto& t : *req.topics) {
    const std::string* base = t.name ? views.BaseOf(*t.name) : nullptr;
    if (!base) {
      kept.push_back(std::move(t));
      continue;
    }
    plan.views.push_back(*t.name);
    if (!asked.count(*base)) {
      asked.insert(*base);
      plan.added_bases.insert(*base);
      auto& probe = kept.emplace_back();
      probe.name = *base;
    }
  }
  if (!plan.views.empty()) {
    *req.topics = std::move(kept);
    plan.request_changed = true;
  }
  return plan;
}

void FinishMetadata(const ColdViews& views, const MetadataPlan& plan, kafka::server::TopicLogs& tables,
                    msg::MetadataResponse& resp) {
  std::vector<std::pair<std::string, std::string>> wanted;  // (view, base)
  if (plan.all_topics) {
    for (const auto& [view, base] : views.all()) wanted.emplace_back(view, base);
  } else {
    for (const auto& view : plan.views) wanted.emplace_back(view, *views.BaseOf(view));
  }
  std::vector<msg::MetadataResponse::MetadataResponseTopic> added;
  for (const auto& want : wanted) {
    // (Named, not structured bindings: clang 14 cannot capture those.)
    const std::string& view = want.first;
    const std::string& base = want.second;
    auto it = std::find_if(resp.topics.begin(), resp.topics.end(), [&](const auto& t) { return t.name == base; });
    if (it == resp.topics.end()) {
      // Every topic was asked and the upstream did not list the base (it
      // does not exist, or this client may not describe it): no view either.
      if (plan.all_topics) continue;
      auto& t = added.emplace_back();
      t.name = view;
      t.error_code = static_cast<int16_t>(kafka::ErrorCode::kUnknownTopicOrPartition);
      continue;
    }
    auto& t = added.emplace_back();
    t.name = view;
    t.is_internal = false;
    t.topic_authorized_operations = it->topic_authorized_operations;
    auto log = tables.Find(base);
    if (it->error_code != 0 || !log) {
      t.error_code = it->error_code != 0 ? it->error_code
                                         : static_cast<int16_t>(kafka::ErrorCode::kUnknownTopicOrPartition);
      continue;
    }
    t.topic_id = log->topic_id();
    for (int32_t p = 0; p < log->partition_count(); ++p) {
      auto& part = t.partitions.emplace_back();
      part.partition_index = p;
      part.leader_id = kColdNodeId;
      part.leader_epoch = -1;  // no epoch: clients validate nothing against it (KIP-320)
      part.replica_nodes = {kColdNodeId};
      part.isr_nodes = {kColdNodeId};
    }
  }
  if (!plan.added_bases.empty()) {
    std::erase_if(resp.topics, [&](const auto& t) { return t.name && plan.added_bases.count(*t.name); });
  }
  for (auto& t : added) resp.topics.push_back(std::move(t));
  // Thaw's broker is in every answer, as any broker of the cluster: a client
  // drops a broker that one answer leaves out (and fails what it had in
  // flight there).
  if (std::none_of(resp.brokers.begin(), resp.brokers.end(), [](const auto& b) { return b.node_id == kColdNodeId; })) {
    auto& b = resp.brokers.emplace_back();
    b.node_id = kColdNodeId;
    b.host = views.host();
    b.port = views.port();
  }
}

// ---------------------------------------------------------------- Fetch, ListOffsets

namespace {

// The view partitions of `topics` move into probes of their base topics.
// Topic is FetchTopic or ListOffsetsTopic; name_of/parts_of reach their
// fields; make_probe turns a view partition into its probe.
template <typename Topic, typename NameOf, typename PartOf, typename MakeProbe>
ProbePlan Prepare(const ColdViews& views, std::vector<Topic>& topics, NameOf name_of, PartOf part_of,
                  MakeProbe make_probe) {
  ProbePlan plan;
  if (views.empty() || std::none_of(topics.begin(), topics.end(), [&](auto& t) { return views.BaseOf(name_of(t)); })) {
    return plan;  // untouched
  }
  std::set<std::pair<std::string, int32_t>> asked;
  size_t client_partitions = 0;
  for (const auto& t : topics) {
    for (const auto& p : t.partitions) {
      asked.emplace(name_of(t), part_of(p));
      ++client_partitions;
    }
  }
  std::vector<Topic> kept;
  std::vector<Topic> probes;
  size_t view_partitions = 0;
  for (auto& t : topics) {
    const std::string* base = views.BaseOf(name_of(t));
    if (!base) {
      kept.push_back(std::move(t));
      continue;
    }
    for (auto& p : t.partitions) {
      ++view_partitions;
      const int32_t partition = part_of(p);
      ProbePlan::Probe probe{name_of(t), *base, partition, false};
      if (!asked.count({*base, partition})) {
        asked.emplace(*base, partition);
        probe.added = true;
        auto it = std::find_if(probes.begin(), probes.end(), [&](const Topic& x) { return name_of(x) == *base; });
        if (it == probes.end()) {
          Topic fresh;
          name_of(fresh) = *base;
          probes.push_back(std::move(fresh));
          it = std::prev(probes.end());
        }
        it->partitions.push_back(make_probe(p));
      }
      plan.probes.push_back(std::move(probe));
    }
  }
  // A probe of a base topic the client also asked joins that topic's entry
  // only if the client did not ask that partition (then no probe is added).
  for (auto& pt : probes) {
    auto it = std::find_if(kept.begin(), kept.end(), [&](const Topic& x) { return name_of(x) == name_of(pt); });
    if (it == kept.end()) {
      kept.push_back(std::move(pt));
    } else {
      for (auto& p : pt.partitions) it->partitions.push_back(std::move(p));
    }
  }
  topics = std::move(kept);
  plan.only_views = view_partitions == client_partitions;
  return plan;
}

// The response side: for each probe, find the base's answer; the view gets
// an entry with a copy of it; added probes are removed from the base entry
// (and the entry, once empty).
template <typename TopicResp, typename NameOf>
void MoveAnswers(const ProbePlan& plan, std::vector<TopicResp>& topics, NameOf name_of) {
  std::vector<TopicResp> views;
  for (const auto& probe : plan.probes) {
    auto base = std::find_if(topics.begin(), topics.end(), [&](TopicResp& t) { return name_of(t) == probe.base; });
    auto view = std::find_if(views.begin(), views.end(), [&](TopicResp& t) { return name_of(t) == probe.view; });
    if (view == views.end()) {
      TopicResp fresh;
      name_of(fresh) = probe.view;
      views.push_back(std::move(fresh));
      view = std::prev(views.end());
    }
    auto& out = view->partitions.emplace_back();
    out.partition_index = probe.partition;
    out.error_code = static_cast<int16_t>(kafka::ErrorCode::kUnknownServerError);  // no answer seen
    if (base == topics.end()) continue;
    for (const auto& p : base->partitions) {
      if (p.partition_index != probe.partition) continue;
      out.error_code = p.error_code;
    }
  }
  for (const auto& probe : plan.probes) {
    if (!probe.added) continue;
    for (auto& t : topics) {
      if (name_of(t) != probe.base) continue;
      std::erase_if(t.partitions, [&](const auto& p) { return p.partition_index == probe.partition; });
    }
  }
  std::erase_if(topics, [&](const TopicResp& t) {
    return t.partitions.empty() && std::any_of(plan.probes.begin(), plan.probes.end(), [&](const auto& probe) {
             return probe.added && probe.base == name_of(t);
           });
  });
  for (auto& v : views) topics.push_back(std::move(v));
}

}  // namespace

bool NamesView(const ColdViews& views, const msg::FetchRequest& req) {
  return std::any_of(req.topics.begin(), req.topics.end(), [&](const auto& t) { return views.BaseOf(t.topic); });
}

bool NamesView(const ColdViews& views, const msg::ListOffsetsRequest& req) {
  return std::any_of(req.topics.begin(), req.topics.end(), [&](const auto& t) { return views.BaseOf(t.name); });
}

ProbePlan PrepareFetch(const ColdViews& views, msg::FetchRequest& forwarded) {
  ProbePlan plan = Prepare(
      views, forwarded.topics, [](auto& t) -> auto& { return t.topic; },
      [](const auto& p) { return p.partition; },
      [](const msg::FetchRequest::FetchPartition& p) {
        msg::FetchRequest::FetchPartition probe = p;
        probe.partition_max_bytes = 0;
        probe.current_leader_epoch = -1;  // the view's epochs are not the base's
        probe.last_fetched_epoch = -1;
        return probe;
      });
  if (plan.only_views) forwarded.max_wait_ms = 0;
  return plan;
}

void MoveProbeAnswers(const ProbePlan& plan, msg::FetchResponse& resp) {
  MoveAnswers(plan, resp.responses, [](auto& t) -> auto& { return t.topic; });
}

ProbePlan PrepareListOffsets(const ColdViews& views, msg::ListOffsetsRequest& forwarded) {
  return Prepare(
      views, forwarded.topics, [](auto& t) -> auto& { return t.name; },
      [](const auto& p) { return p.partition_index; },
      [](const msg::ListOffsetsRequest::ListOffsetsPartition& p) {
        msg::ListOffsetsRequest::ListOffsetsPartition probe = p;
        probe.timestamp = -1;  // latest: the cheapest answer
        probe.current_leader_epoch = -1;
        return probe;
      });
}

void MoveProbeAnswers(const ProbePlan& plan, msg::ListOffsetsResponse& resp) {
  MoveAnswers(plan, resp.topics, [](auto& t) -> auto& { return t.name; });
}

}  // namespace thaw::merged

namespace thaw::merged {

namespace {

// Renames, in one list of topics (anything with a `name`), each view whose
// base is not in the list too.
template <typename Topic>
void RenameIn(const ColdViews& views, std::vector<Topic>& topics, std::vector<std::string>* renamed) {
  std::set<std::string> names;
  for (const auto& t : topics) names.insert(t.name);
  for (auto& t : topics) {
    const std::string* base = views.BaseOf(t.name);
    if (!base || names.count(*base)) continue;
    renamed->push_back(t.name);
    t.name = *base;
  }
}

template <typename Topic>
void RenameBack(const ColdViews& views, const std::vector<std::string>& renamed, std::vector<Topic>& topics) {
  for (auto& t : topics) {
    for (const auto& view : renamed) {
      if (*views.BaseOf(view) == t.name) {
        t.name = view;
        break;
      }
    }
  }
}

}  // namespace

std::vector<std::string> RenameViewsToBases(const ColdViews& views, msg::OffsetCommitRequest& req) {
  std::vector<std::string> renamed;
  if (!views.empty()) RenameIn(views, req.topics, &renamed);
  return renamed;
}

std::vector<std::string> RenameViewsToBases(const ColdViews& views, msg::OffsetFetchRequest& req) {
  std::vector<std::string> renamed;
  if (views.empty()) return renamed;
  if (req.topics) RenameIn(views, *req.topics, &renamed);  // v0-7
  for (auto& g : req.groups) {                              // v8+
    if (g.topics) RenameIn(views, *g.topics, &renamed);
  }
  return renamed;
}

void RenameBasesToViews(const ColdViews& views, const std::vector<std::string>& renamed,
                        msg::OffsetCommitResponse& resp) {
  RenameBack(views, renamed, resp.topics);
}

void RenameBasesToViews(const ColdViews& views, const std::vector<std::string>& renamed,
                        msg::OffsetFetchResponse& resp) {
  RenameBack(views, renamed, resp.topics);
  for (auto& g : resp.groups) RenameBack(views, renamed, g.topics);
}

}  // namespace thaw::merged
