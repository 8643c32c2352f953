#include "thaw/cli/registry_args.h"

#include "thaw/registry/client.h"

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

Result<std::shared_ptr<registry::SchemaRegistry>> OpenRegistry(const RegistryArgs& args) {
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
  ASSIGN_OR_RAISE(auto options, registry::RegistryOptions::FromProperties(props, "--schema-registry-property"));
  ASSIGN_OR_RAISE(auto client, registry::SchemaRegistry::Make(std::move(options)));
  return std::shared_ptr<registry::SchemaRegistry>(std::move(client));
}

}  // namespace thaw::cli
