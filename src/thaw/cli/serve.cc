// `thaw serve`: Iceberg tables as Kafka topics over the Kafka protocol.
// This file is the command line only: it turns flags (and --config's
// `[[topic]]` tables) into a serve::ServeConfig and runs it
// (serve/serve_main.h; with --upstream, the tiered proxy of merged/).
#include "thaw/cli/serve.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <tuple>

#include "thaw/cli/kafka_args.h"
#include "thaw/cli/log_args.h"
#include "thaw/cli/table_args.h"
#include "thaw/common/log.h"
#include "thaw/common/units.h"
#include "thaw/kafka/client/connection.h"
#include "thaw/kafka/server/acl.h"
#include "thaw/kafka/server/sasl.h"
#include "thaw/cli/ops_args.h"
#include "thaw/cli/registry_args.h"
#include "thaw/cli/stop_signal.h"
#include "thaw/merged/broker_map.h"
#include "thaw/registry/serializer.h"
#include "thaw/serve/serve_main.h"

namespace thaw::cli {

namespace {

struct ServeArgs {
  CatalogArgs catalog;
  OpsArgs ops;
  std::vector<std::string> topics;
  std::string table_prefix;
  std::string layout;
  std::vector<std::string> columns;
  std::string compression = "none";
  std::string listen = "127.0.0.1:9192";
  std::string advertise;
  std::vector<std::string> upstream;  // HOST:PORT[,HOST:PORT...], repeatable
  std::string broker_ports;
  std::string cold_suffix;              // --cold-suffix: every tiered topic's view
  std::string tls_cert, tls_key, tls_client_ca;
  std::string sasl_users;  // --sasl-users FILE
  std::string add_user;    // --add-user NAME: write NAME's credentials, serve nothing
  std::string acl_file;    // --acl-file FILE
  std::vector<std::string> properties;  // -X: upstream client properties
  std::string properties_file;          // -F
  std::string state;  // empty: DefaultStateDir()
  std::string refresh = "5s";
  std::string cache_size = "1GiB";
  std::string memory_budget;
  std::string spill_dir;
  LogArgs log;
  std::string initial_rebalance_delay = "3s";
  int threads = 4;
  std::string value_format;  // default of every topic: json (empty), avro, protobuf or json-schema
  RegistryArgs registry;
  // Resolved once from `registry` before the topics are parsed.
  std::shared_ptr<registry::SchemaRegistry> registry_client;
  registry::SerializerSettings serializer;
};

// HOST:PORT[,HOST:PORT...] appended to *out; `what` names the option.
Status AddUpstream(const std::string& list, const char* what, std::vector<merged::UpstreamAddress>* out) {
  for (size_t start = 0; start <= list.size();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string one = list.substr(start, comma - start);
    if (!one.empty()) {
      ASSIGN_OR_RAISE(auto hp, kafka::client::ParseAddress(one, what));
      out->push_back({hp.first, hp.second});
    }
    start = comma + 1;
  }
  return Status::OK();
}

// NAME=NS.TABLE[:key=value...], keys layout, column (FIELD=COLUMN, repeatable), compression, source-topic,
// prefer, cold-suffix, value-format; written with dashes like every option (source_topic, cold_suffix and
// value_format, their first spellings, are still read).
Status ParseTopic(const std::string& text, const ServeArgs& a, serve::TopicConfig* out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Invalid("--topic '{}' must be NAME=NAMESPACE.TABLE (e.g. orders=archive.orders)", text);
  }
  out->name = text.substr(0, eq);
  std::string rest = text.substr(eq + 1);
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    size_t c = rest.find(':', at);
    parts.push_back(rest.substr(at, c == std::string::npos ? std::string::npos : c - at));
    if (c == std::string::npos) break;
    at = c + 1;
  }
  out->table = parts[0];
  if (out->table.empty()) return Status::Invalid("--topic '{}': no table after '='", text);
  std::string layout = a.layout, compression = a.compression, value_format = a.value_format;
  std::vector<std::string> columns = a.columns;
  out->cold_suffix = a.cold_suffix;
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t e = parts[i].find('=');
    std::string key = parts[i].substr(0, e);
    const std::string value = e == std::string::npos ? "" : parts[i].substr(e + 1);
    std::replace(key.begin(), key.end(), '_', '-');
    if (key == "layout") {
      layout = value;
    } else if (key == "compression") {
      compression = value;
    } else if (key == "column") {
      columns.push_back(value);
    } else if (key == "prefer") {
      if (value != "upstream" && value != "table") {
        return Status::Invalid("--topic '{}': prefer is upstream or table, not '{}'", text, value);
      }
      out->prefer_table = value == "table";
    } else if (key == "cold-suffix") {
      out->cold_suffix = value;  // empty: no view for this topic (overrides --cold-suffix)
    } else if (key == "value-format") {
      value_format = value;
    } else if (key == "source-topic") {
      if (value.empty()) return Status::Invalid("--topic '{}': source-topic needs a topic name", text);
      out->source_topic = value;
    } else {
      return Status::Invalid("--topic '{}': unknown setting '{}' (settings: layout, column, compression, source-topic, prefer, "
                             "cold-suffix, value-format)",
                             text, parts[i].substr(0, e));
    }
  }
  if (!layout.empty()) {
    const auto& names = records::LayoutNames();
    if (layout != "auto" && std::find(names.begin(), names.end(), layout) == names.end()) {
      return Status::Invalid("topic '{}': unknown layout '{}'", out->name, layout);
    }
    if (layout != "auto") out->layout.forced = layout;
  }
  for (const auto& c : columns) RETURN_NOT_OK(records::ParseColumnOverride(c, &out->layout.column_overrides));
  auto chooser = MakeValueAvroChooser(value_format, a.registry_client, a.serializer, out->name);
  if (!chooser.ok()) return chooser.status().WithContext(fmt::format("topic '{}'", out->name));
  out->layout.value_avro = *chooser;
  auto codec = kafka::ParseCompression(compression);
  if (!codec.ok()) return Status::Invalid("topic '{}': {}", out->name, codec.status().message());
  out->compression = *codec;
  return Status::OK();
}

