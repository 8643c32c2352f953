#include "thaw/kafka/server/acl.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

namespace thaw::kafka::server {

namespace {

constexpr std::array<std::pair<AclOperation, std::string_view>, 11> kOperations{{
    {AclOperation::kAll, "ALL"},
    {AclOperation::kRead, "READ"},
    {AclOperation::kWrite, "WRITE"},
    {AclOperation::kCreate, "CREATE"},
    {AclOperation::kDelete, "DELETE"},
    {AclOperation::kAlter, "ALTER"},
    {AclOperation::kDescribe, "DESCRIBE"},
    {AclOperation::kClusterAction, "CLUSTER_ACTION"},
    {AclOperation::kDescribeConfigs, "DESCRIBE_CONFIGS"},
    {AclOperation::kAlterConfigs, "ALTER_CONFIGS"},
    {AclOperation::kIdempotentWrite, "IDEMPOTENT_WRITE"},
}};

constexpr std::string_view kFormat =
    "one ACL a line: allow|deny PRINCIPAL OPERATION[,OPERATION...] topic|group|cluster NAME|prefixed:PREFIX|*";

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// READ, read, Read; DESCRIBE_CONFIGS, DescribeConfigs (kafka-acls' spelling),
// describe-configs.
std::optional<AclOperation> ParseOperation(std::string_view text) {
  std::string key;
  for (char c : text) {
    if (c != '_' && c != '-') key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  for (const auto& [op, name] : kOperations) {
    std::string plain;
    for (char c : name) {
      if (c != '_') plain += c;
    }
    if (plain == key) return op;
  }
  return std::nullopt;
}

std::string OperationList() {
  std::string out;
  for (const auto& [op, name] : kOperations) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool LegalTopicChars(std::string_view name) {
  return name.size() <= 249 && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
         });
}

// One non-comment line, split on blanks, into *out.
Status ParseLine(const std::vector<std::string>& f, const std::string& where, AclEntry* out) {
  if (f.size() < 4) {
    std::string line;
    for (const auto& w : f) line += (line.empty() ? "" : " ") + w;
    return Status::Invalid("{}: '{}' is incomplete ({})", where, line, kFormat);
  }
  const std::string verb = Upper(f[0]);
  if (verb != "ALLOW" && verb != "DENY") {
    return Status::Invalid("{}: '{}' is neither allow nor deny ({})", where, f[0], kFormat);
  }
  out->allow = verb == "ALLOW";
  const size_t colon = f[1].find(':');
  if (colon == std::string::npos || f[1].substr(0, colon) != "User" || colon + 1 == f[1].size()) {
    return Status::Invalid(
        "{}: principal '{}' is not User:NAME or User:* (e.g. User:alice, the user a SASL "
        "client authenticates as; User:ANONYMOUS without SASL)",
        where, f[1]);
  }
  out->principal = f[1];
  // f[2], the operations, are the caller's (one entry each).
  const std::string type = Upper(f[3]);
  if (type == "TOPIC") {
    out->resource_type = AclResourceType::kTopic;
  } else if (type == "GROUP") {
    out->resource_type = AclResourceType::kGroup;
  } else if (type == "CLUSTER") {
    out->resource_type = AclResourceType::kCluster;
  } else {
    return Status::Invalid("{}: resource type '{}' is not topic, group or cluster", where, f[3]);
  }
  const size_t want = out->resource_type == AclResourceType::kCluster ? 4 : 5;
  if (f.size() > 5 || (f.size() == 5 && want == 4 && f[4] != "*" && f[4] != kClusterResourceName)) {
    return Status::Invalid("{}: unexpected '{}' after the resource ({}; the cluster has no name, or {})", where,
                           f.size() > 5 ? f[5] : f[4], kFormat, kClusterResourceName);
  }
  if (f.size() < want) {
    return Status::Invalid("{}: which {}? give its name, prefixed:PREFIX or * ({})", where, f[3], kFormat);
  }
  if (out->resource_type == AclResourceType::kCluster) {
    out->pattern_type = AclPatternType::kLiteral;
    out->resource_name = std::string(kClusterResourceName);
    return Status::OK();
  }
  // NAME, literal:NAME (a group whose name starts with "prefixed:"),
  // prefixed:PREFIX, or * (literal: every resource of the type).
  std::string name = f[4];
  out->pattern_type = AclPatternType::kLiteral;
  const size_t colon_at = name.find(':');
  const std::string head = colon_at == std::string::npos ? "" : Upper(name.substr(0, colon_at));
  if (head == "PREFIXED" || head == "LITERAL") {
    name = name.substr(colon_at + 1);
    if (head == "PREFIXED") out->pattern_type = AclPatternType::kPrefixed;
    if (name.empty() || (head == "PREFIXED" && name == "*")) {
      return Status::Invalid("{}: '{}' names no {} (prefixed:PREFIX, a name, or * for every {})", where, f[4], f[3],
                             f[3]);
    }
  }
  if (out->resource_type == AclResourceType::kTopic && name != "*" && !LegalTopicChars(name)) {
    return Status::Invalid(
        "{}: '{}' can never match: a Kafka topic name has only letters, digits, '.', '_' and "
        "'-' (at most 249)",
        where, name);
  }
  out->resource_name = std::move(name);
  return Status::OK();
}

}  // namespace

std::string_view AclOperationName(AclOperation op) {
  for (const auto& [o, name] : kOperations) {
    if (o == op) return name;
  }
  return "UNKNOWN";
}

std::string_view AclResourceTypeName(AclResourceType type) {
  switch (type) {
    case AclResourceType::kTopic:
      return "topic";
    case AclResourceType::kGroup:
      return "group";
    case AclResourceType::kCluster:
      return "cluster";
  }
  return "unknown";
}

Result<std::shared_ptr<const Authorizer>> Authorizer::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid("--acl-file {}: cannot read the file", path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Invalid("--acl-file {}: reading failed", path);
  return Parse(text.str(), "--acl-file " + path);
}

Result<std::shared_ptr<const Authorizer>> Authorizer::Parse(std::string_view text, const std::string& origin) {
  std::vector<AclEntry> entries;
  int line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    std::vector<std::string> fields;
    std::istringstream words{std::string(line)};
    for (std::string w; words >> w;) fields.push_back(w);
    if (fields.empty() || fields[0][0] == '#') continue;
    const std::string where = fmt::format("{} line {}", origin, line_no);
    AclEntry entry;
    entry.line = line_no;
    RETURN_NOT_OK(ParseLine(fields, where, &entry));
    // READ,DESCRIBE: one entry per operation.
    const std::string& ops = fields[2];
    for (size_t start = 0; start <= ops.size();) {
      const size_t comma = std::min(ops.find(',', start), ops.size());
      const std::string one = ops.substr(start, comma - start);
      start = comma + 1;
      auto op = ParseOperation(one);
      if (!op) {
        return Status::Invalid("{}: '{}' is not an operation ({})", where, one.empty() ? ops : one, OperationList());
      }
      entry.operation = *op;
      entries.push_back(entry);
    }
  }
  if (entries.empty()) {
    return Status::Invalid(
        "{}: no ACLs, so every request would be denied (add allow lines: {}; without --acl-file "
        "every client may read everything)",
        origin, kFormat);
  }
  return std::make_shared<const Authorizer>(std::move(entries));
}

