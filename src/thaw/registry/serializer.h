// Values re-encoded as their consumers expect them (replay and serve
// `--value-format avro`, docs/schema-registry.md): which Avro schema a
// table's decoded value columns are written with, and the registry id they
// are framed with, chosen as Confluent's serializers choose, with their
// settings by their own names:
//   auto.register.schemas (default true), use.latest.version (false),
//   normalize.schemas (false), value.subject.name.strategy = TopicNameStrategy
//   (default: SUBJECT = TOPIC-value), RecordNameStrategy (the record's full
//   name) or TopicRecordNameStrategy (TOPIC-FULLNAME).
// The schema: with use.latest.version, the subject's latest version (the
// value columns must resolve against it); else the subject's latest version
// when it has exactly the value columns' fields and types, else one derived
// from the Iceberg columns (records/avro_derive.h), registered under the
// subject (auto.register.schemas) or looked up there (must exist). Every
// failure names the subject and what to do; nothing is produced before the
// choice is made.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "thaw/common/status.h"
#include "thaw/records/layout.h"
#include "thaw/registry/wire.h"
#include "thaw/storage/property_map.h"

namespace thaw::registry {

class SchemaRegistry;

enum class SubjectNameStrategy { kTopic, kRecord, kTopicRecord };

struct SerializerSettings {
  bool auto_register = true;
  bool use_latest = false;
  bool normalize = false;
  SubjectNameStrategy strategy = SubjectNameStrategy::kTopic;
  // Not a serializer setting: `--dry-run`. Nothing is registered; a schema
  // that a run would register is looked up, and when the subject lacks it
  // the choice has no id (the plan says so).
  bool dry_run = false;

  // Takes the serializer settings out of `properties` (the rest are the
  // registry client's); `origin` starts errors.
  static Result<SerializerSettings> Take(storage::PropertyMap* properties, std::string_view origin);
};

std::string SubjectName(SubjectNameStrategy strategy, const std::string& topic, const std::string& record_full_name);

// The record name a derived schema gets for `topic`: "thaw.<topic>" with
// every character that is not a letter, digit or _ as _.
std::string DerivedRecordName(const std::string& topic);

// What the Avro and JSON Schema choices share: the registry, the settings,
// the topic, one choice per value struct (by its text: a table is
// refreshed often), and the last step: the schema derived from the table,
// registered under the subject or looked up there.
class RegistryValueChooser : public records::ValueAvroChooser {
 public:
  RegistryValueChooser(std::shared_ptr<SchemaRegistry> registry, SerializerSettings settings, std::string topic)
      : registry_(std::move(registry)), settings_(settings), topic_(std::move(topic)) {}
  Result<Choice> Choose(const iceberg::TypePtr& value_struct) final;

 protected:
  virtual Result<Choice> ChooseUncached(const iceberg::TypePtr& value_struct) = 0;
  // `derived` (of `type`) under `subject`: registered (auto.register.schemas),
  // or looked up (a dry run registers nothing; without auto-registration it
  // must exist). `what` names it in messages ("schema", "JSON Schema").
  Result<Choice> RegisterDerived(const std::string& subject, const std::string& derived, SchemaType type,
                                 std::string_view what);

  std::shared_ptr<SchemaRegistry> registry_;
  SerializerSettings settings_;
  std::string topic_;

 private:
  std::mutex mu_;
  std::map<std::string, Choice> chosen_;
};

class AvroValueChooser : public RegistryValueChooser {
 public:
  using RegistryValueChooser::RegistryValueChooser;
  std::shared_ptr<records::ValueAvroChooser> ForTopic(const std::string& topic) const override {
    return std::make_shared<AvroValueChooser>(registry_, settings_, topic);
  }

 private:
  Result<Choice> ChooseUncached(const iceberg::TypePtr& value_struct) override;
};

// The same choice for JSON Schema (replay and serve --value-format
// json-schema): the rows stay the JSON Thaw writes (docs/layouts.md), framed
// with the id of a JSON Schema: with use.latest.version the subject's
// latest (a JSON Schema whose properties the columns have, by name and
// kind), else the latest when it maps to the same fields, else one derived
// from the columns (records::DeriveJsonSchema), registered or looked up.
class JsonSchemaValueChooser : public RegistryValueChooser {
 public:
  using RegistryValueChooser::RegistryValueChooser;
  std::string_view format() const override { return "json-schema"; }
  std::shared_ptr<records::ValueAvroChooser> ForTopic(const std::string& topic) const override {
    return std::make_shared<JsonSchemaValueChooser>(registry_, settings_, topic);
  }

 private:
  Result<Choice> ChooseUncached(const iceberg::TypePtr& value_struct) override;
};

// The same choice for Protobuf (replay and serve --value-format protobuf):
// the value struct encoded as a Protobuf message and framed with its id and
// message indexes. With use.latest.version the subject's latest (a .proto
// one of whose top-level messages the columns resolve against, the first
// such), else the latest when one of its messages has exactly the columns'
// fields and types, else one derived from the columns
// (records::DeriveProtobufSchema, message DerivedRecordName(topic)),
// registered or looked up.
class ProtobufValueChooser : public RegistryValueChooser {
 public:
  using RegistryValueChooser::RegistryValueChooser;
  std::string_view format() const override { return "protobuf"; }
  std::shared_ptr<records::ValueAvroChooser> ForTopic(const std::string& topic) const override {
    return std::make_shared<ProtobufValueChooser>(registry_, settings_, topic);
  }

 private:
  Result<Choice> ChooseUncached(const iceberg::TypePtr& value_struct) override;
};

}  // namespace thaw::registry