// Where a server keeps its state unless --state says: one directory per
// user and listen port, whatever directory serve was started from (a
// relative default gave a new cluster id and lost every group's committed
// offsets when started elsewhere).
Result<std::string> DefaultStateDir(uint16_t listen_port) {
  std::string base;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && xdg[0] == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && home[0] == '/') {
    base = std::string(home) + "/.local/state";
  } else {
    return Status::Invalid(
        "no --state DIR given and neither XDG_STATE_HOME nor HOME is an absolute path: give --state DIR for the "
        "committed group offsets and cluster id");
  }
  return fmt::format("{}/thaw/serve-{}", base, listen_port);
}

// `--sasl-users FILE --add-user NAME`: the password from stdin (one line; a
// terminal's echo is the user's to turn off, e.g. `read -s`).
Status AddSaslUser(const ServeArgs& a) {
  if (a.sasl_users.empty()) return Status::Invalid("--add-user needs --sasl-users FILE (where the user is written)");
  std::string password;
  std::getline(std::cin, password);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  RETURN_NOT_OK(kafka::server::SaslUsers::AddUser(a.sasl_users, a.add_user, password));
  fmt::print("added user {} (SCRAM-SHA-256, SCRAM-SHA-512; PLAIN checks against them) to {}\n", a.add_user,
             a.sasl_users);
  return Status::OK();
}

