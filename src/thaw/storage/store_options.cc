#include "thaw/storage/store_options.h"

#include <cctype>
#include <charconv>
#include <initializer_list>
#include <optional>

namespace thaw::storage {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The first of `keys` present in `props`, with the key it came from.
const std::string* Find(const PropertyMap& props, std::initializer_list<std::string_view> keys,
                        std::string_view* from = nullptr) {
  for (auto k : keys) {
    auto it = props.find(k);
    if (it != props.end()) {
      if (from) *from = k;
      return &it->second;
    }
  }
  return nullptr;
}

std::string Get(const PropertyMap& props, std::initializer_list<std::string_view> keys) {
  const std::string* v = Find(props, keys);
  return v ? *v : std::string();
}

Result<std::optional<bool>> GetBool(const PropertyMap& props, std::string_view key) {
  auto it = props.find(key);
  if (it == props.end()) return std::optional<bool>();
  std::string v = Lower(it->second);
  if (v == "true" || v == "1" || v == "yes") return std::optional<bool>(true);
  if (v == "false" || v == "0" || v == "no") return std::optional<bool>(false);
  return Status::Invalid("catalog property '{}' = '{}' is not a boolean (use true or false)", key, it->second);
}

Result<double> GetSeconds(const PropertyMap& props, std::string_view key) {
  auto it = props.find(key);
  if (it == props.end()) return -1.0;
  const std::string& v = it->second;
  double d = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || p != v.data() + v.size() || d < 0) {
    return Status::Invalid("catalog property '{}' = '{}' is not a number of seconds", key, v);
  }
  return d;
}

// "http://host:port[/...]" -> scheme "http", authority "host:port"; "host:port" -> scheme empty.
void SplitEndpoint(const std::string& endpoint, std::string* scheme, std::string* authority) {
  auto sep = endpoint.find("://");
  std::string rest = endpoint;
  if (sep != std::string::npos) {
    *scheme = Lower(endpoint.substr(0, sep));
    rest = endpoint.substr(sep + 3);
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  *authority = rest;
}

}  // namespace

Result<StoreLocation> ParseStoreLocation(std::string_view location) {
  StoreLocation loc;
  auto sep = location.find("://");
  if (sep == std::string_view::npos) {
    if (location.substr(0, 5) == "file:") {
      loc.scheme = "file";
      loc.path = std::string(location.substr(5));
      return loc;
    }
    // A plain path; "c:" style drive letters and a colon in a file name are not schemes.
    auto colon = location.find(':');
    auto slash = location.find('/');
    if (colon != std::string_view::npos && colon > 1 && (slash == std::string_view::npos || colon < slash) &&
        location.substr(colon, 2) == ":/") {
      return Status::Unsupported("location '{}': storage scheme '{}' is not supported; Thaw reads {}", location,
                                 location.substr(0, colon), kSupportedSchemes);
    }
    loc.path = std::string(location);
    return loc;
  }
  loc.scheme = Lower(location.substr(0, sep));
  std::string_view rest = location.substr(sep + 3);
  if (loc.scheme == "file") {
    loc.path = std::string(rest);
    return loc;
  }
  if (loc.scheme == "s3" || loc.scheme == "s3a" || loc.scheme == "s3n") {
    loc.kind = StoreKind::kS3;
  } else if (loc.scheme == "gs") {
    loc.kind = StoreKind::kGcs;
  } else if (loc.scheme == "abfs" || loc.scheme == "abfss") {
    loc.kind = StoreKind::kAzure;
  } else {
    return Status::Unsupported("location '{}': storage scheme '{}' is not supported; Thaw reads {}", location,
                               loc.scheme, kSupportedSchemes);
  }
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view key = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  while (!key.empty() && key.front() == '/') key.remove_prefix(1);
  if (loc.kind == StoreKind::kAzure) {
    auto at = authority.find('@');
    if (at == std::string_view::npos || at == 0 || at + 1 == authority.size()) {
      return Status::Invalid("location '{}': an ADLS location is {}://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH",
                             location, loc.scheme);
    }
    loc.bucket = std::string(authority.substr(0, at));
    loc.account_host = Lower(authority.substr(at + 1));
    loc.account = loc.account_host.substr(0, loc.account_host.find('.'));
    auto port = loc.account.find(':');
    if (port != std::string::npos) loc.account.resize(port);
  } else {
    loc.bucket = std::string(authority);
  }
  if (loc.bucket.empty()) return Status::Invalid("location '{}' has no bucket", location);
  if (key.empty()) return Status::Invalid("location '{}' names a bucket, not an object", location);
  loc.key = std::string(key);
  return loc;
}

