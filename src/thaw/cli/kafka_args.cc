#include "thaw/cli/kafka_args.h"

#include "thaw/kafka/ca_bundle.h"

#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <librdkafka/rdkafka.h>

#include "thaw/common/properties.h"
#include "thaw/common/secrets.h"

namespace thaw::cli {

Result<std::vector<std::pair<std::string, std::string>>> ReadPropertiesFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid("-F {}: cannot read the properties file", path);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseProperties(text.str(), "-F " + path);
}

void KafkaArgs::Register(CLI::App* app) {
  app->add_option("-b,--brokers,--bootstrap-server", brokers, "Kafka bootstrap servers HOST:PORT[,...]");
  app->add_option("-X", properties, "librdkafka property name=value (repeatable; wins over -F)");
  app->add_option("-F", properties_file,
                  "Properties file of librdkafka settings (name=value lines, # comments), as kcat -F and the Java "
                  "tools' --command-config take");
}

Result<kafka::rdkafka::KafkaConfig> KafkaArgs::Resolve() const {
  kafka::rdkafka::KafkaConfig c;
  std::map<std::string, std::string> origin;  // property -> "-F FILE" or "-X"
  if (!properties_file.empty()) {
    ASSIGN_OR_RAISE(auto file, ReadPropertiesFile(properties_file));
    for (auto& [k, v] : file) {
      c.properties[k] = v;
      origin[k] = "-F " + properties_file;
    }
  }
  for (const auto& p : properties) {
    RETURN_NOT_OK(kafka::rdkafka::ParseProperty(p, &c.properties));
    origin[p.substr(0, p.find('='))] = "-X";
  }
  // Secrets given by reference (@FILE, ${env:NAME}) are read now.
  for (auto& [k, v] : c.properties) {
    ASSIGN_OR_RAISE(v, ResolveSecretReference(k, v, origin[k]));
  }
  // TLS without ssl.ca.location: the system's CA bundle as a file
  // (ca_bundle.h: librdkafka's own default crashes in this process).
  if (auto proto = c.properties.find("security.protocol"); proto != c.properties.end()) {
    std::string p = proto->second;
    for (char& ch : p) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if ((p == "ssl" || p == "sasl_ssl") && !c.properties.count("ssl.ca.location") &&
        !c.properties.count("ssl.ca.pem") && !c.properties.count("ssl.ca.certificate.stores")) {
      c.properties["ssl.ca.location"] = kafka::SystemCaFile();
    }
  }
  // Unknown names and malformed values are bad usage, found before anything
  // connects (librdkafka checks them again when the client is made).
  std::unique_ptr<rd_kafka_conf_t, void (*)(rd_kafka_conf_t*)> conf(rd_kafka_conf_new(), rd_kafka_conf_destroy);
  for (const auto& [k, v] : c.properties) {
    char err[512];
    if (rd_kafka_conf_set(conf.get(), k.c_str(), v.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
      return Status::Invalid("{}: Kafka client property '{}': {}", origin[k], k, err);
    }
  }
  c.brokers = brokers;
  for (const char* name : {"bootstrap.servers", "metadata.broker.list"}) {
    auto it = c.properties.find(name);
    if (it == c.properties.end()) continue;
    if (c.brokers.empty()) c.brokers = it->second;
    c.properties.erase(it);
  }
  return c;
}

}  // namespace thaw::cli
