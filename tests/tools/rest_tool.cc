// Test tool for the REST catalog's write primitives (archive, issue 10), which
// no command uses yet: tests/integration/test_rest_catalog.py drives it
// against Apache Iceberg's RESTCatalogServer.
//
//   thaw_rest_tool URI [KEY=VALUE ...] create-namespace NS
//   thaw_rest_tool URI [KEY=VALUE ...] create-table NS.TABLE REQUEST_JSON
//   thaw_rest_tool URI [KEY=VALUE ...] commit NS.TABLE REQUIREMENTS_JSON UPDATES_JSON
//   thaw_rest_tool URI [KEY=VALUE ...] load NS.TABLE
//
// Prints one JSON object: {"ok": true, "metadata_location", "snapshot_id", "table_uuid"} or
// {"ok": false, "code": "<status code name>", "message": "..."}; exit status 0 either way (2 on bad usage).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "thaw/catalog/rest_catalog.h"

namespace {

using json = nlohmann::json;
using thaw::Result;
using thaw::Status;

void PrintStatus(const Status& st) {
  std::cout << json{{"ok", false}, {"code", thaw::StatusCodeName(st.code())}, {"message", st.message()}}.dump()
            << "\n";
}

void PrintTable(const thaw::iceberg::Table& t) {
  json out = {{"ok", true}, {"metadata_location", t.metadata_location}, {"table_uuid", t.metadata.table_uuid}};
  out["snapshot_id"] = t.metadata.current_snapshot_id ? json(*t.metadata.current_snapshot_id) : json(nullptr);
  std::cout << out.dump() << "\n";
}

int Usage() {
  std::cerr << "usage: thaw_rest_tool URI [KEY=VALUE ...] create-namespace NS | create-table NS.T REQUEST | "
               "commit NS.T REQUIREMENTS UPDATES | load NS.T\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage();
  thaw::catalog::CatalogConfig config;
  config.type = "rest";
  config.name = "rest";
  config.uri = args[0];
  size_t i = 1;
  for (; i < args.size() && args[i].find('=') != std::string::npos; ++i) {
    auto eq = args[i].find('=');
    config.properties[args[i].substr(0, eq)] = args[i].substr(eq + 1);
  }
  if (i >= args.size()) return Usage();
  std::string cmd = args[i++];
  std::vector<std::string> rest(args.begin() + static_cast<long>(i), args.end());
  auto catalog = thaw::catalog::RestCatalog::Make(config);
  if (!catalog.ok()) {
    PrintStatus(catalog.status());
    return 0;
  }
  auto& c = **catalog;
  if (cmd == "create-namespace" && rest.size() == 1) {
    auto id = thaw::catalog::TableIdentifier::Parse(rest[0] + ".x");
    if (!id.ok()) return Usage();
    Status st = c.CreateNamespace(id->ns);
    if (st.ok()) {
      std::cout << json{{"ok", true}}.dump() << "\n";
    } else {
      PrintStatus(st);
    }
    return 0;
  }
  if (rest.empty()) return Usage();
  auto id = thaw::catalog::TableIdentifier::Parse(rest[0]);
  if (!id.ok()) return Usage();
  Result<thaw::iceberg::Table> table = Status::Invalid("no command");
  if (cmd == "load" && rest.size() == 1) {
    table = c.LoadTable(*id);
  } else if (cmd == "create-table" && rest.size() == 2) {
    table = c.CreateTable(*id, json::parse(rest[1]));
  } else if (cmd == "commit" && rest.size() == 3) {
    table = c.CommitTable(*id, json::parse(rest[1]), json::parse(rest[2]));
  } else {
    return Usage();
  }
  if (table.ok()) {
    PrintTable(*table);
  } else {
    PrintStatus(table.status());
  }
  return 0;
}
