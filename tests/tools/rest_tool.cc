// Test tool for the REST catalog's write primitives (archive, issue 10), which
// no command uses yet: tests/integration/test_rest_catalog.py drives it
// against Apache Iceberg's RESTCatalogServer.
//
//   thaw_rest_tool URI [KEY=VALUE ...] create-namespace NS
//   thaw_rest_tool URI [KEY=VALUE ...] create-table NS.TABLE REQUEST_JSON
//   thaw_rest_tool URI [KEY=VALUE ...] commit NS.TABLE REQUIREMENTS_JSON UPDATES_JSON
//   thaw_rest_tool URI [KEY=VALUE ...] load NS.TABLE
// Through the Catalog interface (Catalog::CreateTable / CommitTable; URI may
// also be a SQL catalog's, e.g. sqlite:////path/catalog.db with warehouse=...; catalog-name=NAME picks
// the JDBC catalog name):
//   thaw_rest_tool URI [KEY=VALUE ...] create NS.TABLE CREATE_JSON
//       CREATE_JSON: {"schema", "partition-spec", "sort-order", "properties", "location", "format-version"}
//   thaw_rest_tool URI [KEY=VALUE ...] append NS.TABLE [PARENT|none]
//       commits an append snapshot (manifest list not written) onto the loaded table, requiring main at
//       PARENT (default: the loaded current snapshot)
//   thaw_rest_tool URI [KEY=VALUE ...] set-properties NS.TABLE KEY=VALUE...
//
// Prints one JSON object: {"ok": true, "metadata_location", "snapshot_id", "table_uuid"} or
// {"ok": false, "code": "<status code name>", "message": "..."}; exit status 0 either way (2 on bad usage).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "thaw/catalog/catalog_config.h"
#include "thaw/catalog/rest_catalog.h"
#include "thaw/iceberg/table_update.h"

namespace {

using json = nlohmann::json;
using thaw::Result;
using thaw::Status;

void PrintStatus(const Status& st) {
  std::cout << json{{"ok", false}, {"code", thaw::StatusCodeName(st.code())}, {"message", st.message()}}.dump() << "\n";
}

void PrintTable(const thaw::iceberg::Table& t) {
  json out = {{"ok", true}, {"metadata_location", t.metadata_location}, {"table_uuid", t.metadata.table_uuid}};
  out["snapshot_id"] = t.metadata.current_snapshot_id ? json(*t.metadata.current_snapshot_id) : json(nullptr);
  std::cout << out.dump() << "\n";
}

int Usage() {
  std::cerr << "usage: thaw_rest_tool URI [KEY=VALUE ...] create-namespace NS | create-table NS.T REQUEST | "
               "commit NS.T REQUIREMENTS UPDATES | load NS.T | create NS.T CREATE_JSON | append NS.T [PARENT|none] | "
               "set-properties NS.T K=V...\n";
  return 2;
}

// The typed commands, through the Catalog interface.
int Typed(thaw::catalog::CatalogConfig config, const std::string& cmd, const std::vector<std::string>& rest) {
  if (rest.empty()) return Usage();
  auto id = thaw::catalog::TableIdentifier::Parse(rest[0]);
  if (!id.ok()) return Usage();
  if (config.uri.rfind("http", 0) != 0) {
    config.type = "sql";
    config.name = "";
    if (auto it = config.properties.find("catalog-name"); it != config.properties.end()) {
      config.name = it->second;  // the JDBC catalog_name (a tool option, not a catalog property)
      config.properties.erase(it);
    }
  }
  config.properties["uri"] = config.uri;
  auto catalog = thaw::catalog::OpenCatalog(config);
  if (!catalog.ok()) {
    PrintStatus(catalog.status());
    return 0;
  }
  auto& c = **catalog;
  Result<thaw::iceberg::Table> table = Status::Invalid("no command");
  if (cmd == "create" && rest.size() == 2) {
    json j = json::parse(rest[1]);
    thaw::iceberg::TableCreate create;
    create.schema = j.at("schema");
    create.partition_spec = j.value("partition-spec", json());
    create.sort_order = j.value("sort-order", json());
    create.properties = j.value("properties", std::map<std::string, std::string>());
    create.location = j.value("location", std::string());
    create.format_version = j.value("format-version", 2);
    table = c.CreateTable(*id, create);
  } else if ((cmd == "append" && rest.size() <= 2) || cmd == "set-properties") {
    auto base = c.LoadTable(*id);
    if (!base.ok()) {
      PrintStatus(base.status());
      return 0;
    }
    const auto& md = base->metadata;
    std::vector<thaw::iceberg::TableRequirement> reqs = {
        thaw::iceberg::TableRequirement::AssertTableUuid(md.table_uuid)};
    std::vector<thaw::iceberg::TableUpdate> updates;
    if (cmd == "append") {
      std::optional<int64_t> parent = md.current_snapshot_id;
      if (rest.size() == 2) parent = rest[1] == "none" ? std::nullopt : std::optional<int64_t>(std::stoll(rest[1]));
      thaw::iceberg::Snapshot s;
      s.snapshot_id = thaw::iceberg::NewSnapshotId();
      s.parent_snapshot_id = parent;
      s.sequence_number = md.last_sequence_number + 1;
      s.timestamp_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      s.manifest_list =
          fmt::format("{}/metadata/snap-{}-1-{}.avro", md.location, s.snapshot_id, thaw::iceberg::NewUuid());
      s.summary = {{"operation", "append"}, {"thaw.test", "rest_tool"}};
      s.schema_id = md.current_schema_id;
      if (md.format_version >= 3) {
        s.first_row_id = md.next_row_id.value_or(0);
        s.added_rows = 0;
      }
      reqs.push_back(thaw::iceberg::TableRequirement::AssertRefSnapshotId("main", parent));
      updates = {thaw::iceberg::TableUpdate::AddSnapshot(s),
                 thaw::iceberg::TableUpdate::SetBranch("main", s.snapshot_id)};
    } else {
      std::map<std::string, std::string> props;
      for (size_t k = 1; k < rest.size(); ++k) {
        auto eq = rest[k].find('=');
        if (eq == std::string::npos) return Usage();
        props[rest[k].substr(0, eq)] = rest[k].substr(eq + 1);
      }
      updates = {thaw::iceberg::TableUpdate::SetProperties(props)};
    }
    table = c.CommitTable(*id, *base, reqs, updates);
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
  if (cmd == "create" || cmd == "append" || cmd == "set-properties") return Typed(config, cmd, rest);
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
