#include "thaw/catalog/rest_messages.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "thaw/common/json_read.h"

namespace thaw::catalog::rest {

namespace {

using Json = nlohmann::json;

using json::Excerpt;
using json::Member;

std::string TextOf(const Json& v) {
  return v.is_string() ? v.get_ref<const std::string&>() : v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// An optional JSON object of properties (absent or null: empty).
Result<storage::PropertyMap> PropertyObject(const Json& parent, std::string_view key, std::string_view what) {
  storage::PropertyMap out;
  const Json* j = Member(parent, key);
  if (j == nullptr || j->is_null()) return out;
  if (!j->is_object()) {
    return Status::Corrupt("{}: '{}' is not a JSON object of properties but {}", what, key, Excerpt(*j));
  }
  for (auto it = j->begin(); it != j->end(); ++it) out[it.key()] = TextOf(it.value());
  return out;
}

// An optional string member (absent or null: empty).
Result<std::string> OptionalString(const Json& parent, std::string_view key, std::string_view what) {
  const Json* j = Member(parent, key);
  if (j == nullptr || j->is_null()) return std::string();
  if (!j->is_string()) return Status::Corrupt("{}: '{}' is not a string but {}", what, key, Excerpt(*j));
  return j->get<std::string>();
}

Result<std::vector<std::string>> Levels(const Json& ns, std::string_view what) {
  if (!ns.is_array()) return Status::Corrupt("{}: a namespace is not a list of strings but {}", what, Excerpt(ns));
  std::vector<std::string> levels;
  for (const auto& l : ns) levels.push_back(TextOf(l));
  return levels;
}

}  // namespace

Result<ConfigResponse> ParseConfigResponse(std::string_view body, std::string_view what) {
  auto j = json::Parse(body);
  if (!j.is_object()) return Status::Corrupt("{}: the catalog configuration is not a JSON object", what);
  ConfigResponse out;
  ASSIGN_OR_RAISE(out.defaults, PropertyObject(j, "defaults", what));
  ASSIGN_OR_RAISE(out.overrides, PropertyObject(j, "overrides", what));
  const Json* lifetime = Member(j, "idempotency-key-lifetime");
  out.idempotency_keys = lifetime != nullptr && !lifetime->is_null();
  return out;
}

Result<ListNamespacesPage> ParseListNamespaces(std::string_view body, std::string_view what) {
  auto j = json::Parse(body);
  const Json* list = j.is_object() ? Member(j, "namespaces") : nullptr;
  if (list == nullptr || !list->is_array()) return Status::Corrupt("{}: the response has no 'namespaces' list", what);
  ListNamespacesPage page;
  for (const auto& ns : *list) {
    ASSIGN_OR_RAISE(auto levels, Levels(ns, what));
    page.namespaces.push_back(std::move(levels));
  }
  ASSIGN_OR_RAISE(page.next_page_token, OptionalString(j, "next-page-token", what));
  return page;
}

Result<ListTablesPage> ParseListTables(std::string_view body, const std::vector<std::string>& ns,
                                       std::string_view what) {
  auto j = json::Parse(body);
  const Json* list = j.is_object() ? Member(j, "identifiers") : nullptr;
  if (list == nullptr || !list->is_array()) return Status::Corrupt("{}: the response has no 'identifiers' list", what);
  ListTablesPage page;
  for (const auto& id : *list) {
    const Json* name = id.is_object() ? Member(id, "name") : nullptr;
    if (name == nullptr || !name->is_string()) {
      return Status::Corrupt("{}: a table identifier has no name: {}", what, Excerpt(id));
    }
    TableIdentifier t;
    t.name = name->get<std::string>();
    const Json* id_ns = Member(id, "namespace");
    if (id_ns != nullptr && !id_ns->is_null()) {
      ASSIGN_OR_RAISE(t.ns, Levels(*id_ns, fmt::format("{}: table '{}'", what, t.name)));
    } else {
      t.ns = ns;
    }
    page.identifiers.push_back(std::move(t));
  }
  ASSIGN_OR_RAISE(page.next_page_token, OptionalString(j, "next-page-token", what));
  return page;
}

Result<LoadTableResponse> ParseLoadTable(std::string_view body, std::string_view what) {
  auto j = json::Parse(body);
  const Json* metadata = j.is_object() ? Member(j, "metadata") : nullptr;
  if (metadata == nullptr || !metadata->is_object()) {
    return Status::Corrupt("{}: the catalog's response has no table metadata", what);
  }
  LoadTableResponse out;
  ASSIGN_OR_RAISE(out.metadata_location, OptionalString(j, "metadata-location", what));
  ASSIGN_OR_RAISE(out.metadata,
                  iceberg::TableMetadata::Parse(metadata->dump(-1, ' ', false, Json::error_handler_t::replace),
                                                out.metadata_location.empty() ? what : out.metadata_location));
  out.location = out.metadata.location.empty() ? out.metadata_location : out.metadata.location;
  ASSIGN_OR_RAISE(out.config, PropertyObject(j, "config", what));
  const Json* creds = Member(j, "storage-credentials");
  if (creds != nullptr && !creds->is_null()) {
    if (!creds->is_array()) {
      return Status::Corrupt("{}: 'storage-credentials' is not a list but {}", what, Excerpt(*creds));
    }
    for (const auto& c : *creds) {
      const Json* prefix = c.is_object() ? Member(c, "prefix") : nullptr;
      if (prefix == nullptr || !prefix->is_string()) {
        return Status::Corrupt("{}: a storage credential has no 'prefix' string: {}", what, Excerpt(c));
      }
      StorageCredential cred;
      cred.prefix = prefix->get<std::string>();
      ASSIGN_OR_RAISE(cred.config,
                      PropertyObject(c, "config", fmt::format("{}: storage credential '{}'", what, cred.prefix)));
      out.storage_credentials.push_back(std::move(cred));
    }
  }
  return out;
}

Result<OAuthToken> ParseTokenResponse(std::string_view body, std::string_view what) {
  auto j = json::Parse(body);
  const Json* token = j.is_object() ? Member(j, "access_token") : nullptr;
  if (token == nullptr || !token->is_string())
    return Status::Corrupt("{}: the OAuth2 token response has no access_token", what);
  OAuthToken out;
  out.access_token = token->get<std::string>();
  const Json* expires = Member(j, "expires_in");
  if (expires == nullptr || expires->is_null()) return out;
  // RFC 6749 says a number; some servers send it as a string.
  double seconds = 0;
  if (expires->is_number_unsigned()) {
    uint64_t v = expires->get<uint64_t>();
    seconds = v > static_cast<uint64_t>(kMaxTokenLifetime.count()) ? static_cast<double>(kMaxTokenLifetime.count())
                                                                   : static_cast<double>(v);
  } else if (expires->is_number()) {
    seconds = expires->get<double>();  // int64 or float: exact enough for a lifetime
  } else if (expires->is_string() && !expires->get_ref<const std::string&>().empty() &&
             expires->get_ref<const std::string&>().size() <= 12 &&
             expires->get_ref<const std::string&>().find_first_not_of("0123456789") == std::string::npos) {
    seconds = std::stod(expires->get_ref<const std::string&>());  // "3599", as Azure AD v1 sends it
  } else {
    return Status::Corrupt("{}: the OAuth2 token response's expires_in is not a number but {}", what,
                           Excerpt(*expires));
  }
  if (!std::isfinite(seconds) || seconds < 0) {
    return Status::Corrupt("{}: the OAuth2 token response's expires_in {} is not a non-negative number of seconds",
                           what, Excerpt(*expires));
  }
  seconds = std::min(seconds, static_cast<double>(kMaxTokenLifetime.count()));
  out.expires_in = std::chrono::seconds(static_cast<int64_t>(seconds));
  return out;
}

std::string ParseErrorResponse(std::string_view body) {
  auto j = json::Parse(body);
  const Json* error = j.is_object() ? Member(j, "error") : nullptr;
  if (error != nullptr && error->is_object()) {
    const Json* t = Member(*error, "type");
    const Json* m = Member(*error, "message");
    std::string type = t != nullptr && t->is_string() ? t->get<std::string>() : "";
    std::string msg = m != nullptr && m->is_string() ? m->get<std::string>() : "";
    if (!type.empty() && !msg.empty()) return type + ": " + msg;
    return type + msg;
  }
  // An HTML error page (a proxy's, a servlet container's): its title says it.
  if (auto t = body.find("<title>"); t != std::string_view::npos) {
    auto end = body.find("</title>", t);
    if (end != std::string_view::npos && end - t < 300) return std::string(body.substr(t + 7, end - t - 7));
  }
  std::string text(body.substr(0, 200));
  for (auto& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

std::string ParseTokenError(std::string_view body) {
  auto j = json::Parse(body);
  if (!j.is_object()) return "";
  const Json* description = Member(j, "error_description");
  if (description != nullptr && description->is_string()) return description->get<std::string>();
  const Json* error = Member(j, "error");
  if (error != nullptr && error->is_string()) return error->get<std::string>();
  if (error != nullptr && error->is_object()) {
    if (const Json* m = Member(*error, "message")) return TextOf(*m);
  }
  return "";
}

}  // namespace thaw::catalog::rest
