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
}

namespace thaw::cli {

struct RegistryArgs {
  std::string url;
  std::vector<std::string> properties;  // KEY=VALUE
};

void AddRegistryOptions(CLI::App* cmd, RegistryArgs* args);

// The registry client, or null when no --schema-registry was given (a
// property without a URL is an error).
Result<std::shared_ptr<registry::SchemaRegistry>> OpenRegistry(const RegistryArgs& args);

}  // namespace thaw::cli