bool Authorizer::Authorize(std::string_view principal, AclOperation op, AclResourceType type,
                           std::string_view name) const {
  bool allowed = false;
  for (const AclEntry& e : entries_) {
    if (e.resource_type != type) continue;
    if (e.principal != principal && !(e.principal == "User:*" && principal.starts_with("User:"))) continue;
    const bool resource_matches = e.pattern_type == AclPatternType::kPrefixed
                                      ? name.starts_with(e.resource_name)
                                      : e.resource_name == "*" || e.resource_name == name;
    if (!resource_matches) continue;
    bool operation_matches = e.operation == AclOperation::kAll || e.operation == op;
    if (!operation_matches && e.allow) {
      // Kafka's implications, for ALLOWs only.
      if (op == AclOperation::kDescribe) {
        operation_matches = e.operation == AclOperation::kRead || e.operation == AclOperation::kWrite ||
                            e.operation == AclOperation::kDelete || e.operation == AclOperation::kAlter;
      } else if (op == AclOperation::kDescribeConfigs) {
        operation_matches = e.operation == AclOperation::kAlterConfigs;
      }
    }
    if (!operation_matches) continue;
    if (!e.allow) return false;  // a DENY wins
    allowed = true;
  }
  return allowed;
}

}  // namespace thaw::kafka::server