Status RunServeCommand(ServeArgs& a) {
  if (!a.add_user.empty()) return AddSaslUser(a);
  RETURN_NOT_OK(a.log.Apply("serve"));
  ASSIGN_OR_RAISE(auto metrics_endpoint, StartOps(a.ops, "serve"));
  serve::ServeConfig config;
  if (!a.catalog.given()) {
    return Status::Invalid(
        "which catalog? give --catalog URI|NAME (e.g. sqlite:////path/catalog.db, http://host:8181, or a catalog "
        "of ~/.pyiceberg.yaml)");
  }
  ASSIGN_OR_RAISE(config.catalog, a.catalog.Resolve());
  ASSIGN_OR_RAISE(a.registry_client, OpenRegistry(a.registry, &a.serializer));
  for (const auto& t : a.topics) {
    serve::TopicConfig tc;
    RETURN_NOT_OK(ParseTopic(t, a, &tc));
    for (const auto& other : config.topics) {
      if (other.name == tc.name) return Status::Invalid("topic '{}' is given twice", tc.name);
    }
    config.topics.push_back(std::move(tc));
  }
  config.table_prefix = a.table_prefix;
  if (config.topics.empty() && config.table_prefix.empty()) {
    return Status::Invalid("nothing to serve: give --topic NAME=NS.TABLE (repeatable) or --table-prefix NS");
  }
  if (!a.table_prefix.empty()) {
    serve::TopicConfig defaults;
    RETURN_NOT_OK(ParseTopic("x=x", a, &defaults));
    config.prefix_defaults = defaults;
  }
  ASSIGN_OR_RAISE(auto listen, kafka::client::ParseAddress(a.listen, "--listen"));
  config.server.listen_host = listen.first;
  config.server.listen_port = static_cast<uint16_t>(listen.second);
  if (!a.sasl_users.empty()) {
    ASSIGN_OR_RAISE(config.server.sasl_users, kafka::server::SaslUsers::Load(a.sasl_users));
  }
  if (!a.acl_file.empty()) {
    ASSIGN_OR_RAISE(config.server.acl, kafka::server::Authorizer::Load(a.acl_file));
    log::Info("--acl-file {}: {} ACLs; a request none allows is denied{}", a.acl_file,
              config.server.acl->entries().size(),
              config.server.sasl_users ? "" : " (no --sasl-users: every client is User:ANONYMOUS)");
  }
  if (!a.tls_cert.empty() || !a.tls_key.empty() || !a.tls_client_ca.empty()) {
    ASSIGN_OR_RAISE(config.server.tls, kafka::TlsServerContext::Make({a.tls_cert, a.tls_key, a.tls_client_ca}));
  }
  if (!a.advertise.empty()) {
    ASSIGN_OR_RAISE(auto adv, kafka::client::ParseAddress(a.advertise, "--advertise"));
    config.advertised_host = adv.first;
    config.advertised_port = adv.second;
  }
  for (const auto& list : a.upstream) RETURN_NOT_OK(AddUpstream(list, "--upstream", &config.upstream));
  // -F, then each -X in order: the later setting wins. bootstrap.servers
  // names the upstream when --upstream does not.
  std::vector<std::tuple<std::string, std::string, std::string>> props;  // name, value, origin
  if (!a.properties_file.empty()) {
    ASSIGN_OR_RAISE(auto file, ReadPropertiesFile(a.properties_file));
    for (auto& [k, v] : file) props.emplace_back(k, v, "-F " + a.properties_file);
  }
  for (const auto& x : a.properties) {
    const size_t eq = x.find('=');
    if (eq == std::string::npos || eq == 0) return Status::Invalid("-X '{}' must be name=value", x);
    props.emplace_back(x.substr(0, eq), x.substr(eq + 1), "-X");
  }
  std::string property_upstream;
  for (const auto& [name, value, origin] : props) {
    if (name == "bootstrap.servers" || name == "metadata.broker.list") {
      property_upstream = value;
      continue;
    }
    RETURN_NOT_OK(kafka::client::ApplyProperty(name, value, origin, &config.upstream_options));
  }
  RETURN_NOT_OK(kafka::client::PrepareTls(&config.upstream_options));
  if (a.upstream.empty() && !property_upstream.empty()) {
    RETURN_NOT_OK(AddUpstream(property_upstream, "bootstrap.servers", &config.upstream));
  }
  if (!props.empty() && config.upstream.empty()) {
    return Status::Invalid("-X/-F set upstream client properties: they are for --upstream (the tiered proxy) only");
  }
  if (config.server.sasl_users && !config.upstream.empty()) {
    return Status::Invalid(
        "--sasl-users is for a standalone serve: in front of a cluster the upstream authenticates each client (its "
        "SASL frames pass through on its own connection)");
  }
  if (config.server.acl && !config.upstream.empty()) {
    return Status::Invalid(
        "--acl-file is for a standalone serve: in front of a cluster the upstream's ACLs decide every read, cold "
        "ones included");
  }
  if (!a.upstream.empty() && config.upstream.empty()) {
    return Status::Invalid("--upstream: give HOST:PORT[,HOST:PORT...] of the upstream cluster's bootstrap servers");
  }
  for (const auto& t : config.topics) {
    if (t.prefer_table && config.upstream.empty()) {
      return Status::Invalid("topic '{}': prefer=table is for --upstream (the tiered proxy) only", t.name);
    }
    if (t.cold_suffix.empty()) continue;
    if (config.upstream.empty()) {
      return Status::Invalid("topic '{}': cold_suffix (--cold-suffix) is for --upstream (the tiered proxy) only",
                             t.name);
    }
    const std::string view = t.name + t.cold_suffix;
    const bool legal = view.size() <= 249 && std::all_of(view.begin(), view.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    });
    if (!legal) {
      return Status::Invalid("topic '{}': cold_suffix '{}' makes '{}', not a legal Kafka topic name (letters, digits, "
                             "'.', '_', '-'; at most 249)",
                             t.name, t.cold_suffix, view);
    }
    for (const auto& other : config.topics) {
      if (other.name == view) {
        return Status::Invalid("topic '{}': its cold view '{}' is also a tiered topic", t.name, view);
      }
    }
  }
  if (!a.broker_ports.empty()) {
    if (config.upstream.empty()) return Status::Invalid("--broker-ports is for --upstream (the tiered proxy) only");
    ASSIGN_OR_RAISE(config.broker_ports, merged::ParseBrokerPorts(a.broker_ports));
  }
  if (a.state.empty()) {
    ASSIGN_OR_RAISE(config.state_dir, DefaultStateDir(config.server.listen_port));
  } else {
    config.state_dir = a.state;
  }
  ASSIGN_OR_RAISE(int64_t refresh_ms, ParseDurationMs(a.refresh, "--refresh"));
  if (refresh_ms < 100) return Status::Invalid("--refresh '{}' is too short (at least 100ms)", a.refresh);
  config.serve.refresh = std::chrono::milliseconds(refresh_ms);
  ASSIGN_OR_RAISE(config.serve.cache_bytes, ParseByteSize(a.cache_size, "--cache-size", 1 << 20));
  if (!a.memory_budget.empty()) {
    ASSIGN_OR_RAISE(config.serve.memory_budget, ParseMemoryBudget(a.memory_budget));
  }
  config.serve.spill_dir = a.spill_dir;
  ASSIGN_OR_RAISE(int64_t delay_ms, ParseDurationMs(a.initial_rebalance_delay, "--group-initial-rebalance-delay",
                                                          BareNumber::kMilliseconds));
  config.initial_rebalance_delay = std::chrono::milliseconds(delay_ms);
  if (a.threads < 1 || a.threads > 256) return Status::Invalid("--threads must be 1..256");
  config.threads = a.threads;
  config.on_stop_signal = RecordStopSignal;
  return serve::RunServe(config);
}

}  // namespace

