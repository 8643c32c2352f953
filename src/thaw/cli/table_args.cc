#include "thaw/cli/table_args.h"

#include <cctype>
#include <charconv>
#include <cstdio>

#include "thaw/cli/config_file.h"
#include "thaw/records/read_summary.h"
#include "thaw/common/time_parse.h"
#include "thaw/common/units.h"

namespace thaw::cli {

void CatalogArgs::Register(CLI::App* app) {
  app->add_option("--catalog", catalog,
                  "Catalog URI (sqlite:////abs/path/catalog.db, postgresql://USER:PASS@HOST:PORT/DB, "
                  "http(s)://HOST:PORT[/PATH] for REST) or the NAME of a catalog in ~/.pyiceberg.yaml or "
                  "PYICEBERG_CATALOG__NAME__* variables (docs/catalogs.md)")
      ->type_name("URI|NAME");
  app->add_option("--catalog-property", properties,
                  "A catalog property KEY=VALUE (s3.endpoint=..., token=..., warehouse=...); repeatable; wins over "
                  "the config file's [catalog] table and ~/.pyiceberg.yaml")
      ->type_name("KEY=VALUE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app->add_option("--catalog-name", catalog_name,
                  "Catalog name inside a shared SQL catalog database (default: a named catalog's name, else the "
                  "only one in the database)");
  // Set by --config files from their [catalog] table (config_file.cc); not for the command line.
  app->add_option(std::string(kConfigCatalogPropertyFlag), config_properties)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("");
}

namespace {

Result<storage::PropertyMap> ParseConfigProperties(const std::vector<std::string>& args) {
  storage::PropertyMap out;
  for (const auto& a : args) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) return Status::Invalid("[catalog] setting '{}' is not KEY=VALUE", a);
    out[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return out;
}

}  // namespace

Result<catalog::CatalogConfig> CatalogArgs::Resolve() const {
  ASSIGN_OR_RAISE(auto file_props, ParseConfigProperties(config_properties));
  return catalog::ResolveCatalogConfig(catalog, properties, file_props, catalog_name);
}

Result<storage::PropertyMap> CatalogArgs::Properties() const {
  ASSIGN_OR_RAISE(auto props, ParseConfigProperties(config_properties));
  for (const auto& a : properties) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::Invalid("--catalog-property '{}': expected KEY=VALUE", eq == std::string::npos ? a : "=...");
    }
    props[a.substr(0, eq)] = a.substr(eq + 1);
  }
  return props;
}

void TableArgs::Register(CLI::App* app) {
  catalog.Register(app);
  app->add_option("--table", table, "Table as NAMESPACE.TABLE");
  app->add_option("--metadata", metadata,
                  "A table's metadata.json, for a table with no catalog (--catalog-property and [catalog] still "
                  "give its storage settings, e.g. s3.endpoint)")
      ->type_name("LOCATION");
  app->add_option("--snapshot", snapshot_id, "Read this snapshot id");
  app->add_option("--ref", ref, "Read the snapshot of this branch or tag");
  app->add_option("--as-of", as_of, "Read the snapshot current at this time (ISO-8601 or epoch ms; docs/cli.md#times)")
      ->check(TimeValidator())
      ->type_name("TIME");
  app->add_option("--layout", layout,
                  "auto (default: recognised from the table), or force one: thaw, redpanda, bufstream, aiven, "
                  "automq, kafka-connect, plain, thaw-row");
  app->add_option("--column", columns, "Override a column: FIELD=COLUMN (e.g. offset=kafka.offset); repeatable");
  app->add_option("--source-topic", source_topic,
                  "Read only the records of this source topic, for a table that holds several (a kafka_topic or "
                  "_kafka_metadata_topic column; docs/layouts.md); required for such a table")
      ->type_name("TOPIC");
  app->add_option("--spill-dir", spill_dir,
                  "Directory for sorting files not in offset order (default $TMPDIR or /tmp; a private "
                  "subdirectory, removed at exit)");
  app->add_option("--memory-budget", memory_budget,
                  "Memory for decoding row groups: SIZE (512MiB, 2GiB; a bare number is MiB; default 512MiB), "
                  "counted as decoded (not as stored); files that overlap in offset range beyond it are merged as "
                  "streams and sorted through --spill-dir")
      ->type_name("SIZE");
}

