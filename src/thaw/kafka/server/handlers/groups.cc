// Consumer groups: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
// OffsetFetch, DescribeGroups, ListGroups, DeleteGroups. Each handler
// translates the wire message (generated codec) to the group coordinator's
// plain request and back; the semantics live in group_coordinator.cc.
#include "thaw/kafka/server/group_coordinator.h"
#include "thaw/kafka/server/handlers/handlers.h"
#include "thaw/kafka/server/topic_log.h"

namespace thaw::kafka::server {

namespace {

int16_t Code(GroupError e) { return static_cast<int16_t>(e); }

}  // namespace

asio::awaitable<msg::JoinGroupResponse> HandleJoinGroup(RequestContext& ctx, const msg::JoinGroupRequest& req) {
  JoinGroupRequest j;
  j.api_version = ctx.api_version;
  j.group_id = req.group_id;
  j.session_timeout_ms = req.session_timeout_ms;
  j.rebalance_timeout_ms = ctx.api_version >= 1 ? req.rebalance_timeout_ms : -1;
  j.member_id = req.member_id;
  j.group_instance_id = req.group_instance_id;
  j.protocol_type = req.protocol_type;
  for (const auto& p : req.protocols) j.protocols.push_back({p.name, p.metadata});
  j.reason = req.reason;
  j.client_id = ctx.client_id;
  j.client_host = ctx.peer.substr(0, ctx.peer.rfind(':'));
  JoinGroupResult r = co_await ctx.broker.groups->JoinGroup(std::move(j));
  msg::JoinGroupResponse resp;
  resp.error_code = Code(r.error);
  resp.generation_id = r.generation_id;
  resp.protocol_type = r.protocol_type;
  if (ctx.api_version >= 7) {
    resp.protocol_name = r.protocol_name;
  } else {
    resp.protocol_name = r.protocol_name.value_or("");
  }
  resp.leader = r.leader;
  resp.skip_assignment = r.skip_assignment;
  resp.member_id = r.member_id;
  for (auto& m : r.members) {
    msg::JoinGroupResponse::JoinGroupResponseMember rm;
    rm.member_id = std::move(m.member_id);
    rm.group_instance_id = std::move(m.group_instance_id);
    rm.metadata = std::move(m.metadata);
    resp.members.push_back(std::move(rm));
  }
  co_return resp;
}

asio::awaitable<msg::SyncGroupResponse> HandleSyncGroup(RequestContext& ctx, const msg::SyncGroupRequest& req) {
  SyncGroupRequest s;
  s.api_version = ctx.api_version;
  s.group_id = req.group_id;
  s.generation_id = req.generation_id;
  s.member_id = req.member_id;
  s.group_instance_id = req.group_instance_id;
  s.protocol_type = req.protocol_type;
  s.protocol_name = req.protocol_name;
  for (const auto& a : req.assignments) s.assignments.push_back({a.member_id, a.assignment});
  SyncGroupResult r = co_await ctx.broker.groups->SyncGroup(std::move(s));
  msg::SyncGroupResponse resp;
  resp.error_code = Code(r.error);
  resp.protocol_type = r.protocol_type;
  resp.protocol_name = r.protocol_name;
  resp.assignment = std::move(r.assignment);
  co_return resp;
}

asio::awaitable<msg::HeartbeatResponse> HandleHeartbeat(RequestContext& ctx, const msg::HeartbeatRequest& req) {
  HeartbeatRequest h{req.group_id, req.generation_id, req.member_id, req.group_instance_id};
  msg::HeartbeatResponse resp;
  resp.error_code = Code(co_await ctx.broker.groups->Heartbeat(std::move(h)));
  co_return resp;
}

asio::awaitable<msg::LeaveGroupResponse> HandleLeaveGroup(RequestContext& ctx, const msg::LeaveGroupRequest& req) {
  LeaveGroupRequest l;
  l.group_id = req.group_id;
  if (ctx.api_version < 3) {
    l.members.push_back({req.member_id, std::nullopt, std::nullopt});
  } else {
    for (const auto& m : req.members) l.members.push_back({m.member_id, m.group_instance_id, m.reason});
  }
  LeaveGroupResult r = co_await ctx.broker.groups->LeaveGroup(std::move(l));
  msg::LeaveGroupResponse resp;
  if (ctx.api_version < 3) {
    resp.error_code = Code(r.error != GroupError::kNone || r.members.empty() ? r.error : r.members[0].error);
  } else {
    resp.error_code = Code(r.error);
    for (auto& m : r.members) {
      msg::LeaveGroupResponse::MemberResponse mr;
      mr.member_id = std::move(m.member_id);
      mr.group_instance_id = std::move(m.group_instance_id);
      mr.error_code = Code(m.error);
      resp.members.push_back(std::move(mr));
    }
  }
  co_return resp;
}

asio::awaitable<msg::OffsetCommitResponse> HandleOffsetCommit(RequestContext& ctx,
                                                              const msg::OffsetCommitRequest& req) {
  // Topics Thaw does not serve get UNKNOWN_TOPIC_OR_PARTITION here, as a
  // Kafka broker answers a commit for a topic it does not have; the others
  // go to the coordinator.
  OffsetCommitRequest c;
  c.group_id = req.group_id;
  c.generation_id = req.generation_id_or_member_epoch;
  c.member_id = req.member_id;
  c.group_instance_id = req.group_instance_id;
  std::vector<bool> known;
  for (const auto& t : req.topics) {
    auto served = ctx.broker.topics->Find(t.name);
    bool ok = served != nullptr;
    if (ok) {
      for (const auto& p : t.partitions) {
        if (p.partition_index < 0 || p.partition_index >= served->partition_count()) ok = false;
      }
    }
    known.push_back(ok);
    if (!ok) continue;
    OffsetCommitTopic ct{t.name, {}};
    for (const auto& p : t.partitions) {
      ct.partitions.push_back({p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata});
    }
    c.topics.push_back(std::move(ct));
  }
  OffsetCommitResult r;
  if (!c.topics.empty()) r = co_await ctx.broker.groups->OffsetCommit(std::move(c));
  msg::OffsetCommitResponse resp;
  size_t next = 0;
  for (size_t i = 0; i < req.topics.size(); ++i) {
    const auto& t = req.topics[i];
    msg::OffsetCommitResponse::OffsetCommitResponseTopic rt;
    rt.name = t.name;
    if (known[i] && next < r.topics.size()) {
      for (const auto& p : r.topics[next].partitions) {
        msg::OffsetCommitResponse::OffsetCommitResponsePartition rp;
        rp.partition_index = p.partition;
        rp.error_code = Code(p.error);
        rt.partitions.push_back(rp);
      }
      ++next;
    } else {
      for (const auto& p : t.partitions) {
        msg::OffsetCommitResponse::OffsetCommitResponsePartition rp;
        rp.partition_index = p.partition_index;
        rp.error_code = static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
        rt.partitions.push_back(rp);
      }
    }
    resp.topics.push_back(std::move(rt));
  }
  co_return resp;
}

asio::awaitable<msg::OffsetFetchResponse> HandleOffsetFetch(RequestContext& ctx, const msg::OffsetFetchRequest& req) {
  msg::OffsetFetchResponse resp;
  auto fetch_group = [&](const std::string& group,
                         std::optional<std::vector<OffsetFetchTopic>> topics) -> asio::awaitable<OffsetFetchResult> {
    OffsetFetchRequest f{group, std::move(topics)};
    co_return co_await ctx.broker.groups->OffsetFetch(std::move(f));
  };
  if (ctx.api_version < 8) {
    std::optional<std::vector<OffsetFetchTopic>> topics;
    if (req.topics) {
      topics.emplace();
      for (const auto& t : *req.topics) topics->push_back({t.name, t.partition_indexes});
    }
    OffsetFetchResult r = co_await fetch_group(req.group_id, std::move(topics));
    resp.error_code = Code(r.error);
    for (auto& t : r.topics) {
      msg::OffsetFetchResponse::OffsetFetchResponseTopic rt;
      rt.name = t.name;
      for (auto& p : t.partitions) {
        msg::OffsetFetchResponse::OffsetFetchResponsePartition rp;
        rp.partition_index = p.partition;
        rp.committed_offset = p.committed_offset;
        rp.committed_leader_epoch = p.committed_leader_epoch;
        rp.metadata = p.metadata;
        // Before v2 there is no top-level error: it goes on every partition.
        rp.error_code = Code(p.error != GroupError::kNone || ctx.api_version >= 2 ? p.error : r.error);
        rt.partitions.push_back(std::move(rp));
      }
      resp.topics.push_back(std::move(rt));
    }
    co_return resp;
  }
  for (const auto& g : req.groups) {
    std::optional<std::vector<OffsetFetchTopic>> topics;
    if (g.topics) {
      topics.emplace();
      for (const auto& t : *g.topics) topics->push_back({t.name, t.partition_indexes});
    }
    OffsetFetchResult r = co_await fetch_group(g.group_id, std::move(topics));
    msg::OffsetFetchResponse::OffsetFetchResponseGroup rg;
    rg.group_id = g.group_id;
    rg.error_code = Code(r.error);
    for (auto& t : r.topics) {
      msg::OffsetFetchResponse::OffsetFetchResponseTopics rt;
      rt.name = t.name;
      for (auto& p : t.partitions) {
        msg::OffsetFetchResponse::OffsetFetchResponsePartitions rp;
        rp.partition_index = p.partition;
        rp.committed_offset = p.committed_offset;
        rp.committed_leader_epoch = p.committed_leader_epoch;
        rp.metadata = p.metadata;
        rp.error_code = Code(p.error);
        rt.partitions.push_back(std::move(rp));
      }
      rg.topics.push_back(std::move(rt));
    }
    resp.groups.push_back(std::move(rg));
  }
  co_return resp;
}

asio::awaitable<msg::DescribeGroupsResponse> HandleDescribeGroups(RequestContext& ctx,
                                                                  const msg::DescribeGroupsRequest& req) {
  auto groups = co_await ctx.broker.groups->DescribeGroups(req.groups, ctx.api_version);
  msg::DescribeGroupsResponse resp;
  for (auto& g : groups) {
    msg::DescribeGroupsResponse::DescribedGroup dg;
    dg.error_code = Code(g.error);
    dg.group_id = std::move(g.group_id);
    dg.group_state = std::move(g.state);
    dg.protocol_type = std::move(g.protocol_type);
    dg.protocol_data = std::move(g.protocol_data);
    for (auto& m : g.members) {
      msg::DescribeGroupsResponse::DescribedGroupMember dm;
      dm.member_id = std::move(m.member_id);
      dm.group_instance_id = std::move(m.group_instance_id);
      dm.client_id = std::move(m.client_id);
      dm.client_host = std::move(m.client_host);
      dm.member_metadata = std::move(m.metadata);
      dm.member_assignment = std::move(m.assignment);
      dg.members.push_back(std::move(dm));
    }
    resp.groups.push_back(std::move(dg));
  }
  co_return resp;
}

asio::awaitable<msg::ListGroupsResponse> HandleListGroups(RequestContext& ctx, const msg::ListGroupsRequest& req) {
  auto groups = co_await ctx.broker.groups->ListGroups(req.states_filter, req.types_filter);
  msg::ListGroupsResponse resp;
  for (auto& g : groups) {
    msg::ListGroupsResponse::ListedGroup lg;
    lg.group_id = std::move(g.group_id);
    lg.protocol_type = std::move(g.protocol_type);
    lg.group_state = std::move(g.state);
    lg.group_type = std::move(g.group_type);
    resp.groups.push_back(std::move(lg));
  }
  co_return resp;
}

asio::awaitable<msg::DeleteGroupsResponse> HandleDeleteGroups(RequestContext& ctx,
                                                              const msg::DeleteGroupsRequest& req) {
  auto results = co_await ctx.broker.groups->DeleteGroups(req.groups_names);
  msg::DeleteGroupsResponse resp;
  for (auto& r : results) {
    msg::DeleteGroupsResponse::DeletableGroupResult d;
    d.group_id = std::move(r.group_id);
    d.error_code = Code(r.error);
    resp.results.push_back(std::move(d));
  }
  co_return resp;
}

}  // namespace thaw::kafka::server
