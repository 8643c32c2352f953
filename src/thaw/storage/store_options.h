// Object-store locations and the pyiceberg / Iceberg Java property names
// mapped to plain settings structs. Arrow-free (thaw_base), so the mapping is
// unit-tested and fuzzable; storage/object_store.cc turns the structs into
// arrow::fs::S3Options / GcsOptions / AzureOptions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "thaw/common/status.h"
#include "thaw/storage/property_map.h"

namespace thaw::storage {

enum class StoreKind { kLocal, kS3, kGcs, kAzure };

// What Thaw reads, for error messages.
inline constexpr std::string_view kSupportedSchemes =
    "s3://, s3a://, s3n://, gs://, abfs://, abfss://, file:// and plain paths";

// A location split for the filesystems.
//   s3://bucket/key, s3a://, s3n://             -> kS3, bucket, key
//   gs://bucket/key                              -> kGcs
//   abfs[s]://container@account.dfs.core.windows.net/key -> kAzure, bucket = container,
//                                                   account = "account", account_host = the host
//   /path, relative/path, file:/x, file:///x      -> kLocal
struct StoreLocation {
  StoreKind kind = StoreKind::kLocal;
  std::string scheme;        // as written ("s3a"); empty for plain paths
  std::string bucket;        // bucket (S3, GCS) or container (ADLS)
  std::string account;       // ADLS storage account name
  std::string account_host;  // ADLS host, e.g. account.dfs.core.windows.net
  std::string key;           // object key, without a leading '/'
  std::string path;          // local path (kLocal)

  // The path in the Arrow filesystem: "bucket/key" ("container/key" for ADLS).
  std::string ArrowPath() const { return bucket + "/" + key; }
};

// kUnsupported names the scheme and kSupportedSchemes; kInvalid for an
// object location without a bucket or key.
Result<StoreLocation> ParseStoreLocation(std::string_view location);

struct S3Settings {
  std::string region;                     // s3.region, else client.region; empty: the SDK's chain (AWS_REGION, profile)
  std::string endpoint_override;          // host[:port] of s3.endpoint
  std::string scheme = "https";           // from s3.endpoint's scheme
  std::string access_key;                 // s3.access-key-id (client.access-key-id)
  std::string secret_key;                 // s3.secret-access-key (client.secret-access-key)
  std::string session_token;              // s3.session-token (client.session-token)
  std::string role_arn;                   // s3.role-arn (client.assume-role.arn)
  std::string role_session_name;          // s3.role-session-name (client.assume-role.session-name)
  std::string external_id;                // client.assume-role.external-id
  bool anonymous = false;                 // s3.anonymous
  bool force_virtual_addressing = false;  // s3.force-virtual-addressing, or s3.path-style-access=false
  double connect_timeout_s = -1;          // s3.connect-timeout (seconds)
  double request_timeout_s = -1;          // s3.request-timeout (seconds)
  std::string proxy_uri;                  // s3.proxy-uri
  // No keys, no role, not anonymous: the AWS SDK's default chain (AWS_ACCESS_KEY_ID..., AWS_PROFILE,
  // ~/.aws/config and credentials, web identity, container/instance metadata).
  bool default_chain() const { return access_key.empty() && role_arn.empty() && !anonymous; }
};
Result<S3Settings> S3SettingsFrom(const PropertyMap& props);

struct GcsSettings {
  std::string endpoint_override;        // host[:port] of gcs.service.host
  std::string scheme;                   // from gcs.service.host's scheme (empty: Arrow's default, https)
  std::string project_id;               // gcs.project-id
  std::string oauth2_token;             // gcs.oauth2.token
  int64_t token_expires_at_ms = 0;      // gcs.oauth2.token-expires-at (ms since the epoch; 0 = none given)
  bool anonymous = false;               // gcs.no-auth
  std::string default_bucket_location;  // gcs.default-location
};
Result<GcsSettings> GcsSettingsFrom(const PropertyMap& props);

struct AzureSettings {
  std::string account_name;  // from the location; adls.account-name / the connection string if they agree
  std::string account_key;   // adls.account-key, adls.auth.shared-key.account.key, connection string AccountKey
  std::string sas_token;     // adls.sas-token.<account host or name>, adls.sas-token, SharedAccessSignature
  std::string tenant_id, client_id, client_secret;  // adls.tenant-id, adls.client-id, adls.client-secret
  std::string blob_storage_authority = ".blob.core.windows.net";
  std::string dfs_storage_authority = ".dfs.core.windows.net";
  std::string blob_storage_scheme = "https";
  std::string dfs_storage_scheme = "https";
};
// `location` gives the account; adls.connection-string[.<account host>] is parsed (AccountName, AccountKey,
// SharedAccessSignature, DefaultEndpointsProtocol, EndpointSuffix, BlobEndpoint, DfsEndpoint).
Result<AzureSettings> AzureSettingsFrom(const PropertyMap& props, const StoreLocation& location);

// The properties that configure a store kind (the registry's sharing key).
PropertyMap RelevantProperties(StoreKind kind, const PropertyMap& props);

// "k=v, k2=***": properties for logs and errors, secrets (IsSecretProperty) masked.
std::string RedactProperties(const PropertyMap& props);

}  // namespace thaw::storage