Result<std::shared_ptr<const iceberg::Table>> TableArgs::Load() const {
  if (!metadata.empty()) {
    if (!catalog.catalog.empty() || !table.empty()) {
      return Status::Invalid("give either --metadata PATH or --catalog URI --table NS.NAME, not both");
    }
    // The catalog properties (--catalog-property, [catalog]) still say how to reach the storage.
    ASSIGN_OR_RAISE(auto props, catalog.Properties());
    ASSIGN_OR_RAISE(auto t, catalog::LoadTableFromMetadata(metadata, props));
    return std::make_shared<const iceberg::Table>(std::move(t));
  }
  if (!catalog.given() || table.empty()) {
    return Status::Invalid(
        "which table? give --catalog URI|NAME --table NS.NAME, or --metadata PATH/TO/vN.metadata.json");
  }
  ASSIGN_OR_RAISE(auto id, catalog::TableIdentifier::Parse(table));
  ASSIGN_OR_RAISE(auto config, catalog.Resolve());
  ASSIGN_OR_RAISE(auto cat, catalog::OpenCatalog(config));
  ASSIGN_OR_RAISE(auto t, cat->LoadTable(id));
  return std::make_shared<const iceberg::Table>(std::move(t));
}

Status TableArgs::Apply(records::ReadOptions* o) const {
  int given = !snapshot_id.empty() + !ref.empty() + !as_of.empty();
  if (given > 1) return Status::Invalid("give at most one of --snapshot, --ref and --as-of");
  if (!snapshot_id.empty()) {
    int64_t id = 0;
    auto [p, ec] = std::from_chars(snapshot_id.data(), snapshot_id.data() + snapshot_id.size(), id);
    if (ec != std::errc() || p != snapshot_id.data() + snapshot_id.size()) {
      return Status::Invalid("--snapshot '{}' is not a snapshot id (a 64-bit integer)", snapshot_id);
    }
    o->snapshot.snapshot_id = id;
  }
  if (!ref.empty()) o->snapshot.ref = ref;
  if (!as_of.empty()) {
    ASSIGN_OR_RAISE(o->snapshot.as_of_ms, ParseTimeMs(as_of, "--as-of"));
  }
  if (!layout.empty() && layout != "auto") {
    const auto& names = records::LayoutNames();
    if (std::find(names.begin(), names.end(), layout) == names.end()) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return Status::Invalid("unknown --layout '{}': valid layouts are auto (the default), {}", layout, all);
    }
    o->layout.forced = layout;
  }
  for (const auto& c : columns) RETURN_NOT_OK(records::ParseColumnOverride(c, &o->layout.column_overrides));
  if (!source_topic.empty()) o->source_topic = source_topic;
  if (!spill_dir.empty()) o->spill_dir = spill_dir;
  if (!memory_budget.empty()) {
    ASSIGN_OR_RAISE(o->memory_budget, ParseMemoryBudget(memory_budget));
  }
  return Status::OK();
}

Result<int64_t> ParseMemoryBudget(const std::string& text) {
  ASSIGN_OR_RAISE(int64_t bytes, ParseByteSize(text, "--memory-budget", int64_t{1} << 20));
  if (bytes < (int64_t{1} << 20)) {
    return Status::Invalid("--memory-budget '{}' is too small: give at least 1MiB (e.g. 512MiB, 2GiB)", text);
  }
  return bytes;
}

