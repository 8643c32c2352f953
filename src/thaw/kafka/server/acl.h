// ACLs on `thaw serve`'s listener in Kafka's terms (KIP-11, KIP-290): who
// (a principal, "User:alice", or every user "User:*") is allowed or denied
// which operation on which resource (a topic, a group, the cluster), the
// resource named literally, by prefix, or "*" for all of its type.
//
//   --acl-file FILE   one ACL a line, '#' starts a comment line:
//     allow User:alice READ topic orders
//     allow User:*     DESCRIBE topic prefixed:logs.
//     allow User:bob   READ,DESCRIBE group billing
//     deny  User:eve   ALL topic *
//     allow User:admin DESCRIBE cluster
//
// The decision is Kafka's StandardAuthorizer's with
// allow.everyone.if.no.acl.found=false:
//   - a DENY that matches wins over any ALLOW;
//   - otherwise an ALLOW that matches allows; nothing matching denies;
//   - an ACL matches an operation when it names that operation or ALL; an
//     ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, one of
//     ALTER_CONFIGS also DESCRIBE_CONFIGS (a DENY implies nothing: a DENY of
//     READ leaves DESCRIBE as the ALLOWs say).
// Hosts are not part of an ACL (every ACL is Kafka's --allow-host '*').
//
// The authorizer is immutable after Load and shared by every connection.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::kafka::server {

// Kafka's AclOperation, less UNKNOWN and ANY (which are filters, not
// operations an ACL grants).
enum class AclOperation : uint8_t {
  kAll,
  kRead,
  kWrite,
  kCreate,
  kDelete,
  kAlter,
  kDescribe,
  kClusterAction,
  kDescribeConfigs,
  kAlterConfigs,
  kIdempotentWrite,
};

enum class AclResourceType : uint8_t { kTopic, kGroup, kCluster };

enum class AclPatternType : uint8_t { kLiteral, kPrefixed };

// Kafka's spelling: "READ", "DESCRIBE_CONFIGS"; "topic", "group", "cluster".
std::string_view AclOperationName(AclOperation op);
std::string_view AclResourceTypeName(AclResourceType type);

// The principal of a connection that did not authenticate (no SASL), as
// Kafka names it.
inline constexpr std::string_view kAnonymousPrincipal = "User:ANONYMOUS";
// The one cluster resource's name, as Kafka names it.
inline constexpr std::string_view kClusterResourceName = "kafka-cluster";

struct AclEntry {
  bool allow = true;
  std::string principal;  // "User:alice" or "User:*"
  AclOperation operation = AclOperation::kRead;
  AclResourceType resource_type = AclResourceType::kTopic;
  AclPatternType pattern_type = AclPatternType::kLiteral;
  std::string resource_name;  // "*" (literal): every resource of the type
  int line = 0;               // in the file, for messages
};

class Authorizer {
 public:
  // Reads an ACL file; errors name the file, the line and what is wrong
  // (kInvalidArgument).
  [[nodiscard]] static Result<std::shared_ptr<const Authorizer>> Load(const std::string& path);
  // Parses ACL lines; `origin` names where they came from in messages
  // (e.g. "--acl-file /etc/thaw/acls").
  [[nodiscard]] static Result<std::shared_ptr<const Authorizer>> Parse(std::string_view text,
                                                                       const std::string& origin);
  explicit Authorizer(std::vector<AclEntry> entries) : entries_(std::move(entries)) {}

  // Whether `principal` may do `op` on the resource `type` `name`.
  [[nodiscard]] bool Authorize(std::string_view principal, AclOperation op, AclResourceType type,
                               std::string_view name) const;

  const std::vector<AclEntry>& entries() const { return entries_; }

 private:
  std::vector<AclEntry> entries_;
};

}  // namespace thaw::kafka::server
