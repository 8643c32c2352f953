// The schema registry options of every command that reads or writes framed
// values (docs/schema-registry.md): `--schema-registry URL[,URL…]` and
// `--schema-registry-property KEY=VALUE` with Confluent's client property
// names (basic.auth.user.info, basic.auth.credentials.source,
// bearer.auth.token, ssl.ca.location, …; secrets may be @FILE or
// ${env:NAME} references). archive takes them with --value-format registry.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::registry {
class SchemaRegistry;
struct SerializerSettings;
}  // namespace thaw::registry

namespace thaw::records {
class ValueAvroChooser;
}

namespace thaw::cli {

struct RegistryArgs {
  std::string url;
  std::vector<std::string> properties;  // KEY=VALUE
};

void AddRegistryOptions(CLI::App* cmd, RegistryArgs* args);

// The registry client, or null when no --schema-registry was given (a
// property without a URL is an error). Confluent's serializer settings among
// the properties (auto.register.schemas, use.latest.version,
// normalize.schemas, value.subject.name.strategy) go to *settings; without
// `settings` (archive, which only reads schemas) they are refused.
Result<std::shared_ptr<registry::SchemaRegistry>> OpenRegistry(const RegistryArgs& args,
                                                               registry::SerializerSettings* settings = nullptr);

// --value-format of the faces that encode values for consumers (replay;
// serve per topic): "" or "json" -> null (decoded value columns as JSON);
// "avro" -> the chooser of the Avro schema and registry id for `topic`
// (registry/serializer.h); needs --schema-registry.
Result<std::shared_ptr<records::ValueAvroChooser>> MakeValueAvroChooser(
    const std::string& format, const std::shared_ptr<registry::SchemaRegistry>& client,
    const registry::SerializerSettings& settings, const std::string& topic);
// `dry_run`: nothing is registered (SerializerSettings::dry_run).
Result<std::shared_ptr<records::ValueAvroChooser>> ValueAvroChooserFor(const std::string& format,
                                                                       const RegistryArgs& args,
                                                                       const std::string& topic, bool dry_run = false);

}  // namespace thaw::cli