Result<std::set<int32_t>> ParsePartitions(const std::string& text, std::string_view flag) {
  std::set<int32_t> out;
  auto number = [](std::string_view s, int32_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size() && *v >= 0;
  };
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view part =
        std::string_view(text).substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t dash = part.find('-');
    int32_t a = 0, b = 0;
    bool ok = dash == std::string_view::npos ? number(part, &a) && (b = a, true)
                                             : number(part.substr(0, dash), &a) && number(part.substr(dash + 1), &b);
    if (!ok || b < a || int64_t{b} - a >= 100000) {
      return Status::Invalid("{} '{}': '{}' is not a partition or an inclusive range of them (e.g. 0,3-5)", flag, text,
                             part);
    }
    for (int64_t p = a; p <= b; ++p) out.insert(static_cast<int32_t>(p));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

CLI::Option* AddPartitionsOption(CLI::App* app, const std::string& names, std::set<int32_t>* out,
                                 const std::string& help) {
  std::string flag = names.substr(0, names.find(','));  // the first name, for messages
  auto* opt = app->add_option_function<std::vector<std::string>>(
      names,
      [out, flag](const std::vector<std::string>& lists) {
        for (const auto& l : lists) {
          auto ps = ParsePartitions(l, flag);
          if (!ps.ok()) throw CLI::ValidationError(ps.status().message());
          out->insert(ps->begin(), ps->end());
        }
      },
      help);
  opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)->type_name("LIST");
  return opt;
}

namespace {

// CLI11 puts "--option: " before a validator's message: drop our own flag.
std::string WithoutFlag(const Status& st) {
  std::string m = st.message();
  size_t b = m.find_first_not_of(' ');
  return b == std::string::npos ? m : m.substr(b);
}

}  // namespace

CLI::Validator TimeValidator() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        auto t = ParseTimeMs(v, "");
        return t.ok() ? std::string() : WithoutFlag(t.status());
      },
      "");
}

void ReportError(const char* command, const Status& status, int* exit_code) {
  if (status.ok()) return;
  // Library messages (Parquet's, librdkafka's) can span lines or carry
  // control bytes; an error is one line.
  std::string line;
  for (unsigned char c : status.message()) {
    if (c == '\n') {
      if (!line.empty() && line.back() != ' ') line += "; ";
    } else if (c < 0x20 || c == 0x7f) {
      line += fmt::format("\\x{:02x}", c);
    } else {
      line += static_cast<char>(c);
    }
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == ';')) line.pop_back();
  std::fprintf(stderr, "thaw %s: error: %s\n", command, line.c_str());
  *exit_code = status.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

Result<int64_t> ParseOffset(const std::string& text, const char* flag) {
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    // Digits only: stoll would also take leading blanks and a sign.
    if (used == text.size() && std::isdigit(static_cast<unsigned char>(text[0]))) return static_cast<int64_t>(v);
  } catch (const std::exception&) {
  }
  return Status::Invalid("{} '{}' is not an offset (a non-negative integer)", flag, text);
}

Result<std::map<int32_t, int64_t>> PartitionEnds(const std::shared_ptr<const iceberg::Table>& table,
                                                 const records::ReadOptions& options) {
  ASSIGN_OR_RAISE(auto plan, records::ReadPlan::Make(table, options));
  std::map<int32_t, int64_t> ends;
  std::set<int32_t> unknown;  // files of several partitions, no statistics
  for (int32_t p : plan->partitions()) {
    ASSIGN_OR_RAISE(auto end, plan->ExactEnd(p));
    if (end) {
      ends[p] = *end;
    } else {
      unknown.insert(p);
    }
  }
  if (!unknown.empty()) {
    // Statistics of files holding several partitions bound them all: read
    // those partitions' offsets (the summary's columns only).
    records::ReadOptions o = options;
    o.partitions = unknown;
    ASSIGN_OR_RAISE(auto sum, records::Summarize(table, o, {}));
    for (const auto& [p, s] : sum.summary.partitions()) ends[p] = s.max_offset + 1;
  }
  return ends;
}

}  // namespace thaw::cli
