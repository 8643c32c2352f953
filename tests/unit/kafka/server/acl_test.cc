// ACL files and decisions (kafka/server/acl.h): Kafka's StandardAuthorizer
// semantics (deny wins, no match denies, READ/WRITE/DELETE/ALTER imply
// DESCRIBE for ALLOWs only, ALL matches everything), literal, prefixed and
// wildcard resources, the User:* principal, and the file's errors.
#include "thaw/kafka/server/acl.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace thaw::kafka::server {
namespace {

using Op = AclOperation;
using Type = AclResourceType;

std::shared_ptr<const Authorizer> Acls(std::string_view text) {
  auto a = Authorizer::Parse(text, "test");
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? *a : std::make_shared<const Authorizer>(std::vector<AclEntry>{});
}

std::string ParseError(std::string_view text) {
  auto a = Authorizer::Parse(text, "--acl-file acls");
  EXPECT_FALSE(a.ok()) << text;
  if (a.ok()) return "";
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  return a.status().message();
}

TEST(Acl, LiteralTopicAndGroup) {
  auto a = Acls(
      "# alice reads orders with group billing\n"
      "allow User:alice READ topic orders\n"
      "allow User:alice READ group billing\n");
  EXPECT_TRUE(a->Authorize("User:alice", Op::kRead, Type::kTopic, "orders"));
  EXPECT_TRUE(a->Authorize("User:alice", Op::kRead, Type::kGroup, "billing"));
  // Another topic, another group, another user, another resource type.
  EXPECT_FALSE(a->Authorize("User:alice", Op::kRead, Type::kTopic, "orders2"));
  EXPECT_FALSE(a->Authorize("User:alice", Op::kRead, Type::kTopic, "order"));
  EXPECT_FALSE(a->Authorize("User:alice", Op::kRead, Type::kGroup, "orders"));
  EXPECT_FALSE(a->Authorize("User:alice", Op::kRead, Type::kTopic, "billing"));
  EXPECT_FALSE(a->Authorize("User:bob", Op::kRead, Type::kTopic, "orders"));
  EXPECT_FALSE(a->Authorize("User:Alice", Op::kRead, Type::kTopic, "orders"));  // principals are case-sensitive
  EXPECT_FALSE(a->Authorize(kAnonymousPrincipal, Op::kRead, Type::kTopic, "orders"));
  // Other operations are not granted by READ (but DESCRIBE is implied).
  EXPECT_FALSE(a->Authorize("User:alice", Op::kWrite, Type::kTopic, "orders"));
  EXPECT_FALSE(a->Authorize("User:alice", Op::kDelete, Type::kGroup, "billing"));
  EXPECT_FALSE(a->Authorize("User:alice", Op::kDescribeConfigs, Type::kTopic, "orders"));
}

TEST(Acl, ImplicationsAreKafkas) {
  auto a = Acls(
      "allow User:r READ topic t\n"
      "allow User:w WRITE topic t\n"
      "allow User:d DELETE topic t\n"
      "allow User:al ALTER topic t\n"
      "allow User:ds DESCRIBE topic t\n"
      "allow User:ac ALTER_CONFIGS topic t\n"
      "allow User:all ALL topic t\n");
  for (const char* p : {"User:r", "User:w", "User:d", "User:al", "User:ds", "User:all"}) {
    EXPECT_TRUE(a->Authorize(p, Op::kDescribe, Type::kTopic, "t")) << p;
  }
  EXPECT_FALSE(a->Authorize("User:ac", Op::kDescribe, Type::kTopic, "t"));
  EXPECT_TRUE(a->Authorize("User:ac", Op::kDescribeConfigs, Type::kTopic, "t"));
  EXPECT_FALSE(a->Authorize("User:ds", Op::kRead, Type::kTopic, "t"));  // DESCRIBE implies nothing
  EXPECT_FALSE(a->Authorize("User:r", Op::kDescribeConfigs, Type::kTopic, "t"));
  for (Op op : {Op::kRead, Op::kWrite, Op::kDelete, Op::kDescribe, Op::kDescribeConfigs, Op::kAlterConfigs}) {
    EXPECT_TRUE(a->Authorize("User:all", op, Type::kTopic, "t")) << AclOperationName(op);
  }
}

TEST(Acl, DenyWinsAndImpliesNothing) {
  auto a = Acls(
      "allow User:* ALL topic *\n"
      "deny User:eve READ topic secret\n"
      "deny User:mallory ALL topic prefixed:secret\n"
      "deny User:* DESCRIBE topic hidden\n");
  EXPECT_TRUE(a->Authorize("User:eve", Op::kRead, Type::kTopic, "public"));
  EXPECT_FALSE(a->Authorize("User:eve", Op::kRead, Type::kTopic, "secret"));
  // A DENY of READ leaves DESCRIBE to the ALLOWs, as in Kafka.
  EXPECT_TRUE(a->Authorize("User:eve", Op::kDescribe, Type::kTopic, "secret"));
  EXPECT_FALSE(a->Authorize("User:mallory", Op::kDescribe, Type::kTopic, "secret"));
  EXPECT_FALSE(a->Authorize("User:mallory", Op::kRead, Type::kTopic, "secrets"));
  EXPECT_TRUE(a->Authorize("User:mallory", Op::kRead, Type::kTopic, "public"));
  // A DENY of DESCRIBE does not deny READ (Kafka's rule: DENYs match their
  // own operation or ALL).
  EXPECT_FALSE(a->Authorize("User:eve", Op::kDescribe, Type::kTopic, "hidden"));
  EXPECT_TRUE(a->Authorize("User:eve", Op::kRead, Type::kTopic, "hidden"));
  // The order of lines does not matter.
  auto b = Acls("deny User:eve READ topic secret\nallow User:* ALL topic *\n");
  EXPECT_FALSE(b->Authorize("User:eve", Op::kRead, Type::kTopic, "secret"));
}

TEST(Acl, PrefixedWildcardAndAnyUser) {
  auto a = Acls(
      "allow User:* DESCRIBE topic prefixed:logs.\n"
      "allow User:bob READ topic *\n"
      "allow User:* READ group prefixed:team-\n"
      "allow User:ANONYMOUS READ topic open\n");
  EXPECT_TRUE(a->Authorize("User:carol", Op::kDescribe, Type::kTopic, "logs.app"));
  EXPECT_TRUE(a->Authorize("User:carol", Op::kDescribe, Type::kTopic, "logs."));
  EXPECT_TRUE(a->Authorize(kAnonymousPrincipal, Op::kDescribe, Type::kTopic, "logs.app"));  // User:* is everyone
  EXPECT_FALSE(a->Authorize("User:carol", Op::kDescribe, Type::kTopic, "logs"));
  EXPECT_FALSE(a->Authorize("User:carol", Op::kRead, Type::kTopic, "logs.app"));
  EXPECT_TRUE(a->Authorize("User:bob", Op::kRead, Type::kTopic, "anything"));
  EXPECT_TRUE(a->Authorize("User:bob", Op::kDescribe, Type::kTopic, "anything"));
  EXPECT_FALSE(a->Authorize("User:bob", Op::kRead, Type::kGroup, "anything"));  // topics only
  EXPECT_TRUE(a->Authorize("User:dave", Op::kRead, Type::kGroup, "team-a"));
  EXPECT_FALSE(a->Authorize("User:dave", Op::kRead, Type::kGroup, "team"));
  EXPECT_TRUE(a->Authorize(kAnonymousPrincipal, Op::kRead, Type::kTopic, "open"));
  EXPECT_FALSE(a->Authorize("User:bob2", Op::kRead, Type::kTopic, "open"));
  // A literal "*" is a wildcard only as the whole name; a literal name is
  // never a prefix.
  auto b = Acls("allow User:x READ topic logs\n");
  EXPECT_FALSE(b->Authorize("User:x", Op::kRead, Type::kTopic, "logs.app"));
  EXPECT_FALSE(b->Authorize("User:x", Op::kRead, Type::kTopic, "*"));
}

TEST(Acl, ClusterResource) {
  auto a = Acls("allow User:admin DESCRIBE cluster\nallow User:ops DESCRIBE_CONFIGS cluster kafka-cluster\n");
  EXPECT_TRUE(a->Authorize("User:admin", Op::kDescribe, Type::kCluster, kClusterResourceName));
  EXPECT_FALSE(a->Authorize("User:admin", Op::kDescribe, Type::kTopic, kClusterResourceName));
  EXPECT_TRUE(a->Authorize("User:ops", Op::kDescribeConfigs, Type::kCluster, kClusterResourceName));
  EXPECT_FALSE(a->Authorize("User:ops", Op::kDescribe, Type::kCluster, kClusterResourceName));
}

TEST(Acl, SpellingsAndSeveralOperations) {
  auto a = Acls(
      "  ALLOW   User:alice   Read,Describe   TOPIC   orders   \r\n"
      "\n"
      "   # indented comment\n"
      "Allow User:bob DescribeConfigs Topic literal:orders\n"
      "allow User:carol describe-configs group literal:prefixed:x\n");
  ASSERT_EQ(a->entries().size(), 4u);
  EXPECT_EQ(a->entries()[0].line, 1);
  EXPECT_EQ(a->entries()[1].line, 1);
  EXPECT_EQ(a->entries()[2].line, 4);
  EXPECT_TRUE(a->Authorize("User:alice", Op::kRead, Type::kTopic, "orders"));
  EXPECT_TRUE(a->Authorize("User:bob", Op::kDescribeConfigs, Type::kTopic, "orders"));
  // literal: keeps a group named like a pattern literal.
  EXPECT_TRUE(a->Authorize("User:carol", Op::kDescribeConfigs, Type::kGroup, "prefixed:x"));
  EXPECT_FALSE(a->Authorize("User:carol", Op::kDescribeConfigs, Type::kGroup, "prefixed:xy"));
}

TEST(Acl, ErrorsNameTheLineAndWhatIsWrong) {
  const std::string ok = "allow User:a READ topic t\n";
  struct Case {
    std::string text, message;
  };
  const Case cases[] = {
      {ok + "permit User:a READ topic t\n", "--acl-file acls line 2: 'permit' is neither allow nor deny"},
      {"allow alice READ topic t\n", "line 1: principal 'alice' is not User:NAME or User:*"},
      {"allow Group:a READ topic t\n", "principal 'Group:a' is not User:NAME"},
      {"allow User: READ topic t\n", "principal 'User:' is not User:NAME"},
      {"\n\nallow User:a REED topic t\n", "line 3: 'REED' is not an operation (ALL, READ, WRITE"},
      {"allow User:a READ,,DESCRIBE topic t\n", "'READ,,DESCRIBE' is not an operation"},
      {"allow User:a READ table t\n", "resource type 'table' is not topic, group or cluster"},
      {"allow User:a READ topic\n", "line 1: which topic? give its name, prefixed:PREFIX or *"},
      {"allow User:a READ\n", "line 1: 'allow User:a READ' is incomplete"},
      {"allow User:a READ topic t extra\n", "unexpected 'extra' after the resource"},
      {"allow User:a DESCRIBE cluster mine\n", "unexpected 'mine' after the resource"},
      {"allow User:a READ topic prefixed:\n", "'prefixed:' names no topic"},
      {"allow User:a READ topic prefixed:*\n", "'prefixed:*' names no topic"},
      {"allow User:a READ topic orders!\n", "'orders!' can never match: a Kafka topic name has only"},
      {"# nothing\n\n", "--acl-file acls: no ACLs, so every request would be denied"},
      {"", "no ACLs"},
  };
  for (const Case& c : cases) {
    const std::string message = ParseError(c.text);
    EXPECT_NE(message.find(c.message), std::string::npos) << "text: " << c.text << "\nmessage: " << message;
  }
}

TEST(Acl, LoadReadsAFileAndNamesIt) {
  const auto dir = std::filesystem::temp_directory_path() / ("thaw-acl-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "acls").string();
  {
    std::ofstream out(path);
    out << "allow User:alice READ topic orders\nallow User:bob READ topc orders\n";
  }
  auto bad = Authorizer::Load(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("--acl-file " + path + " line 2: resource type 'topc'", 0), 0u)
      << bad.status().message();
  {
    std::ofstream out(path);
    out << "allow User:alice READ topic orders\n";
  }
  auto good = Authorizer::Load(path);
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_TRUE((*good)->Authorize("User:alice", Op::kRead, Type::kTopic, "orders"));
  auto missing = Authorizer::Load((dir / "missing").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("cannot read the file"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace thaw::kafka::server
