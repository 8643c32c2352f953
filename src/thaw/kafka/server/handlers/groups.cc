// Consumer groups: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
// OffsetFetch, DescribeGroups, ListGroups, DeleteGroups. Each handler
// translates the wire message (generated codec) to the group coordinator's
// plain request and back; the semantics live in group_coordinator.cc.
//
// With ACLs, as Kafka asks: READ on the group to join, sync, heartbeat,
// leave and commit (and READ on each topic committed); DESCRIBE on the group
// to fetch its offsets (and DESCRIBE on each topic fetched) and to describe
// it; DELETE to delete it. ListGroups lists the groups the principal may
// DESCRIBE (all of them with DESCRIBE on the cluster).
#include "thaw/kafka/server/group_coordinator.h"
#include "thaw/kafka/server/handlers/authorize.h"
#include "thaw/kafka/server/handlers/handlers.h"
#include "thaw/kafka/server/topic_log.h"

namespace thaw::kafka::server {

namespace {

int16_t Code(GroupError e) { return static_cast<int16_t>(e); }

bool GroupAllowed(const RequestContext& ctx, AclOperation op, const std::string& group) {
  return Authorized(ctx, op, AclResourceType::kGroup, group);
}

constexpr int16_t kGroupDenied = static_cast<int16_t>(ErrorCode::kGroupAuthorizationFailed);

}  // namespace

asio::awaitable<msg::JoinGroupResponse> HandleJoinGroup(RequestContext& ctx, const msg::JoinGroupRequest& req) {
  if (!GroupAllowed(ctx, AclOperation::kRead, req.group_id)) {
    msg::JoinGroupResponse resp;
    resp.error_code = kGroupDenied;
    if (ctx.api_version >= 7) resp.protocol_name = std::nullopt;
    co_return resp;
  }
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
  if (!GroupAllowed(ctx, AclOperation::kRead, req.group_id)) {
    msg::SyncGroupResponse resp;
    resp.error_code = kGroupDenied;
    co_return resp;
  }
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
  msg::HeartbeatResponse resp;
  if (!GroupAllowed(ctx, AclOperation::kRead, req.group_id)) {
    resp.error_code = kGroupDenied;
    co_return resp;
  }
  HeartbeatRequest h{req.group_id, req.generation_id, req.member_id, req.group_instance_id};
  resp.error_code = Code(co_await ctx.broker.groups->Heartbeat(std::move(h)));
  co_return resp;
}

asio::awaitable<msg::LeaveGroupResponse> HandleLeaveGroup(RequestContext& ctx, const msg::LeaveGroupRequest& req) {
  if (!GroupAllowed(ctx, AclOperation::kRead, req.group_id)) {
    msg::LeaveGroupResponse resp;
    resp.error_code = kGroupDenied;
    co_return resp;
  }
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
  // Topics the principal may not READ get TOPIC_AUTHORIZATION_FAILED, topics
  // Thaw does not serve UNKNOWN_TOPIC_OR_PARTITION here, as a Kafka broker
  // answers a commit for a topic it does not have; the others go to the
  // coordinator.
  const bool group_allowed = GroupAllowed(ctx, AclOperation::kRead, req.group_id);
  OffsetCommitRequest c;
  c.group_id = req.group_id;
  c.generation_id = req.generation_id_or_member_epoch;
  c.member_id = req.member_id;
  c.group_instance_id = req.group_instance_id;
  std::vector<ErrorCode> refused;  // per request topic: kNone goes to the coordinator
  for (const auto& t : req.topics) {
    ErrorCode error = ErrorCode::kNone;
    std::shared_ptr<TopicLog> served;
    if (!group_allowed) {
      error = ErrorCode::kGroupAuthorizationFailed;
    } else if (!Authorized(ctx, AclOperation::kRead, AclResourceType::kTopic, t.name)) {
      error = ErrorCode::kTopicAuthorizationFailed;
    } else if (!(served = ctx.broker.topics->Find(t.name))) {
      error = ErrorCode::kUnknownTopicOrPartition;
    } else {
      for (const auto& p : t.partitions) {
        if (p.partition_index < 0 || p.partition_index >= served->partition_count()) {
          error = ErrorCode::kUnknownTopicOrPartition;
        }
      }
    }
    refused.push_back(error);
    if (error != ErrorCode::kNone) continue;
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
    if (refused[i] == ErrorCode::kNone && next < r.topics.size()) {
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
        rp.error_code =
            static_cast<int16_t>(refused[i] == ErrorCode::kNone ? ErrorCode::kUnknownTopicOrPartition : refused[i]);
        rt.partitions.push_back(rp);
      }
    }
    resp.topics.push_back(std::move(rt));
  }
  co_return resp;
}