Result<S3Settings> S3SettingsFrom(const PropertyMap& props) {
  S3Settings s;
  s.region = Get(props, {"s3.region", "client.region"});
  if (const std::string* ep = Find(props, {"s3.endpoint"}); ep && !ep->empty()) {
    std::string scheme;
    SplitEndpoint(*ep, &scheme, &s.endpoint_override);
    if (!scheme.empty()) {
      if (scheme != "http" && scheme != "https") {
        return Status::Invalid("catalog property 's3.endpoint' = '{}': the scheme must be http or https", *ep);
      }
      s.scheme = scheme;
    }
  }
  std::string_view key_from, secret_from;
  const std::string* key = Find(props, {"s3.access-key-id", "client.access-key-id"}, &key_from);
  const std::string* secret = Find(props, {"s3.secret-access-key", "client.secret-access-key"}, &secret_from);
  if ((key && !key->empty()) != (secret && !secret->empty())) {
    return Status::Invalid(
        "catalog property '{}' is set but '{}' is not: give both, or neither to use the AWS "
        "default credentials (environment, AWS_PROFILE, ~/.aws/credentials)",
        key ? key_from : std::string_view("s3.secret-access-key"),
        key ? std::string_view("s3.secret-access-key") : std::string_view("s3.access-key-id"));
  }
  if (key && !key->empty()) {
    s.access_key = *key;
    s.secret_key = *secret;
    s.session_token = Get(props, {"s3.session-token", "client.session-token"});
  }
  s.role_arn = Get(props, {"s3.role-arn", "client.assume-role.arn"});
  s.role_session_name = Get(props, {"s3.role-session-name", "client.assume-role.session-name"});
  s.external_id = Get(props, {"client.assume-role.external-id"});
  ASSIGN_OR_RAISE(auto anonymous, GetBool(props, "s3.anonymous"));
  s.anonymous = anonymous.value_or(false);
  ASSIGN_OR_RAISE(auto force_virtual, GetBool(props, "s3.force-virtual-addressing"));
  ASSIGN_OR_RAISE(auto path_style, GetBool(props, "s3.path-style-access"));
  s.force_virtual_addressing = force_virtual.value_or(false) || (path_style.has_value() && !*path_style);
  if (force_virtual.value_or(false) && path_style.value_or(false)) {
    return Status::Invalid(
        "catalog properties 's3.force-virtual-addressing' and 's3.path-style-access' are both "
        "true: choose one");
  }
  ASSIGN_OR_RAISE(s.connect_timeout_s, GetSeconds(props, "s3.connect-timeout"));
  ASSIGN_OR_RAISE(s.request_timeout_s, GetSeconds(props, "s3.request-timeout"));
  s.proxy_uri = Get(props, {"s3.proxy-uri"});
  ASSIGN_OR_RAISE(auto remote_signing, GetBool(props, "s3.remote-signing-enabled"));
  if (remote_signing.value_or(false) && s.access_key.empty()) {
    return Status::Unsupported(
        "the catalog asks for S3 remote signing (s3.remote-signing-enabled), which Thaw does "
        "not support: configure the catalog to vend credentials, or give s3.access-key-id "
        "and s3.secret-access-key");
  }
  return s;
}

Result<GcsSettings> GcsSettingsFrom(const PropertyMap& props) {
  GcsSettings g;
  if (const std::string* host = Find(props, {"gcs.service.host"}); host && !host->empty()) {
    SplitEndpoint(*host, &g.scheme, &g.endpoint_override);
  }
  g.project_id = Get(props, {"gcs.project-id"});
  g.oauth2_token = Get(props, {"gcs.oauth2.token"});
  if (const std::string* exp = Find(props, {"gcs.oauth2.token-expires-at"}); exp && !exp->empty()) {
    auto [p, ec] = std::from_chars(exp->data(), exp->data() + exp->size(), g.token_expires_at_ms);
    if (ec != std::errc() || p != exp->data() + exp->size()) {
      return Status::Invalid(
          "catalog property 'gcs.oauth2.token-expires-at' = '{}' is not milliseconds since the "
          "epoch",
          *exp);
    }
  }
  ASSIGN_OR_RAISE(auto no_auth, GetBool(props, "gcs.no-auth"));
  g.anonymous = no_auth.value_or(false);
  g.default_bucket_location = Get(props, {"gcs.default-location"});
  return g;
}

