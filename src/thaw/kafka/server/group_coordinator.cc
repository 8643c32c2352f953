// Classic-protocol group coordinator. The state machine follows Kafka's
// (GroupCoordinator / ClassicGroup): Empty -> PreparingRebalance ->
// CompletingRebalance -> Stable, back to PreparingRebalance on any membership
// or metadata change, and to Empty when the last member goes.
//
// Everything below runs on the coordinator's strand. Waiting calls (JoinGroup,
// SyncGroup) park a Waiter in the member; whoever completes the rebalance or
// receives the leader's assignment fills the waiter and wakes it.
#include "thaw/kafka/server/group_coordinator.h"

#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/use_awaitable.hpp>
#include <cctype>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "thaw/common/log.h"
#include "thaw/kafka/server/offset_store.h"

namespace thaw::kafka::server {

namespace {

using Clock = std::chrono::steady_clock;
using Strand = asio::strand<asio::any_io_executor>;

enum class State { kEmpty, kPreparingRebalance, kCompletingRebalance, kStable, kDead };

std::string_view StateName(State s) {
  switch (s) {
    case State::kEmpty:
      return "Empty";
    case State::kPreparingRebalance:
      return "PreparingRebalance";
    case State::kCompletingRebalance:
      return "CompletingRebalance";
    case State::kStable:
      return "Stable";
    case State::kDead:
      return "Dead";
  }
  return "Dead";
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// A parked JoinGroup or SyncGroup: the timer never expires by itself, it is
// cancelled to wake the waiting coroutine once `result` is set.
template <typename T>
struct Waiter {
  explicit Waiter(const Strand& strand) : signal(strand, asio::steady_timer::time_point::max()) {}
  void Complete(T r) {
    if (result) return;
    result = std::move(r);
    signal.cancel();
  }
  asio::awaitable<T> Wait() {
    while (!result) {
      std::error_code ec;
      co_await signal.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return std::move(*result);
  }
  asio::steady_timer signal;
  std::optional<T> result;
};
using JoinWaiter = Waiter<JoinGroupResult>;
using SyncWaiter = Waiter<SyncGroupResult>;

JoinGroupResult JoinError(GroupError error, std::string member_id) {
  JoinGroupResult r;
  r.error = error;
  r.member_id = std::move(member_id);
  return r;
}

SyncGroupResult SyncError(GroupError error) {
  SyncGroupResult r;
  r.error = error;
  return r;
}

struct Member {
  Member(const Strand& strand) : heartbeat_timer(strand) {}
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = 0;
  int32_t session_timeout_ms = 0;
  std::string protocol_type;
  std::vector<JoinGroupProtocol> protocols;
  std::string assignment;
  std::shared_ptr<JoinWaiter> awaiting_join;
  std::shared_ptr<SyncWaiter> awaiting_sync;
  bool is_new = false;  // joined but has not completed a rebalance yet
  asio::steady_timer heartbeat_timer;
  uint64_t heartbeat_epoch = 0;

  const std::string* MetadataFor(const std::string& protocol) const {
    for (const auto& p : protocols) {
      if (p.name == protocol) return &p.metadata;
    }
    return nullptr;
  }
  // Same protocols in the same order with the same metadata (Kafka's MemberMetadata.matches).
  bool Matches(const std::vector<JoinGroupProtocol>& other) const {
    if (other.size() != protocols.size()) return false;
    for (size_t i = 0; i < other.size(); ++i) {
      if (other[i].name != protocols[i].name || other[i].metadata != protocols[i].metadata) return false;
    }
    return true;
  }
};

struct Group {
  Group(std::string group_id, const Strand& strand) : id(std::move(group_id)), join_timer(strand), sync_timer(strand) {}
  std::string id;
  State state = State::kEmpty;
  int32_t generation = 0;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader;                            // "" = none
  std::vector<std::unique_ptr<Member>> members;  // in join order
  // Member ids handed out with MEMBER_ID_REQUIRED, each expiring after the session timeout.
  std::map<std::string, std::unique_ptr<asio::steady_timer>> pending;
  std::map<std::string, std::string> static_members;  // group.instance.id -> member id
  GroupOffsets offsets;
  // The delayed join: completes the rebalance when it fires (rebalance
  // timeout, or the initial delay of a group rebalancing from Empty).
  asio::steady_timer join_timer;
  uint64_t join_epoch = 0;
  bool initial_delay_active = false;
  bool new_member_added = false;
  int64_t initial_delay_remaining_ms = 0;
  // Members of the current generation that have not sent SyncGroup yet; those
  // still missing after the rebalance timeout are removed (Kafka's pending sync).
  std::set<std::string> pending_sync;
  asio::steady_timer sync_timer;
  uint64_t sync_epoch = 0;

  Member* Find(const std::string& member_id) {
    for (auto& m : members) {
      if (m->member_id == member_id) return m.get();
    }
    return nullptr;
  }
  // A static member whose instance id now belongs to another member id is fenced.
  bool IsStaticMemberFenced(const std::string& member_id, const std::optional<std::string>& instance_id) const {
    if (!instance_id) return false;
    auto it = static_members.find(*instance_id);
    return it != static_members.end() && it->second != member_id;
  }
  int32_t RebalanceTimeoutMs() const {
    int32_t t = 0;
    for (const auto& m : members) t = std::max(t, m->rebalance_timeout_ms);
    return t;
  }
  bool HasAllMembersJoined() const {
    if (!pending.empty()) return false;
    for (const auto& m : members) {
      if (!m->awaiting_join) return false;
    }
    return true;
  }
  bool SupportsProtocols(const std::string& type, const std::vector<JoinGroupProtocol>& protocols) const {
    if (type.empty() || protocols.empty()) return false;
    if (members.empty()) return true;
    if (protocol_type != type) return false;
    for (const auto& p : protocols) {
      if (SupportedByAll(p.name)) return true;
    }
    return false;
  }
  bool SupportedByAll(const std::string& name) const {
    for (const auto& m : members) {
      if (!m->MetadataFor(name)) return false;
    }
    return true;
  }
  // Kafka's selectProtocol: among the protocols every member supports, each
  // member votes for its most preferred; the most votes win (ties: the first
  // member's order).
  std::optional<std::string> SelectProtocol() const {
    if (members.empty()) return std::nullopt;
    std::vector<std::string> candidates;
    for (const auto& p : members.front()->protocols) {
      if (SupportedByAll(p.name)) candidates.push_back(p.name);
    }
    if (candidates.empty()) return std::nullopt;
    std::map<std::string, int> votes;
    for (const auto& m : members) {
      for (const auto& p : m->protocols) {
        if (std::find(candidates.begin(), candidates.end(), p.name) != candidates.end()) {
          ++votes[p.name];
          break;
        }
      }
    }
    std::string best = candidates.front();
    for (const auto& c : candidates) {
      if (votes[c] > votes[best]) best = c;
    }
    return best;
  }
  std::vector<JoinGroupMember> CurrentMemberMetadata() const {
    std::vector<JoinGroupMember> out;
    for (const auto& m : members) {
      const std::string* md = protocol_name ? m->MetadataFor(*protocol_name) : nullptr;
      out.push_back({m->member_id, m->group_instance_id, md ? *md : std::string()});
    }
    return out;
  }
};

}  // namespace

class GroupCoordinator::Impl : public std::enable_shared_from_this<GroupCoordinator::Impl> {
 public:
  Impl(asio::any_io_executor executor, GroupCoordinatorOptions options, std::unique_ptr<OffsetStore> store)
      : strand_(asio::make_strand(std::move(executor))),
        options_(std::move(options)),
        store_(std::move(store)),
        rng_(std::random_device{}()) {}

  const Strand& strand() const { return strand_; }

  void LoadOffsets(std::map<std::string, GroupOffsets> all) {
    for (auto& [group_id, offsets] : all) GetOrCreate(group_id).offsets = std::move(offsets);
  }

  asio::awaitable<JoinGroupResult> Join(JoinGroupRequest req);
  asio::awaitable<SyncGroupResult> Sync(SyncGroupRequest req);
  asio::awaitable<GroupError> Heartbeat(HeartbeatRequest req);
  asio::awaitable<LeaveGroupResult> Leave(LeaveGroupRequest req);
  asio::awaitable<OffsetCommitResult> Commit(OffsetCommitRequest req);
  asio::awaitable<OffsetFetchResult> Fetch(OffsetFetchRequest req);
  asio::awaitable<std::vector<DescribedGroup>> Describe(std::vector<std::string> ids, int16_t api_version);
  asio::awaitable<std::vector<ListedGroup>> List(std::vector<std::string> states, std::vector<std::string> types);
  asio::awaitable<std::vector<DeleteGroupResult>> Delete(std::vector<std::string> ids);
  asio::awaitable<Status> Stop();

 private:
  Group* FindGroup(const std::string& id) {
    auto it = groups_.find(id);
    return it == groups_.end() ? nullptr : it->second.get();
  }
  Group& GetOrCreate(const std::string& id) {
    auto& slot = groups_[id];
    if (!slot) slot = std::make_unique<Group>(id, strand_);
    return *slot;
  }

  std::string NewMemberId(const JoinGroupRequest& req);
  void UnknownMemberJoin(Group& g, const JoinGroupRequest& req, const std::shared_ptr<JoinWaiter>& waiter);
  void KnownMemberJoin(Group& g, const JoinGroupRequest& req, const std::shared_ptr<JoinWaiter>& waiter);
  void ReplaceStaticMember(Group& g, const std::string& old_id, const std::string& new_id, const JoinGroupRequest& req,
                           const std::shared_ptr<JoinWaiter>& waiter);
  void AddMemberAndRebalance(Group& g, const JoinGroupRequest& req, const std::string& member_id,
                             const std::shared_ptr<JoinWaiter>& waiter);
  void UpdateMemberAndRebalance(Group& g, Member& m, const JoinGroupRequest& req,
                                const std::shared_ptr<JoinWaiter>& waiter);
  JoinGroupResult CurrentGenerationResult(Group& g, const std::string& member_id, bool with_members) const;

  void MaybePrepareRebalance(Group& g, std::string_view reason);
  void PrepareRebalance(Group& g, std::string_view reason);
  void TryCompleteJoin(Group& g);
  void ScheduleJoin(Group& g, std::chrono::milliseconds delay);
  void OnJoinTimer(const std::string& group_id, uint64_t epoch);
  void CompleteJoin(Group& g);
  void ClearPendingSync(Group& g);
  void OnSyncTimer(const std::string& group_id, uint64_t epoch);
  void RemoveMemberAndUpdateGroup(Group& g, const std::string& member_id, std::string_view reason);
  void RemovePending(Group& g, const std::string& member_id);

  void ScheduleExpiry(Group& g, Member& m, std::chrono::milliseconds timeout);
  void OnHeartbeatExpired(const std::string& group_id, const std::string& member_id, uint64_t epoch);
  void AddPending(Group& g, const std::string& member_id, std::chrono::milliseconds timeout);

  Strand strand_;
  GroupCoordinatorOptions options_;
  std::unique_ptr<OffsetStore> store_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::mt19937_64 rng_;
  bool stopped_ = false;
};

// ------------------------------------------------------------------ timers

void GroupCoordinator::Impl::ScheduleExpiry(Group& g, Member& m, std::chrono::milliseconds timeout) {
  uint64_t epoch = ++m.heartbeat_epoch;
  m.heartbeat_timer.expires_after(timeout);
  m.heartbeat_timer.async_wait(
      [weak = weak_from_this(), group_id = g.id, member_id = m.member_id, epoch](const std::error_code& ec) {
        if (ec) return;
        if (auto self = weak.lock()) self->OnHeartbeatExpired(group_id, member_id, epoch);
      });
}

void GroupCoordinator::Impl::OnHeartbeatExpired(const std::string& group_id, const std::string& member_id,
                                                uint64_t epoch) {
  if (stopped_) return;
  Group* g = FindGroup(group_id);
  if (!g) return;
  Member* m = g->Find(member_id);
  if (!m || m->heartbeat_epoch != epoch) return;
  // Kafka's shouldKeepAlive: a member parked in JoinGroup (unless new and past
  // the new-member timeout) or in SyncGroup is not expired; its deadline is
  // re-armed when the rebalance or the sync completes.
  if (m->awaiting_join && !m->is_new) return;
  if (m->awaiting_sync) return;
  log::Debug("group '{}': member {} expired (no heartbeat within its {} ms session timeout); removing it", group_id,
             member_id, m->session_timeout_ms);
  RemoveMemberAndUpdateGroup(*g, member_id, "session timeout");
}

void GroupCoordinator::Impl::AddPending(Group& g, const std::string& member_id, std::chrono::milliseconds timeout) {
  auto timer = std::make_unique<asio::steady_timer>(strand_);
  timer->expires_after(timeout);
  timer->async_wait([weak = weak_from_this(), group_id = g.id, member_id](const std::error_code& ec) {
    if (ec) return;
    auto self = weak.lock();
    if (!self || self->stopped_) return;
    Group* grp = self->FindGroup(group_id);
    if (!grp || !grp->pending.count(member_id)) return;
    log::Debug("group '{}': pending member {} did not rejoin within its session timeout", group_id, member_id);
    self->RemovePending(*grp, member_id);
  });
  g.pending[member_id] = std::move(timer);
}

void GroupCoordinator::Impl::RemovePending(Group& g, const std::string& member_id) {
  g.pending.erase(member_id);  // destroying the timer aborts its wait
  if (g.state == State::kPreparingRebalance) TryCompleteJoin(g);
}

void GroupCoordinator::Impl::ScheduleJoin(Group& g, std::chrono::milliseconds delay) {
  uint64_t epoch = ++g.join_epoch;
  g.join_timer.expires_after(delay);
  g.join_timer.async_wait([weak = weak_from_this(), group_id = g.id, epoch](const std::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->OnJoinTimer(group_id, epoch);
  });
}

void GroupCoordinator::Impl::OnJoinTimer(const std::string& group_id, uint64_t epoch) {
  if (stopped_) return;
  Group* g = FindGroup(group_id);
  if (!g || g->join_epoch != epoch || g->state != State::kPreparingRebalance) return;
  if (g->initial_delay_active && g->new_member_added && g->initial_delay_remaining_ms > 0) {
    // Kafka's InitialDelayedJoin: each new member extends the wait by up to the
    // initial delay, within the rebalance timeout.
    g->new_member_added = false;
    int64_t delay = std::min<int64_t>(options_.initial_rebalance_delay.count(), g->initial_delay_remaining_ms);
    g->initial_delay_remaining_ms = std::max<int64_t>(g->initial_delay_remaining_ms - delay, 0);
    ScheduleJoin(*g, std::chrono::milliseconds(delay));
    return;
  }
  CompleteJoin(*g);
}

void GroupCoordinator::Impl::ClearPendingSync(Group& g) {
  g.pending_sync.clear();
  ++g.sync_epoch;  // a sync timer still pending is now stale
  g.sync_timer.cancel();
}

void GroupCoordinator::Impl::OnSyncTimer(const std::string& group_id, uint64_t epoch) {
  if (stopped_) return;
  Group* g = FindGroup(group_id);
  if (!g || g->sync_epoch != epoch) return;
  if (g->state != State::kCompletingRebalance && g->state != State::kStable) return;
  const std::vector<std::string> missing(g->pending_sync.begin(), g->pending_sync.end());
  for (const auto& id : missing) {
    if (!g->Find(id)) continue;
    log::Debug("group '{}': member {} sent no SyncGroup within the rebalance timeout; removing it", g->id, id);
    RemoveMemberAndUpdateGroup(*g, id, "no SyncGroup within the rebalance timeout");
  }
}

// --------------------------------------------------------------- rebalance

void GroupCoordinator::Impl::MaybePrepareRebalance(Group& g, std::string_view reason) {
  if (g.state == State::kStable || g.state == State::kCompletingRebalance || g.state == State::kEmpty) {
    PrepareRebalance(g, reason);
  }
}

void GroupCoordinator::Impl::PrepareRebalance(Group& g, std::string_view reason) {
  if (g.state == State::kCompletingRebalance) {
    // Members waiting in SyncGroup must rejoin.
    for (auto& m : g.members) {
      m->assignment.clear();
      if (m->awaiting_sync) {
        m->awaiting_sync->Complete(SyncError(GroupError::kRebalanceInProgress));
        m->awaiting_sync.reset();
      }
    }
  }
  ClearPendingSync(g);
  const bool from_empty = g.state == State::kEmpty;
  log::Debug("group '{}': preparing to rebalance from {} (generation {}): {}", g.id, StateName(g.state), g.generation,
             reason);
  g.state = State::kPreparingRebalance;
  if (from_empty) {
    g.initial_delay_active = true;
    g.new_member_added = false;
    g.initial_delay_remaining_ms =
        std::max<int64_t>(g.RebalanceTimeoutMs() - options_.initial_rebalance_delay.count(), 0);
    ScheduleJoin(g, options_.initial_rebalance_delay);
  } else {
    g.initial_delay_active = false;
    ScheduleJoin(g, std::chrono::milliseconds(g.RebalanceTimeoutMs()));
    TryCompleteJoin(g);
  }
}

void GroupCoordinator::Impl::TryCompleteJoin(Group& g) {
  if (g.state != State::kPreparingRebalance || g.initial_delay_active) return;
  if (g.HasAllMembersJoined()) CompleteJoin(g);
}

void GroupCoordinator::Impl::CompleteJoin(Group& g) {
  ++g.join_epoch;  // a timer still pending for this round is now stale
  g.join_timer.cancel();
  g.initial_delay_active = false;
  // Dynamic members that did not rejoin in time are dropped; static members stay
  // (their session timeout decides), as in Kafka.
  std::vector<std::string> gone;
  for (const auto& m : g.members) {
    if (!m->awaiting_join && !m->group_instance_id) gone.push_back(m->member_id);
  }
  for (const auto& id : gone) {
    log::Debug("group '{}': member {} did not rejoin within the rebalance timeout; removing it", g.id, id);
    auto it = std::find_if(g.members.begin(), g.members.end(), [&](const auto& m) { return m->member_id == id; });
    if ((*it)->awaiting_sync) (*it)->awaiting_sync->Complete(SyncError(GroupError::kUnknownMemberId));
    g.members.erase(it);
    if (g.leader == id) g.leader.clear();
  }
  // The leader must be a member that rejoined; otherwise the first one that did.
  Member* leader = g.leader.empty() ? nullptr : g.Find(g.leader);
  if (!leader || !leader->awaiting_join) {
    g.leader.clear();
    for (auto& m : g.members) {
      if (m->awaiting_join) {
        g.leader = m->member_id;
        break;
      }
    }
    if (g.leader.empty() && !g.members.empty()) {
      // Only static members that have not rejoined: wait another rebalance
      // timeout, their session timeouts will remove them if they are gone.
      log::Debug("group '{}': no member rejoined; waiting another rebalance timeout", g.id);
      ScheduleJoin(g, std::chrono::milliseconds(g.RebalanceTimeoutMs()));
      return;
    }
  }
  ++g.generation;
  if (g.members.empty()) {
    g.protocol_name.reset();
    g.state = State::kEmpty;
    log::Debug("group '{}': generation {} is empty", g.id, g.generation);
    return;
  }
  g.protocol_name = g.SelectProtocol();
  g.state = State::kCompletingRebalance;
  ClearPendingSync(g);
  for (const auto& m : g.members) g.pending_sync.insert(m->member_id);
  {
    uint64_t epoch = g.sync_epoch;
    g.sync_timer.expires_after(std::chrono::milliseconds(g.RebalanceTimeoutMs()));
    g.sync_timer.async_wait([weak = weak_from_this(), group_id = g.id, epoch](const std::error_code& ec) {
      if (ec) return;
      if (auto self = weak.lock()) self->OnSyncTimer(group_id, epoch);
    });
  }
  // Info, as Kafka's coordinator logs a group stabilized: rebalances are
  // what an operator of consumers looks for first.
  log::Info("group '{}': generation {} with {} members, protocol {}, leader {}", g.id, g.generation, g.members.size(),
            g.protocol_name.value_or(""), g.leader);
  for (auto& m : g.members) {
    if (m->awaiting_join) {
      m->awaiting_join->Complete(CurrentGenerationResult(g, m->member_id, m->member_id == g.leader));
      m->awaiting_join.reset();
    }
    ScheduleExpiry(g, *m, std::chrono::milliseconds(m->session_timeout_ms));
    m->is_new = false;
  }
}

JoinGroupResult GroupCoordinator::Impl::CurrentGenerationResult(Group& g, const std::string& member_id,
                                                                bool with_members) const {
  JoinGroupResult r;
  r.error = GroupError::kNone;
  r.generation_id = g.generation;
  r.protocol_type = g.protocol_type;
  r.protocol_name = g.protocol_name;
  r.leader = g.leader;
  r.member_id = member_id;
  if (with_members) r.members = g.CurrentMemberMetadata();
  return r;
}

void GroupCoordinator::Impl::RemoveMemberAndUpdateGroup(Group& g, const std::string& member_id,
                                                        std::string_view reason) {
  auto it = std::find_if(g.members.begin(), g.members.end(), [&](const auto& m) { return m->member_id == member_id; });
  if (it == g.members.end()) return;
  Member& m = **it;
  // A member removed while parked in JoinGroup (a new member past its join
  // timeout) is told to rejoin from scratch.
  if (m.awaiting_join) m.awaiting_join->Complete(JoinError(GroupError::kUnknownMemberId, ""));
  if (m.awaiting_sync) m.awaiting_sync->Complete(SyncError(GroupError::kUnknownMemberId));
  if (m.group_instance_id) {
    auto s = g.static_members.find(*m.group_instance_id);
    if (s != g.static_members.end() && s->second == member_id) g.static_members.erase(s);
  }
  g.members.erase(it);
  g.pending_sync.erase(member_id);
  if (g.leader == member_id) g.leader = g.members.empty() ? std::string() : g.members.front()->member_id;
  switch (g.state) {
    case State::kStable:
    case State::kCompletingRebalance:
      MaybePrepareRebalance(g, fmt::format("removing member {}: {}", member_id, reason));
      break;
    case State::kPreparingRebalance:
      TryCompleteJoin(g);
      break;
    case State::kEmpty:
    case State::kDead:
      break;
  }
}

// ---------------------------------------------------------------- JoinGroup

std::string GroupCoordinator::Impl::NewMemberId(const JoinGroupRequest& req) {
  uint64_t hi = rng_(), lo = rng_();
  hi = (hi & ~0xF000ull) | 0x4000ull;                  // version 4
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);  // RFC 4122 variant
  std::string uuid = fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF,
                                 lo >> 48, lo & 0xFFFFFFFFFFFFull);
  return fmt::format("{}-{}", req.group_instance_id ? *req.group_instance_id : req.client_id, uuid);
}

asio::awaitable<JoinGroupResult> GroupCoordinator::Impl::Join(JoinGroupRequest req) {
  if (stopped_) co_return JoinError(GroupError::kCoordinatorNotAvailable, req.member_id);
  if (req.group_id.empty()) co_return JoinError(GroupError::kInvalidGroupId, req.member_id);
  if (req.session_timeout_ms < options_.min_session_timeout.count() ||
      req.session_timeout_ms > options_.max_session_timeout.count()) {
    co_return JoinError(GroupError::kInvalidSessionTimeout, req.member_id);
  }
  if (req.rebalance_timeout_ms < 0) req.rebalance_timeout_ms = req.session_timeout_ms;
  const bool unknown_member = req.member_id.empty();
  Group* g = FindGroup(req.group_id);
  if (!g) {
    if (!unknown_member) co_return JoinError(GroupError::kUnknownMemberId, req.member_id);
    g = &GetOrCreate(req.group_id);
  }
  auto waiter = std::make_shared<JoinWaiter>(strand_);
  if (unknown_member && static_cast<int64_t>(g->members.size() + g->pending.size()) >= options_.max_group_size &&
      !(req.group_instance_id && g->static_members.count(*req.group_instance_id))) {
    co_return JoinError(GroupError::kGroupMaxSizeReached, req.member_id);
  }
  if (unknown_member) {
    UnknownMemberJoin(*g, req, waiter);
  } else {
    KnownMemberJoin(*g, req, waiter);
  }
  if (g->state == State::kPreparingRebalance) TryCompleteJoin(*g);
  co_return co_await waiter->Wait();
}

void GroupCoordinator::Impl::UnknownMemberJoin(Group& g, const JoinGroupRequest& req,
                                               const std::shared_ptr<JoinWaiter>& waiter) {
  if (!g.SupportsProtocols(req.protocol_type, req.protocols)) {
    waiter->Complete(JoinError(GroupError::kInconsistentGroupProtocol, ""));
    return;
  }
  std::string new_id = NewMemberId(req);
  if (req.group_instance_id) {
    auto it = g.static_members.find(*req.group_instance_id);
    if (it != g.static_members.end()) {
      ReplaceStaticMember(g, it->second, new_id, req, waiter);
      return;
    }
  } else if (req.api_version >= 4) {
    // The member rejoins with this id; until then it counts as pending.
    AddPending(g, new_id, std::chrono::milliseconds(req.session_timeout_ms));
    waiter->Complete(JoinError(GroupError::kMemberIdRequired, new_id));
    return;
  }
  AddMemberAndRebalance(g, req, new_id, waiter);
}

void GroupCoordinator::Impl::ReplaceStaticMember(Group& g, const std::string& old_id, const std::string& new_id,
                                                 const JoinGroupRequest& req,
                                                 const std::shared_ptr<JoinWaiter>& waiter) {
  Member* m = g.Find(old_id);
  if (!m) {  // cannot happen: static_members only names members
    g.static_members.erase(*req.group_instance_id);
    AddMemberAndRebalance(g, req, new_id, waiter);
    return;
  }
  log::Debug("group '{}': static member {} rejoins with a new member id {}; the old id {} is fenced", g.id,
             *req.group_instance_id, new_id, old_id);
  // Calls parked under the old id belong to the replaced instance: fence them.
  if (m->awaiting_join) {
    m->awaiting_join->Complete(JoinError(GroupError::kFencedInstanceId, old_id));
    m->awaiting_join.reset();
  }
  if (m->awaiting_sync) {
    m->awaiting_sync->Complete(SyncError(GroupError::kFencedInstanceId));
    m->awaiting_sync.reset();
  }
  const std::string old_leader = g.leader;
  const bool protocols_changed = !m->Matches(req.protocols);
  m->member_id = new_id;
  if (g.pending_sync.erase(old_id)) g.pending_sync.insert(new_id);
  g.static_members[*req.group_instance_id] = new_id;
  if (g.leader == old_id) g.leader = new_id;
  m->client_id = req.client_id;
  m->client_host = req.client_host;
  m->rebalance_timeout_ms = req.rebalance_timeout_ms;
  m->session_timeout_ms = req.session_timeout_ms;
  m->protocols = req.protocols;
  ScheduleExpiry(g, *m, std::chrono::milliseconds(req.session_timeout_ms));
  switch (g.state) {
    case State::kStable:
      if (!protocols_changed) {
        // No rebalance: the new instance takes over the old one's assignment
        // (its SyncGroup returns it). The old leader id is returned so that a
        // replaced leader does not compute a new assignment nobody would receive.
        JoinGroupResult r = CurrentGenerationResult(g, new_id, false);
        r.leader = old_leader;
        waiter->Complete(std::move(r));
        return;
      }
      m->awaiting_join = waiter;
      PrepareRebalance(g, fmt::format("static member {} rejoined with new metadata", *req.group_instance_id));
      return;
    case State::kCompletingRebalance:
      // The leader may already have assigned to the old id: rebalance.
      m->awaiting_join = waiter;
      PrepareRebalance(g, fmt::format("static member {} rejoined during CompletingRebalance", *req.group_instance_id));
      return;
    case State::kPreparingRebalance:
      m->awaiting_join = waiter;
      return;
    case State::kEmpty:
    case State::kDead:
      waiter->Complete(JoinError(GroupError::kUnknownMemberId, ""));
      return;
  }
}

void GroupCoordinator::Impl::AddMemberAndRebalance(Group& g, const JoinGroupRequest& req, const std::string& member_id,
                                                   const std::shared_ptr<JoinWaiter>& waiter) {
  if (g.members.empty()) g.protocol_type = req.protocol_type;
  auto m = std::make_unique<Member>(strand_);
  m->member_id = member_id;
  m->group_instance_id = req.group_instance_id;
  m->client_id = req.client_id;
  m->client_host = req.client_host;
  m->rebalance_timeout_ms = req.rebalance_timeout_ms;
  m->session_timeout_ms = req.session_timeout_ms;
  m->protocol_type = req.protocol_type;
  m->protocols = req.protocols;
  m->is_new = true;
  m->awaiting_join = waiter;
  if (g.state == State::kPreparingRebalance && g.generation == 0) g.new_member_added = true;
  if (g.leader.empty()) g.leader = member_id;
  Member& added = *m;
  g.members.push_back(std::move(m));
  // A new member cannot heartbeat until it has joined; a client that went away
  // mid-join is dropped after the new-member timeout instead.
  ScheduleExpiry(g, added, options_.new_member_join_timeout);
  if (req.group_instance_id) {
    g.static_members[*req.group_instance_id] = member_id;
  } else {
    g.pending.erase(member_id);
  }
  log::Debug("group '{}': member {} (client {} at {}) joins", g.id, member_id, req.client_id, req.client_host);
  MaybePrepareRebalance(g, fmt::format("adding member {}", member_id));
}

void GroupCoordinator::Impl::UpdateMemberAndRebalance(Group& g, Member& m, const JoinGroupRequest& req,
                                                      const std::shared_ptr<JoinWaiter>& waiter) {
  m.protocols = req.protocols;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms;
  m.session_timeout_ms = req.session_timeout_ms;
  m.client_id = req.client_id;
  m.client_host = req.client_host;
  if (m.awaiting_join && m.awaiting_join != waiter) {
    // The client gave up on its earlier JoinGroup (request timeout) and sent another.
    m.awaiting_join->Complete(JoinError(GroupError::kRebalanceInProgress, m.member_id));
  }
  m.awaiting_join = waiter;
  MaybePrepareRebalance(g, fmt::format("member {} rejoins", m.member_id));
}

void GroupCoordinator::Impl::KnownMemberJoin(Group& g, const JoinGroupRequest& req,
                                             const std::shared_ptr<JoinWaiter>& waiter) {
  if (!g.SupportsProtocols(req.protocol_type, req.protocols)) {
    waiter->Complete(JoinError(GroupError::kInconsistentGroupProtocol, req.member_id));
    return;
  }
  if (g.pending.count(req.member_id)) {
    AddMemberAndRebalance(g, req, req.member_id, waiter);
    return;
  }
  if (g.IsStaticMemberFenced(req.member_id, req.group_instance_id)) {
    waiter->Complete(JoinError(GroupError::kFencedInstanceId, req.member_id));
    return;
  }
  Member* m = g.Find(req.member_id);
  if (!m || (req.group_instance_id && !g.static_members.count(*req.group_instance_id))) {
    waiter->Complete(JoinError(GroupError::kUnknownMemberId, req.member_id));
    return;
  }
  switch (g.state) {
    case State::kPreparingRebalance:
      UpdateMemberAndRebalance(g, *m, req, waiter);
      return;
    case State::kCompletingRebalance:
      if (m->Matches(req.protocols)) {
        // The member lost its JoinGroup answer: repeat the current generation.
        waiter->Complete(CurrentGenerationResult(g, req.member_id, req.member_id == g.leader));
      } else {
        UpdateMemberAndRebalance(g, *m, req, waiter);
      }
      return;
    case State::kStable:
      if (req.member_id == g.leader || !m->Matches(req.protocols)) {
        // Changed metadata (a new subscription, a cooperative rejoin) or the
        // leader asking for a new assignment: rebalance.
        UpdateMemberAndRebalance(g, *m, req, waiter);
      } else {
        waiter->Complete(CurrentGenerationResult(g, req.member_id, false));
      }
      return;
    case State::kEmpty:
    case State::kDead:
      waiter->Complete(JoinError(GroupError::kUnknownMemberId, req.member_id));
      return;
  }
}

// ---------------------------------------------------------------- SyncGroup

asio::awaitable<SyncGroupResult> GroupCoordinator::Impl::Sync(SyncGroupRequest req) {
  if (stopped_) co_return SyncError(GroupError::kCoordinatorNotAvailable);
  if (req.group_id.empty()) co_return SyncError(GroupError::kInvalidGroupId);
  Group* g = FindGroup(req.group_id);
  if (!g) co_return SyncError(GroupError::kUnknownMemberId);
  if (g->IsStaticMemberFenced(req.member_id, req.group_instance_id)) co_return SyncError(GroupError::kFencedInstanceId);
  Member* m = g->Find(req.member_id);
  if (!m) co_return SyncError(GroupError::kUnknownMemberId);
  if (req.generation_id != g->generation) co_return SyncError(GroupError::kIllegalGeneration);
  if ((req.protocol_type && req.protocol_type != g->protocol_type) ||
      (req.protocol_name && req.protocol_name != g->protocol_name)) {
    co_return SyncError(GroupError::kInconsistentGroupProtocol);
  }
  if (g->state == State::kCompletingRebalance || g->state == State::kStable) g->pending_sync.erase(req.member_id);
  auto ok = [&](std::string assignment) {
    SyncGroupResult r;
    r.protocol_type = g->protocol_type;
    r.protocol_name = g->protocol_name;
    r.assignment = std::move(assignment);
    return r;
  };
  switch (g->state) {
    case State::kEmpty:
    case State::kDead:
      co_return SyncError(GroupError::kUnknownMemberId);
    case State::kPreparingRebalance:
      co_return SyncError(GroupError::kRebalanceInProgress);
    case State::kStable:
      ScheduleExpiry(*g, *m, std::chrono::milliseconds(m->session_timeout_ms));
      co_return ok(m->assignment);
    case State::kCompletingRebalance:
      break;
  }
  auto waiter = std::make_shared<SyncWaiter>(strand_);
  if (m->awaiting_sync) m->awaiting_sync->Complete(SyncError(GroupError::kRebalanceInProgress));
  m->awaiting_sync = waiter;
  if (req.member_id == g->leader) {
    log::Debug("group '{}': assignment for generation {} received from the leader {}", g->id, g->generation,
               req.member_id);
    std::map<std::string, std::string> by_member;
    for (auto& a : req.assignments) by_member.emplace(a.member_id, std::move(a.assignment));
    for (auto& member : g->members) {
      auto it = by_member.find(member->member_id);
      member->assignment = it == by_member.end() ? std::string() : it->second;  // missing: empty
    }
    g->state = State::kStable;
    for (auto& member : g->members) {
      if (member->awaiting_sync) {
        member->awaiting_sync->Complete(ok(member->assignment));
        member->awaiting_sync.reset();
        ScheduleExpiry(*g, *member, std::chrono::milliseconds(member->session_timeout_ms));
      }
    }
  }
  co_return co_await waiter->Wait();
}

// ---------------------------------------------------------------- Heartbeat

asio::awaitable<GroupError> GroupCoordinator::Impl::Heartbeat(HeartbeatRequest req) {
  if (stopped_) co_return GroupError::kCoordinatorNotAvailable;
  if (req.group_id.empty()) co_return GroupError::kInvalidGroupId;
  Group* g = FindGroup(req.group_id);
  if (!g) co_return GroupError::kUnknownMemberId;
  if (g->IsStaticMemberFenced(req.member_id, req.group_instance_id)) co_return GroupError::kFencedInstanceId;
  Member* m = g->Find(req.member_id);
  if (!m) co_return GroupError::kUnknownMemberId;
  if (req.generation_id != g->generation) co_return GroupError::kIllegalGeneration;
  switch (g->state) {
    case State::kEmpty:
    case State::kDead:
      co_return GroupError::kUnknownMemberId;
    case State::kPreparingRebalance:
      ScheduleExpiry(*g, *m, std::chrono::milliseconds(m->session_timeout_ms));
      co_return GroupError::kRebalanceInProgress;
    case State::kCompletingRebalance:  // the member has its JoinGroup answer and is on its way to SyncGroup
    case State::kStable:
      ScheduleExpiry(*g, *m, std::chrono::milliseconds(m->session_timeout_ms));
      co_return GroupError::kNone;
  }
  co_return GroupError::kNone;
}

// --------------------------------------------------------------- LeaveGroup

asio::awaitable<LeaveGroupResult> GroupCoordinator::Impl::Leave(LeaveGroupRequest req) {
  LeaveGroupResult result;
  if (stopped_) {
    result.error = GroupError::kCoordinatorNotAvailable;
    co_return result;
  }
  if (req.group_id.empty()) {
    result.error = GroupError::kInvalidGroupId;
    co_return result;
  }
  Group* g = FindGroup(req.group_id);
  for (const auto& leaving : req.members) {
    LeaveGroupMemberResult r{leaving.member_id, leaving.group_instance_id, GroupError::kNone};
    if (!g) {
      r.error = GroupError::kUnknownMemberId;
    } else if (!leaving.member_id.empty() && g->IsStaticMemberFenced(leaving.member_id, leaving.group_instance_id)) {
      r.error = GroupError::kFencedInstanceId;
    } else if (g->pending.count(leaving.member_id)) {
      log::Debug("group '{}': pending member {} leaves", g->id, leaving.member_id);
      RemovePending(*g, leaving.member_id);
    } else {
      std::string id = leaving.member_id;
      if (leaving.group_instance_id) {
        auto it = g->static_members.find(*leaving.group_instance_id);
        if (it != g->static_members.end()) id = it->second;
      }
      if (!g->Find(id)) {
        r.error = GroupError::kUnknownMemberId;
      } else {
        log::Debug("group '{}': member {} leaves{}", g->id, id,
                   leaving.reason ? fmt::format(" ({})", *leaving.reason) : std::string());
        RemoveMemberAndUpdateGroup(*g, id, "LeaveGroup");
      }
    }
    result.members.push_back(std::move(r));
  }
  co_return result;
}

// ------------------------------------------------------------- OffsetCommit

asio::awaitable<OffsetCommitResult> GroupCoordinator::Impl::Commit(OffsetCommitRequest req) {
  OffsetCommitResult result;
  auto answer_all = [&](GroupError error) {
    result.topics.clear();
    for (const auto& t : req.topics) {
      OffsetCommitTopicResult tr{t.name, {}};
      for (const auto& p : t.partitions) tr.partitions.push_back({p.partition, error});
      result.topics.push_back(std::move(tr));
    }
    return result;
  };
  if (stopped_) co_return answer_all(GroupError::kCoordinatorNotAvailable);
  Group* g = FindGroup(req.group_id);
  if (!g) {
    // A group unknown to the coordinator: only a simple (assign-mode) consumer
    // may commit; a member of an older generation must rejoin.
    if (req.generation_id >= 0) co_return answer_all(GroupError::kIllegalGeneration);
    g = &GetOrCreate(req.group_id);
  }
  if (g->IsStaticMemberFenced(req.member_id, req.group_instance_id)) {
    co_return answer_all(GroupError::kFencedInstanceId);
  }
  if (!(req.generation_id < 0 && g->state == State::kEmpty)) {
    Member* m = g->Find(req.member_id);
    if (!m) co_return answer_all(GroupError::kUnknownMemberId);
    if (req.generation_id != g->generation) co_return answer_all(GroupError::kIllegalGeneration);
    if (g->state == State::kCompletingRebalance) co_return answer_all(GroupError::kRebalanceInProgress);
    // Stable or PreparingRebalance: commits are allowed (the heartbeat tells
    // the member about the rebalance); a commit also counts as a heartbeat.
    ScheduleExpiry(*g, *m, std::chrono::milliseconds(m->session_timeout_ms));
  }
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  std::vector<OffsetWrite> writes;
  answer_all(GroupError::kNone);
  for (size_t ti = 0; ti < req.topics.size(); ++ti) {
    for (size_t pi = 0; pi < req.topics[ti].partitions.size(); ++pi) {
      const auto& p = req.topics[ti].partitions[pi];
      const std::string metadata = p.metadata.value_or("");
      if (static_cast<int64_t>(metadata.size()) > options_.offset_metadata_max_bytes) {
        result.topics[ti].partitions[pi].error = GroupError::kOffsetMetadataTooLarge;
        continue;
      }
      writes.push_back({req.topics[ti].name, p.partition, CommittedOffset{p.offset, p.leader_epoch, metadata, now_ms}});
    }
  }
  Status st = store_->Commit(g->id, writes);
  if (!st.ok()) {
    log::Warn("group '{}': offset commit failed: {}", g->id, st.ToString());
    for (auto& t : result.topics) {
      for (auto& p : t.partitions) {
        if (p.error == GroupError::kNone) p.error = GroupError::kUnknownServerError;
      }
    }
    co_return result;
  }
  for (auto& w : writes) g->offsets[{w.topic, w.partition}] = std::move(w.committed);
  co_return result;
}

// -------------------------------------------------------------- OffsetFetch

asio::awaitable<OffsetFetchResult> GroupCoordinator::Impl::Fetch(OffsetFetchRequest req) {
  OffsetFetchResult result;
  if (stopped_) {
    result.error = GroupError::kCoordinatorNotAvailable;
    co_return result;
  }
  Group* g = FindGroup(req.group_id);
  auto partition_result = [&](const std::string& topic, int32_t partition) {
    OffsetFetchPartitionResult r;
    r.partition = partition;
    if (g) {
      auto it = g->offsets.find({topic, partition});
      if (it != g->offsets.end()) {
        r.committed_offset = it->second.offset;
        r.committed_leader_epoch = it->second.leader_epoch;
        r.metadata = it->second.metadata;
      }
    }
    return r;
  };
  if (req.topics) {
    for (const auto& t : *req.topics) {
      OffsetFetchTopicResult tr{t.name, {}};
      for (int32_t p : t.partitions) tr.partitions.push_back(partition_result(t.name, p));
      result.topics.push_back(std::move(tr));
    }
  } else if (g) {
    for (const auto& [key, committed] : g->offsets) {
      if (result.topics.empty() || result.topics.back().name != key.first) result.topics.push_back({key.first, {}});
      result.topics.back().partitions.push_back(partition_result(key.first, key.second));
    }
  }
  co_return result;
}

// ----------------------------------------------------- Describe/List/Delete

asio::awaitable<std::vector<DescribedGroup>> GroupCoordinator::Impl::Describe(std::vector<std::string> ids,
                                                                              int16_t api_version) {
  std::vector<DescribedGroup> out;
  for (auto& id : ids) {
    DescribedGroup d;
    d.group_id = id;
    Group* g = stopped_ ? nullptr : FindGroup(id);
    if (stopped_) {
      d.error = GroupError::kCoordinatorNotAvailable;
    } else if (!g) {
      d.state = std::string(StateName(State::kDead));
      if (api_version >= 6) d.error = GroupError::kGroupIdNotFound;
    } else {
      d.state = std::string(StateName(g->state));
      d.protocol_type = g->protocol_type.value_or("");
      const bool stable = g->state == State::kStable;
      if (stable) d.protocol_data = g->protocol_name.value_or("");
      for (const auto& m : g->members) {
        DescribedMember dm{m->member_id, m->group_instance_id, m->client_id, m->client_host, {}, {}};
        if (stable) {
          const std::string* md = g->protocol_name ? m->MetadataFor(*g->protocol_name) : nullptr;
          if (md) dm.metadata = *md;
          dm.assignment = m->assignment;
        }
        d.members.push_back(std::move(dm));
      }
    }
    out.push_back(std::move(d));
  }
  co_return out;
}

asio::awaitable<std::vector<ListedGroup>> GroupCoordinator::Impl::List(std::vector<std::string> states,
                                                                       std::vector<std::string> types) {
  std::vector<ListedGroup> out;
  if (stopped_) co_return out;
  auto matches = [](const std::vector<std::string>& filter, std::string_view value) {
    if (filter.empty()) return true;
    return std::any_of(filter.begin(), filter.end(), [&](const std::string& f) { return EqualsIgnoreCase(f, value); });
  };
  if (!matches(types, "classic")) co_return out;
  for (const auto& [id, g] : groups_) {
    if (!matches(states, StateName(g->state))) continue;
    out.push_back({id, g->protocol_type.value_or(""), std::string(StateName(g->state)), "classic"});
  }
  co_return out;
}

asio::awaitable<std::vector<DeleteGroupResult>> GroupCoordinator::Impl::Delete(std::vector<std::string> ids) {
  std::vector<DeleteGroupResult> out;
  for (auto& id : ids) {
    DeleteGroupResult r{id, GroupError::kNone};
    Group* g = stopped_ ? nullptr : FindGroup(id);
    if (stopped_) {
      r.error = GroupError::kCoordinatorNotAvailable;
    } else if (!g) {
      r.error = GroupError::kGroupIdNotFound;
    } else if (g->state != State::kEmpty) {
      r.error = GroupError::kNonEmptyGroup;
    } else if (Status st = store_->DeleteGroup(id); !st.ok()) {
      log::Warn("group '{}': deleting its committed offsets failed: {}", id, st.ToString());
      r.error = GroupError::kUnknownServerError;
    } else {
      log::Debug("group '{}': deleted with {} committed offsets", id, g->offsets.size());
      groups_.erase(id);
    }
    out.push_back(std::move(r));
  }
  co_return out;
}

asio::awaitable<Status> GroupCoordinator::Impl::Stop() {
  if (stopped_) co_return Status::OK();
  stopped_ = true;
  for (auto& [id, g] : groups_) {
    for (auto& m : g->members) {
      if (m->awaiting_join) m->awaiting_join->Complete(JoinError(GroupError::kCoordinatorNotAvailable, m->member_id));
      if (m->awaiting_sync) m->awaiting_sync->Complete(SyncError(GroupError::kCoordinatorNotAvailable));
      m->heartbeat_timer.cancel();
    }
    g->join_timer.cancel();
    g->sync_timer.cancel();
  }
  groups_.clear();  // destroys every timer; their handlers see operation_aborted
  co_return store_->Close();
}

// ---------------------------------------------------------------- public API

GroupCoordinator::GroupCoordinator(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
GroupCoordinator::~GroupCoordinator() = default;

Result<std::unique_ptr<GroupCoordinator>> GroupCoordinator::Make(asio::any_io_executor executor,
                                                                 GroupCoordinatorOptions options) {
  if (options.min_session_timeout > options.max_session_timeout) {
    return Status::Invalid("group coordinator: min session timeout {} ms exceeds the max {} ms",
                           options.min_session_timeout.count(), options.max_session_timeout.count());
  }
  std::unique_ptr<OffsetStore> store;
  if (options.state_dir.empty()) {
    ASSIGN_OR_RAISE(store, OffsetStore::OpenInMemory());
  } else {
    ASSIGN_OR_RAISE(store, OffsetStore::Open(options.state_dir));
  }
  ASSIGN_OR_RAISE(auto offsets, store->LoadAll());
  auto impl = std::make_shared<Impl>(std::move(executor), std::move(options), std::move(store));
  impl->LoadOffsets(std::move(offsets));
  return std::unique_ptr<GroupCoordinator>(new GroupCoordinator(std::move(impl)));
}

// Each call runs on the strand (co_spawn) and resumes the caller on its own
// executor; the caller's frame keeps the Impl alive while it waits.
asio::awaitable<JoinGroupResult> GroupCoordinator::JoinGroup(JoinGroupRequest request) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Join(std::move(request)), asio::use_awaitable);
}
asio::awaitable<SyncGroupResult> GroupCoordinator::SyncGroup(SyncGroupRequest request) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Sync(std::move(request)), asio::use_awaitable);
}
asio::awaitable<GroupError> GroupCoordinator::Heartbeat(HeartbeatRequest request) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Heartbeat(std::move(request)), asio::use_awaitable);
}
asio::awaitable<LeaveGroupResult> GroupCoordinator::LeaveGroup(LeaveGroupRequest request) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Leave(std::move(request)), asio::use_awaitable);
}
asio::awaitable<OffsetCommitResult> GroupCoordinator::OffsetCommit(OffsetCommitRequest request) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Commit(std::move(request)), asio::use_awaitable);
}
asio::awaitable<OffsetFetchResult> GroupCoordinator::OffsetFetch(OffsetFetchRequest request) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Fetch(std::move(request)), asio::use_awaitable);
}
asio::awaitable<std::vector<DescribedGroup>> GroupCoordinator::DescribeGroups(std::vector<std::string> group_ids,
                                                                              int16_t api_version) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Describe(std::move(group_ids), api_version),
                                    asio::use_awaitable);
}
asio::awaitable<std::vector<ListedGroup>> GroupCoordinator::ListGroups(std::vector<std::string> states_filter,
                                                                       std::vector<std::string> types_filter) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->List(std::move(states_filter), std::move(types_filter)),
                                    asio::use_awaitable);
}
asio::awaitable<std::vector<DeleteGroupResult>> GroupCoordinator::DeleteGroups(std::vector<std::string> group_ids) {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Delete(std::move(group_ids)), asio::use_awaitable);
}
asio::awaitable<Status> GroupCoordinator::Stop() {
  auto impl = impl_;
  co_return co_await asio::co_spawn(impl->strand(), impl->Stop(), asio::use_awaitable);
}

}  // namespace thaw::kafka::server