asio::awaitable<msg::OffsetFetchResponse> HandleOffsetFetch(RequestContext& ctx, const msg::OffsetFetchRequest& req) {
  msg::OffsetFetchResponse resp;
  // DESCRIBE on the group, or GROUP_AUTHORIZATION_FAILED (on each requested
  // partition instead, for v1 which has no top-level error); the topics the
  // principal may not DESCRIBE get TOPIC_AUTHORIZATION_FAILED on each
  // partition, or are left out of "every topic", as Kafka does.
  auto fetch_group = [&](const std::string& group,
                         std::optional<std::vector<OffsetFetchTopic>> topics) -> asio::awaitable<OffsetFetchResult> {
    auto describable = [&](const std::string& topic) {
      return Authorized(ctx, AclOperation::kDescribe, AclResourceType::kTopic, topic);
    };
    OffsetFetchResult r;
    if (!GroupAllowed(ctx, AclOperation::kDescribe, group)) {
      r.error = ErrorCode::kGroupAuthorizationFailed;
      if (topics && ctx.api_version < 2) {
        for (const auto& t : *topics) {
          OffsetFetchTopicResult& rt = r.topics.emplace_back();
          rt.name = t.name;
          for (int32_t p : t.partitions) rt.partitions.push_back({p, -1, -1, "", r.error});
        }
      }
      co_return r;
    }
    if (!topics) {
      // Named, not a temporary inside co_await (GCC 12 destroys such
      // temporaries twice).
      OffsetFetchRequest every{group, std::nullopt};
      r = co_await ctx.broker.groups->OffsetFetch(std::move(every));
      std::erase_if(r.topics, [&](const OffsetFetchTopicResult& t) { return !describable(t.name); });
      co_return r;
    }
    // The coordinator answers the allowed topics; the answer keeps the
    // request's order.
    std::vector<OffsetFetchTopic> allowed;
    std::vector<bool> is_allowed;
    for (const auto& t : *topics) {
      is_allowed.push_back(describable(t.name));
      if (is_allowed.back()) allowed.push_back(t);
    }
    OffsetFetchResult answered;
    if (!allowed.empty() || topics->empty()) {
      OffsetFetchRequest some{group, std::move(allowed)};
      answered = co_await ctx.broker.groups->OffsetFetch(std::move(some));
    }
    r.error = answered.error;
    size_t next = 0;
    for (size_t i = 0; i < topics->size(); ++i) {
      if (is_allowed[i]) {
        // Not answered when the coordinator has stopped (its top-level error).
        if (next < answered.topics.size()) r.topics.push_back(std::move(answered.topics[next++]));
        continue;
      }
      OffsetFetchTopicResult& rt = r.topics.emplace_back();
      rt.name = (*topics)[i].name;
      for (int32_t p : (*topics)[i].partitions) {
        rt.partitions.push_back({p, -1, -1, "", ErrorCode::kTopicAuthorizationFailed});
      }
    }
    co_return r;
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
  std::vector<std::string> allowed;
  for (const auto& id : req.groups) {
    if (GroupAllowed(ctx, AclOperation::kDescribe, id)) allowed.push_back(id);
  }
  std::vector<DescribedGroup> described;
  if (!allowed.empty()) described = co_await ctx.broker.groups->DescribeGroups(std::move(allowed), ctx.api_version);
  // In request order: the denied ones with GROUP_AUTHORIZATION_FAILED alone.
  std::vector<DescribedGroup> groups;
  size_t next = 0;
  for (const auto& id : req.groups) {
    if (next < described.size() && described[next].group_id == id) {
      groups.push_back(std::move(described[next++]));
    } else {
      DescribedGroup& d = groups.emplace_back();
      d.error = ErrorCode::kGroupAuthorizationFailed;
      d.group_id = id;
    }
  }
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
  if (!Authorized(ctx, AclOperation::kDescribe, AclResourceType::kCluster, kClusterResourceName, false)) {
    std::erase_if(groups, [&](const ListedGroup& g) {
      return !Authorized(ctx, AclOperation::kDescribe, AclResourceType::kGroup, g.group_id, false);
    });
  }
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
  std::vector<std::string> allowed;
  msg::DeleteGroupsResponse resp;
  for (const auto& id : req.groups_names) {
    if (GroupAllowed(ctx, AclOperation::kDelete, id)) {
      allowed.push_back(id);
    } else {
      msg::DeleteGroupsResponse::DeletableGroupResult d;
      d.group_id = id;
      d.error_code = kGroupDenied;
      resp.results.push_back(std::move(d));
    }
  }
  std::vector<DeleteGroupResult> results;
  if (!allowed.empty()) results = co_await ctx.broker.groups->DeleteGroups(std::move(allowed));
  for (auto& r : results) {
    msg::DeleteGroupsResponse::DeletableGroupResult d;
    d.group_id = std::move(r.group_id);
    d.error_code = Code(r.error);
    resp.results.push_back(std::move(d));
  }
  co_return resp;
}

}  // namespace thaw::kafka::server
