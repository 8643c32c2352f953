// Test tool for the schema registry client (registry/client.h, issue 23),
// which no command uses yet: tests/integration/test_schema_registry.py drives
// it against a real registry (AxonOps Schema Registry) next to
// confluent-kafka's SchemaRegistryClient and serializers.
//
//   thaw_registry_tool URL [KEY=VALUE ...] by-id ID
//   thaw_registry_tool URL [KEY=VALUE ...] latest SUBJECT
//   thaw_registry_tool URL [KEY=VALUE ...] register SUBJECT FILE TYPE [normalize]
//   thaw_registry_tool URL [KEY=VALUE ...] lookup SUBJECT FILE TYPE [normalize]
//   thaw_registry_tool frame ID [INDEX,...|-] BODY_HEX         (protobuf when indexes are given)
//   thaw_registry_tool parse-framing HEX [protobuf]
// URL may be several, comma-separated; KEY=VALUE are Confluent's client
// settings (basic.auth.user.info, basic.auth.credentials.source,
// bearer.auth.token, ssl.ca.location, max.retries, ...). TYPE: AVRO,
// PROTOBUF or JSON; FILE holds the schema text ('-': stdin).
//
// Prints one JSON object on stdout and exits 0; on an error prints
// "thaw_registry_tool: <message>" on stderr and exits 1 (2 on bad usage).
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "thaw/registry/client.h"

namespace {

using json = nlohmann::json;
using thaw::Result;
using thaw::Status;
namespace registry = thaw::registry;

int Usage() {
  std::cerr << "usage: thaw_registry_tool URL [KEY=VALUE ...] by-id ID | latest SUBJECT | register SUBJECT FILE "
               "TYPE [normalize] | lookup SUBJECT FILE TYPE [normalize]\n"
               "       thaw_registry_tool frame ID INDEXES|- BODY_HEX | parse-framing HEX [protobuf]\n";
  return 2;
}

int Fail(const Status& st) {
  std::cerr << "thaw_registry_tool: " << st.message() << "\n";
  return 1;
}

json SchemaJson(const registry::Schema& s) {
  json refs = json::array();
  for (const auto& r : s.references) refs.push_back({{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
  return {{"schema_type", std::string(registry::SchemaTypeName(s.type))}, {"schema", s.text}, {"references", refs}};
}

Result<std::string> ReadText(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::IOError("cannot read the schema file {}", path);
    text << in.rdbuf();
  }
  return text.str();
}

std::string Hex(std::string_view bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

Result<std::string> Unhex(std::string_view hex) {
  if (hex.size() % 2 != 0) return Status::Invalid("odd-length hex");
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

int Run(const std::vector<std::string>& args) {
  if (args.empty()) return Usage();
  if (args[0] == "parse-framing" && (args.size() == 2 || args.size() == 3)) {
    auto bytes = Unhex(args[1]);
    if (!bytes.ok()) return Fail(bytes.status());
    auto f = registry::ParseFraming(*bytes, args.size() == 3 && args[2] == "protobuf");
    if (!f.ok()) return Fail(f.status());
    std::cout << json{{"schema_id", f->schema_id},
                      {"message_indexes", f->message_indexes},
                      {"body_offset", f->body_offset},
                      {"body_hex", Hex(std::string_view(*bytes).substr(f->body_offset))}}
                     .dump()
              << "\n";
    return 0;
  }
  if (args[0] == "frame" && args.size() == 4) {
    std::vector<int32_t> indexes;
    bool protobuf = args[2] != "-";
    if (protobuf) {
      std::stringstream list(args[2]);
      for (std::string item; std::getline(list, item, ',');) indexes.push_back(std::stoi(item));
    }
    auto body = Unhex(args[3]);
    if (!body.ok()) return Fail(body.status());
    std::cout << json{{"hex", Hex(registry::Frame(std::stoi(args[1]), indexes, protobuf, *body))}}.dump() << "\n";
    return 0;
  }
  thaw::storage::PropertyMap props{{"url", args[0]}};
  size_t i = 1;
  for (; i < args.size() && args[i].find('=') != std::string::npos; ++i) {
    auto eq = args[i].find('=');
    props[args[i].substr(0, eq)] = args[i].substr(eq + 1);
  }
  if (i >= args.size()) return Usage();
  auto options = registry::RegistryOptions::FromProperties(props, "thaw_registry_tool");
  if (!options.ok()) return Fail(options.status());
  auto client = registry::SchemaRegistry::Make(*options);
  if (!client.ok()) return Fail(client.status());
  const std::string& cmd = args[i];
  const size_t n = args.size() - i - 1;
  if (cmd == "by-id" && n == 1) {
    auto s = (*client)->SchemaById(std::stoi(args[i + 1]));
    if (!s.ok()) return Fail(s.status());
    json out = SchemaJson(*s);
    out["id"] = std::stoi(args[i + 1]);
    // A second read comes from the cache: no request.
    int64_t before = (*client)->http_requests();
    auto again = (*client)->SchemaById(std::stoi(args[i + 1]));
    out["cached"] = again.ok() && *again == *s && (*client)->http_requests() == before;
    std::cout << out.dump() << "\n";
    return 0;
  }
  if (cmd == "latest" && n == 1) {
    auto v = (*client)->LatestVersion(args[i + 1]);
    if (!v.ok()) return Fail(v.status());
    json out = SchemaJson(v->schema);
    out["subject"] = v->subject;
    out["id"] = v->id;
    out["version"] = v->version;
    std::cout << out.dump() << "\n";
    return 0;
  }
  if ((cmd == "register" || cmd == "lookup") && (n == 3 || n == 4)) {
    auto text = ReadText(args[i + 2]);
    if (!text.ok()) return Fail(text.status());
    auto type = registry::ParseSchemaType(args[i + 3]);
    if (!type.ok()) return Fail(type.status());
    registry::Schema schema{*type, *text, {}};
    bool normalize = n == 4 && args[i + 4] == "normalize";
    if (cmd == "register") {
      auto id = (*client)->Register(args[i + 1], schema, normalize);
      if (!id.ok()) return Fail(id.status());
      std::cout << json{{"id", *id}}.dump() << "\n";
      return 0;
    }
    auto v = (*client)->Lookup(args[i + 1], schema, normalize);
    if (!v.ok()) return Fail(v.status());
    std::cout << json{{"id", v->id}, {"version", v->version}, {"subject", v->subject}}.dump() << "\n";
    return 0;
  }
  return Usage();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return Run(args);
  } catch (const std::exception& e) {  // std::stoi on a bad argument
    std::cerr << "thaw_registry_tool: bad argument: " << e.what() << "\n";
    return 2;
  }
}