void RegisterServe(CLI::App* app, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app->add_subcommand("serve", "Serve Iceberg tables as Kafka topics over the Kafka protocol");
  args->catalog.Register(cmd);
  cmd->add_option("--topic", args->topics,
                  "Serve a table as a topic: NAME=NAMESPACE.TABLE[:layout=L][:compression=C][:column=FIELD=COL]"
                  "[:source-topic=T][:prefer=upstream|table][:cold-suffix=S][:value-format=json|avro|protobuf|json-schema]; repeatable (in --config: [[topic]] tables with name, table, layout, "
                  "compression, column, source-topic, ...). source-topic picks one topic of a table that holds several")
      ->type_name("NAME=NS.TABLE");
  cmd->add_option("--table-prefix", args->table_prefix,
                  "Also serve every Kafka-shaped table of this namespace, each as a topic named like the table");
  cmd->add_option("--layout", args->layout, "Default layout of every topic (auto, thaw, redpanda, ...; see inspect)");
  cmd->add_option("--column", args->columns, "Default column override FIELD=COLUMN of every topic; repeatable");
  cmd->add_option("--value-format", args->value_format,
                  "Default of every topic (per topic :value-format=F): decoded value columns as json (default), avro, "
                  "protobuf or json-schema, framed with a schema registry id (--schema-registry; "
                  "docs/schema-registry.md)")
      ->type_name("FORMAT");
  AddRegistryOptions(cmd, &args->registry);
  cmd->add_option("--compression", args->compression,
                  "Default batch compression of every topic: none, gzip, snappy, lz4, zstd (default none)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (default 127.0.0.1:9192, loopback only: not a local broker's 9092)");
  cmd->add_option("--advertise", args->advertise,
                  "HOST:PORT clients are told to connect to (default: the --listen address)");
  cmd->add_option("--upstream", args->upstream,
                  "Run in front of this Kafka cluster (HOST:PORT[,HOST:PORT...] bootstrap servers): every --topic "
                  "NAME is an upstream topic whose history below the upstream's log start is read from its table, "
                  "everything else passes through (docs/serve.md, \"In front of a cluster\")")
      ->type_name("HOST:PORT,...");
  cmd->add_option("--broker-ports", args->broker_ports,
                  "With --upstream: upstream broker N is reachable through port START+N of the advertised host "
                  "(START[-END]; default --listen's port + 1, 100 ports)")
      ->type_name("START[-END]");
  cmd->add_option("--tls-cert", args->tls_cert,
                  "TLS on every listener: the server's certificate chain (PEM); a renewed file is used for new "
                  "connections without a restart")
      ->type_name("FILE");
  cmd->add_option("--tls-key", args->tls_key, "TLS: the certificate's private key (PEM, unencrypted)")
      ->type_name("FILE");
  cmd->add_option("--tls-client-ca", args->tls_client_ca,
                  "Mutual TLS: clients must present a certificate signed by one of these CAs (PEM)")
      ->type_name("FILE");
  cmd->add_option("--sasl-users", args->sasl_users,
                  "SASL on the listener (SASL_PLAINTEXT, or SASL_SSL with --tls-cert): PLAIN and SCRAM-SHA-256/512 "
                  "against this file of salted SCRAM credentials (write it with --add-user)")
      ->type_name("FILE");
  cmd->add_option("--add-user", args->add_user,
                  "Add (or replace) user NAME in --sasl-users FILE, the password read from stdin, and exit")
      ->type_name("NAME");
  cmd->add_option("--acl-file", args->acl_file,
                  "ACLs in Kafka's terms, one a line: allow|deny User:NAME|User:* OPERATION topic|group NAME|"
                  "prefixed:PREFIX|* (READ, DESCRIBE, ALL, ...); a request no ACL allows is denied; the principal "
                  "is the SASL user, User:ANONYMOUS without --sasl-users (docs/serve.md, \"ACLs\")")
      ->type_name("FILE");
  cmd->add_option("--cold-suffix", args->cold_suffix,
                  "With --upstream: also serve each tiered topic's history alone (the table, Iceberg only) as topic "
                  "NAME+SUFFIX, e.g. .cold (per topic: :cold_suffix=S; an empty S turns it off)")
      ->type_name("SUFFIX");
  cmd->add_option("-X", args->properties,
                  "With --upstream: an upstream client property name=value, as Kafka clients name them "
                  "(socket.connection.setup.timeout.ms, request.timeout.ms, receive.message.max.bytes, client.id, "
                  "security.protocol=PLAINTEXT; bootstrap.servers instead of --upstream); repeatable, wins over -F")
      ->type_name("NAME=VALUE");
  cmd->add_option("-F", args->properties_file,
                  "With --upstream: a properties file of upstream client properties (name=value lines, # comments)")
      ->type_name("FILE");
  cmd->add_option("--state", args->state,
                  "Directory of the server's state: committed group offsets, leader epochs, cluster id (default "
                  "$XDG_STATE_HOME/thaw/serve-PORT, or ~/.local/state/thaw/serve-PORT; PORT is --listen's)")
      ->type_name("DIR");
  cmd->add_option("--refresh", args->refresh, "How often tables are checked for new snapshots (default 5s)")
      ->type_name("DURATION");
  cmd->add_option(
         "--cache-size", args->cache_size,
         "Memory for encoded record batches: SIZE (256MiB, 2GiB; a bare number is MiB; default 1GiB; at least the "
         "partitions read at once x a row group's size)")
      ->type_name("SIZE");
  cmd->add_option("--memory-budget", args->memory_budget,
                  "Memory for decoding row groups: SIZE (512MiB, 2GiB; a bare number is MiB; "
                  "default 512MiB), counted as decoded; beyond it files that overlap in offset range are merged "
                  "as streams and sorted through --spill-dir; the readers of a topic's streamed partitions share it "
                  "(docs/serve.md)")
      ->type_name("SIZE");
  cmd->add_option("--spill-dir", args->spill_dir,
                  "Directory for sorting files not in offset order (default $TMPDIR or /tmp; private "
                  "subdirectories, removed when done)")
      ->type_name("DIR");
  args->log.Register(cmd);
  AddOpsOptions(cmd, &args->ops);
  cmd->add_option("--group-initial-rebalance-delay", args->initial_rebalance_delay,
                  "How long a new group waits for more members before its first rebalance (Kafka's "
                  "group.initial.rebalance.delay.ms: a bare number is milliseconds, as there; default 3s)")
      ->type_name("DURATION");
  cmd->add_option("--threads", args->threads, "Threads reading tables (default 4)");
  cmd->callback([args, exit_code]() {
    ReportError("serve", RunServeCommand(*args), exit_code);
  });
}

}  // namespace thaw::cli
