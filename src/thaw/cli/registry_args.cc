#include "thaw/cli/registry_args.h"

#include "thaw/registry/client.h"
#include "thaw/registry/serializer.h"

namespace thaw::cli {

void AddRegistryOptions(CLI::App* cmd, RegistryArgs* args) {
  cmd->add_option("--schema-registry", args->url,
                  "Confluent-compatible schema registry URL(s), comma-separated (docs/schema-registry.md)")
      ->type_name("URL");
  cmd->add_option("--schema-registry-property", args->properties,
                  "A registry client property by Confluent's name (basic.auth.user.info, bearer.auth.token, "
                  "ssl.ca.location, …); repeatable")
      ->type_name("KEY=VALUE");
}

Result<std::shared_ptr<registry::SchemaRegistry>> OpenRegistry(const RegistryArgs& args,
                                                               registry::SerializerSettings* settings) {
  if (args.url.empty()) {
    if (!args.properties.empty()) {
      return Status::Invalid("--schema-registry-property given without --schema-registry URL");
    }
    return std::shared_ptr<registry::SchemaRegistry>();
  }
  storage::PropertyMap props{{"url", args.url}};
  for (const auto& kv : args.properties) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      // Not echoed: a mistyped one may hold a credential.
      return Status::Invalid(
          "a --schema-registry-property is not KEY=VALUE (e.g. basic.auth.user.info=USER:PASS); see "
          "docs/schema-registry.md");
    }
    if (kv.substr(0, eq) == "url") {
      return Status::Invalid("--schema-registry-property url=…: give the URL with --schema-registry");
    }
    props[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const size_t before = props.size();
  ASSIGN_OR_RAISE(auto serializer, registry::SerializerSettings::Take(&props, "--schema-registry-property"));
  if (settings) {
    *settings = serializer;
  } else if (props.size() != before) {
    return Status::Invalid(
        "--schema-registry-property: auto.register.schemas, use.latest.version, normalize.schemas and "
        "value.subject.name.strategy are serializer settings, for replay and serve --value-format avro, protobuf or "
        "json-schema");
  }
  ASSIGN_OR_RAISE(auto options, registry::RegistryOptions::FromProperties(props, "--schema-registry-property"));
  ASSIGN_OR_RAISE(auto client, registry::SchemaRegistry::Make(std::move(options)));
  return std::shared_ptr<registry::SchemaRegistry>(std::move(client));
}

Result<std::shared_ptr<records::ValueAvroChooser>> MakeValueAvroChooser(
    const std::string& format, const std::shared_ptr<registry::SchemaRegistry>& client,
    const registry::SerializerSettings& settings, const std::string& topic) {
  if (format.empty() || format == "json") return std::shared_ptr<records::ValueAvroChooser>();
  if (format != "avro" && format != "json-schema" && format != "protobuf") {
    return Status::Invalid(
        "--value-format '{}': use json (decoded value columns as JSON, the default), avro, protobuf or json-schema",
        format);
  }
  if (!client) {
    return Status::Invalid("--value-format {} frames values with schema registry ids: give --schema-registry URL",
                           format);
  }
  if (format == "json-schema") {
    return std::shared_ptr<records::ValueAvroChooser>(
        std::make_shared<registry::JsonSchemaValueChooser>(client, settings, topic));
  }
  if (format == "protobuf") {
    return std::shared_ptr<records::ValueAvroChooser>(
        std::make_shared<registry::ProtobufValueChooser>(client, settings, topic));
  }
  return std::shared_ptr<records::ValueAvroChooser>(
      std::make_shared<registry::AvroValueChooser>(client, settings, topic));
}

Result<std::shared_ptr<records::ValueAvroChooser>> ValueAvroChooserFor(const std::string& format,
                                                                       const RegistryArgs& args,
                                                                       const std::string& topic, bool dry_run) {
  registry::SerializerSettings settings;
  ASSIGN_OR_RAISE(auto client, OpenRegistry(args, &settings));
  settings.dry_run = dry_run;
  if ((format.empty() || format == "json") && client) {
    return Status::Invalid(
        "--schema-registry is for --value-format avro, protobuf or json-schema (values encoded through the registry)");
  }
  return MakeValueAvroChooser(format, client, settings, topic);
}

}  // namespace thaw::cli