namespace {

// Applies a storage connection string ("Key=Value;Key=Value").
Status ApplyConnectionString(const std::string& text, std::string_view from, AzureSettings* a,
                             std::string* conn_account) {
  size_t pos = 0;
  std::string suffix;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view part(text.data() + pos, end - pos);
    pos = end + 1;
    if (part.empty()) continue;
    auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Status::Invalid("catalog property '{}': a connection string is KEY=VALUE pairs separated by ';'", from);
    }
    std::string k = Lower(part.substr(0, eq));
    std::string v(part.substr(eq + 1));
    if (k == "accountname") {
      *conn_account = v;
    } else if (k == "accountkey") {
      a->account_key = v;
    } else if (k == "sharedaccesssignature") {
      a->sas_token = v;
    } else if (k == "defaultendpointsprotocol") {
      a->blob_storage_scheme = a->dfs_storage_scheme = Lower(v);
    } else if (k == "endpointsuffix") {
      suffix = v;
    } else if (k == "blobendpoint" || k == "dfsendpoint") {
      std::string scheme, authority;
      SplitEndpoint(v, &scheme, &authority);
      // https://account.blob.core.windows.net -> ".blob.core.windows.net";
      // http://127.0.0.1:10000/account (Azurite) -> "127.0.0.1:10000".
      auto slash = authority.find('/');
      std::string host = authority.substr(0, slash);
      if (slash == std::string::npos) {
        auto dot = host.find('.');
        if (dot != std::string::npos) host = host.substr(dot);
      }
      if (k == "blobendpoint") {
        a->blob_storage_authority = host;
        if (!scheme.empty()) a->blob_storage_scheme = scheme;
      } else {
        a->dfs_storage_authority = host;
        if (!scheme.empty()) a->dfs_storage_scheme = scheme;
      }
    }
  }
  if (!suffix.empty()) {
    a->blob_storage_authority = ".blob." + suffix;
    a->dfs_storage_authority = ".dfs." + suffix;
  }
  return Status::OK();
}

}  // namespace

Result<AzureSettings> AzureSettingsFrom(const PropertyMap& props, const StoreLocation& location) {
  AzureSettings a;
  a.account_name = location.account;
  const std::string host_key = location.account_host;
  if (auto v = Get(props, {"adls.blob-storage-authority"}); !v.empty()) a.blob_storage_authority = v;
  if (auto v = Get(props, {"adls.dfs-storage-authority"}); !v.empty()) a.dfs_storage_authority = v;
  if (auto v = Get(props, {"adls.blob-storage-scheme"}); !v.empty()) a.blob_storage_scheme = Lower(v);
  if (auto v = Get(props, {"adls.dfs-storage-scheme"}); !v.empty()) a.dfs_storage_scheme = Lower(v);
  std::string_view conn_from;
  const std::string k1 = "adls.connection-string." + host_key;
  const std::string k2 = "adls.connection-string." + location.account;
  if (const std::string* conn = Find(props, {k1, k2, "adls.connection-string"}, &conn_from)) {
    std::string conn_account;
    RETURN_NOT_OK(ApplyConnectionString(*conn, conn_from, &a, &conn_account));
    if (!conn_account.empty() && !a.account_name.empty() && conn_account != a.account_name) {
      return Status::Invalid("catalog property '{}' is for storage account '{}', but the location is in account '{}'",
                             conn_from, conn_account, a.account_name);
    }
  }
  std::string_view name_from;
  if (const std::string* name = Find(props, {"adls.account-name", "adls.auth.shared-key.account.name"}, &name_from);
      name && !name->empty() && *name != a.account_name) {
    // Shared keys belong to one account: a key for another account would only fail later with a 403.
    if (Find(props, {"adls.account-key", "adls.auth.shared-key.account.key"})) {
      return Status::Invalid(
          "catalog property '{}' = '{}' but the location is in storage account '{}': the account "
          "key is for another account",
          name_from, *name, a.account_name);
    }
  }
  if (auto v = Get(props, {"adls.account-key", "adls.auth.shared-key.account.key"}); !v.empty()) a.account_key = v;
  const std::string s1 = "adls.sas-token." + host_key;
  const std::string s2 = "adls.sas-token." + location.account;
  if (auto v = Get(props, {s1, s2, "adls.sas-token"}); !v.empty()) a.sas_token = v;
  a.tenant_id = Get(props, {"adls.tenant-id"});
  a.client_id = Get(props, {"adls.client-id"});
  a.client_secret = Get(props, {"adls.client-secret"});
  if (!a.client_secret.empty() && (a.tenant_id.empty() || a.client_id.empty())) {
    return Status::Invalid("catalog property 'adls.client-secret' needs 'adls.tenant-id' and 'adls.client-id' too");
  }
  return a;
}

PropertyMap RelevantProperties(StoreKind kind, const PropertyMap& props) {
  PropertyMap out;
  auto take = [&](std::string_view prefix) {
    for (auto it = props.lower_bound(prefix); it != props.end() && it->first.starts_with(prefix); ++it) {
      out.insert(*it);
    }
  };
  switch (kind) {
    case StoreKind::kS3:
      take("s3.");
      take("client.");
      break;
    case StoreKind::kGcs:
      take("gcs.");
      break;
    case StoreKind::kAzure:
      take("adls.");
      break;
    case StoreKind::kLocal:
      break;
  }
  return out;
}

std::string RedactProperties(const PropertyMap& props) {
  std::string out;
  for (const auto& [k, v] : props) {
    if (!out.empty()) out += ", ";
    out += k;
    out += '=';
    out += IsSecretProperty(k) ? std::string("***") : v;
  }
  return out;
}

}  // namespace thaw::storage
