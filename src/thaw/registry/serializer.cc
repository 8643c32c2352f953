#include "thaw/registry/serializer.h"

#include <algorithm>
#include <optional>

#include "thaw/common/log.h"
#include "thaw/records/avro_derive.h"
#include "thaw/records/avro_value.h"
#include "thaw/records/json_schema_value.h"
#include "thaw/records/protobuf_derive.h"
#include "thaw/records/protobuf_value.h"
#include "thaw/registry/client.h"

namespace thaw::registry {

namespace {

Result<bool> Bool(const std::string& key, const std::string& v, std::string_view origin) {
  if (v == "true" || v == "True" || v == "1") return true;
  if (v == "false" || v == "False" || v == "0") return false;
  return Status::Invalid("{}: {}='{}' is not true or false", origin, key, v);
}

}  // namespace

Result<SerializerSettings> SerializerSettings::Take(storage::PropertyMap* properties, std::string_view origin) {
  SerializerSettings s;
  auto take = [&](const char* key) -> std::optional<std::string> {
    auto it = properties->find(key);
    if (it == properties->end()) return std::nullopt;
    std::string v = it->second;
    properties->erase(it);
    return v;
  };
  if (auto v = take("auto.register.schemas")) {
    ASSIGN_OR_RAISE(s.auto_register, Bool("auto.register.schemas", *v, origin));
  }
  if (auto v = take("use.latest.version")) {
    ASSIGN_OR_RAISE(s.use_latest, Bool("use.latest.version", *v, origin));
  }
  if (auto v = take("normalize.schemas")) {
    ASSIGN_OR_RAISE(s.normalize, Bool("normalize.schemas", *v, origin));
  }
  auto strategy = take("value.subject.name.strategy");
  if (auto v = take("subject.name.strategy"); v && !strategy) strategy = v;
  if (strategy) {
    // Java's class names and confluent-kafka-python's function names.
    std::string name = *strategy;
    if (auto dot = name.rfind('.'); dot != std::string::npos) name = name.substr(dot + 1);
    if (name == "TopicNameStrategy" || name == "topic_subject_name_strategy") {
      s.strategy = SubjectNameStrategy::kTopic;
    } else if (name == "RecordNameStrategy" || name == "record_subject_name_strategy") {
      s.strategy = SubjectNameStrategy::kRecord;
    } else if (name == "TopicRecordNameStrategy" || name == "topic_record_subject_name_strategy") {
      s.strategy = SubjectNameStrategy::kTopicRecord;
    } else {
      return Status::Invalid(
          "{}: value.subject.name.strategy '{}': use TopicNameStrategy, RecordNameStrategy or TopicRecordNameStrategy",
          origin, *strategy);
    }
  }
  if (s.use_latest && s.auto_register) {
    s.auto_register = false;  // as Confluent's serializers: the latest version is used as it is
  }
  return s;
}

std::string SubjectName(SubjectNameStrategy strategy, const std::string& topic, const std::string& record_full_name) {
  switch (strategy) {
    case SubjectNameStrategy::kTopic:
      return topic + "-value";
    case SubjectNameStrategy::kRecord:
      return record_full_name;
    case SubjectNameStrategy::kTopicRecord:
      return topic + "-" + record_full_name;
  }
  return topic + "-value";
}

std::string DerivedRecordName(const std::string& topic) {
  std::string name;
  for (char c : topic) name.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_');
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return "thaw." + name;
}

Result<records::ValueAvroChooser::Choice> RegistryValueChooser::Choose(const iceberg::TypePtr& value_struct) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = value_struct->ToString();
  if (auto it = chosen_.find(key); it != chosen_.end()) return it->second;
  ASSIGN_OR_RAISE(Choice c, ChooseUncached(value_struct));
  chosen_[key] = c;
  return c;
}

Result<records::ValueAvroChooser::Choice> RegistryValueChooser::RegisterDerived(const std::string& subject,
                                                                                const std::string& derived,
                                                                                SchemaType type,
                                                                                std::string_view what) {
  Schema schema{type, derived, {}};
  if (settings_.auto_register && settings_.dry_run) {
    auto found = registry_->Lookup(subject, schema, settings_.normalize);
    if (found.ok()) return Choice{derived, found->id, {}, {}};
    if (found.status().code() != StatusCode::kNotFound) return found.status();
    log::Info("dry run: a replay would register the {} derived from the table under subject {}; nothing is "
              "registered now",
              what, subject);
    return Choice{derived, std::nullopt, {}, {}};
  }
  if (settings_.auto_register) {
    auto id = registry_->Register(subject, schema, settings_.normalize);
    if (!id.ok()) {
      return id.status().WithContext(
          fmt::format("registering the {} derived from the table under subject '{}'", what, subject));
    }
    log::Info("values encoded with a {} derived from the table, registered under subject {} (id {})", what, subject,
              *id);
    return Choice{derived, *id, {}, {}};
  }
  auto found = registry_->Lookup(subject, schema, settings_.normalize);
  if (!found.ok()) {
    if (found.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(
          "auto.register.schemas=false and subject '{}' does not have the {} derived from the table: register it "
          "({}), or allow auto.register.schemas, or use.latest.version",
          subject, what, derived);
    }
    return found.status();
  }
  return Choice{derived, found->id, {}, {}};
}

// use.latest.version: the subject's latest version must exist and be of
// `type` (`what` names it in the message).
static Status RequireLatest(const Result<SubjectVersion>& latest, const std::string& subject, SchemaType type,
                            std::string_view what) {
  if (!latest.ok()) {
    return Status::NotFound("use.latest.version: subject '{}' has no schema in the registry ({}); register one, or "
                            "drop use.latest.version to register the schema derived from the table",
                            subject, latest.status().message());
  }
  if (latest->schema.type != type) {
    return Status::Invalid("use.latest.version: the latest schema of subject '{}' (id {}) is {}, not {}", subject,
                           latest->id, SchemaTypeName(latest->schema.type), what);
  }
  return Status::OK();
}

// The first field the table holds wider than `writer` gives it (a long
// column where the schema says int, double where it says float, a decimal
// of more digits): the archive decodes such older schemas into widened
// columns, but encoding a table's values with one fails on the first value
// that does not fit, so replay and serve refuse it before producing.
static Status NoNarrowing(const iceberg::Type& table, const iceberg::Type& writer, const std::string& path) {
  using iceberg::TypeId;
  if (iceberg::CanPromote(writer, table)) {
    return Status::Invalid("field '{}' is {} in the table but {} in the schema: the table's values may not fit",
                           path.empty() ? "value" : path, table.ToString(), writer.ToString());
  }
  if (table.id != writer.id) return Status::OK();
  if (table.id == TypeId::kStruct) {
    for (const auto& wf : writer.fields) {
      auto it = std::find_if(table.fields.begin(), table.fields.end(),
                             [&](const iceberg::NestedField& f) { return f.name == wf.name; });
      if (it != table.fields.end()) {
        RETURN_NOT_OK(NoNarrowing(*it->type, *wf.type, path.empty() ? wf.name : path + "." + wf.name));
      }
    }
  } else if (table.id == TypeId::kList && !table.fields.empty() && !writer.fields.empty()) {
    RETURN_NOT_OK(NoNarrowing(*table.fields[0].type, *writer.fields[0].type, path + ".element"));
  } else if (table.id == TypeId::kMap && table.fields.size() == 2 && writer.fields.size() == 2) {
    RETURN_NOT_OK(NoNarrowing(*table.fields[1].type, *writer.fields[1].type, path + ".value"));
  }
  return Status::OK();
}

// A latest schema's references, or none (logged) when they cannot be had:
// only for the choice that merely tries the latest before deriving one.
static std::optional<records::SchemaReferences> ReferencesOrNone(SchemaRegistry& registry, const SubjectVersion& v) {
  auto refs = registry.ResolveReferences(v.schema);
  if (refs.ok()) return std::move(*refs);
  log::Warn("the latest schema of subject {} (id {}) is passed over: {}", v.subject, v.id, refs.status().message());
  return std::nullopt;
}

Result<records::ValueAvroChooser::Choice> AvroValueChooser::ChooseUncached(const iceberg::TypePtr& value_struct) {
  ASSIGN_OR_RAISE(std::string derived, records::DeriveAvroSchema(*value_struct, DerivedRecordName(topic_)));
  const std::string subject = SubjectName(settings_.strategy, topic_, DerivedRecordName(topic_));
  auto latest = registry_->LatestVersion(subject);
  if (!latest.ok() && latest.status().code() != StatusCode::kNotFound) return latest.status();
  if (settings_.use_latest) {
    RETURN_NOT_OK(RequireLatest(latest, subject, SchemaType::kAvro, "Avro"));
    ASSIGN_OR_RAISE(auto refs, registry_->ResolveReferences(latest->schema));
    auto fits = records::AvroValueSchema::Resolve(latest->schema.text, value_struct, refs);
    auto own = records::AvroValueSchema::Make(latest->schema.text, 1, refs);
    Status narrowing = own.ok() ? NoNarrowing(*value_struct, *(*own)->iceberg_type(), "") : own.status();
    if (!fits.ok() || !narrowing.ok()) {
      return Status::Invalid("the value columns cannot be encoded with the latest schema of subject '{}' (id {}): {}",
                             subject, latest->id, (fits.ok() ? narrowing : fits.status()).message());
    }
    log::Info("values encoded with the latest schema of subject {} (id {}, version {})", subject, latest->id,
              latest->version);
    return Choice{latest->schema.text, latest->id, {}, std::move(refs)};
  }
  // The subject's latest version, when it has exactly the table's fields.
  std::optional<records::SchemaReferences> refs;
  if (latest.ok() && latest->schema.type == SchemaType::kAvro) refs = ReferencesOrNone(*registry_, *latest);
  if (refs) {
    auto fits = records::AvroValueSchema::Resolve(latest->schema.text, value_struct, *refs);
    auto own = records::AvroValueSchema::Make(latest->schema.text, 1, *refs);
    if (fits.ok() && own.ok() && records::AvroValueSchema::Resolve(derived, (*own)->iceberg_type()).ok()) {
      log::Info("values encoded with the latest schema of subject {} (id {}, version {}): it matches the table",
                subject, latest->id, latest->version);
      return Choice{latest->schema.text, latest->id, {}, std::move(*refs)};
    }
  }
  return RegisterDerived(subject, derived, SchemaType::kAvro, "schema");
}

Result<records::ValueAvroChooser::Choice> JsonSchemaValueChooser::ChooseUncached(const iceberg::TypePtr& value_struct) {
  ASSIGN_OR_RAISE(std::string derived, records::DeriveJsonSchema(*value_struct, DerivedRecordName(topic_)));
  // The kinds of the JSON Thaw writes (maps cannot be compared this way).
  auto written = records::JsonSchemaValue::Make(derived, 1);
  const std::string subject = SubjectName(settings_.strategy, topic_, DerivedRecordName(topic_));
  auto latest = registry_->LatestVersion(subject);
  if (!latest.ok() && latest.status().code() != StatusCode::kNotFound) return latest.status();
  const bool latest_json = latest.ok() && latest->schema.type == SchemaType::kJson;
  if (settings_.use_latest) {
    RETURN_NOT_OK(RequireLatest(latest, subject, SchemaType::kJson, "JSON Schema"));
    ASSIGN_OR_RAISE(auto refs, registry_->ResolveReferences(latest->schema));
    if (written.ok()) {
      if (auto fits = records::JsonSchemaValue::Resolve(latest->schema.text, (*written)->iceberg_type(), refs);
          !fits.ok()) {
        return Status::Invalid("the value columns do not give what the latest schema of subject '{}' (id {}) "
                               "describes: {}",
                               subject, latest->id, fits.status().message());
      }
    }
    log::Info("values framed with the latest schema of subject {} (id {}, version {})", subject, latest->id,
              latest->version);
    return Choice{latest->schema.text, latest->id, {}, std::move(refs)};
  }
  std::optional<records::SchemaReferences> refs;
  if (latest_json && written.ok()) refs = ReferencesOrNone(*registry_, *latest);
  if (refs) {
    auto own = records::JsonSchemaValue::Make(latest->schema.text, 1, *refs);
    if (own.ok() && records::JsonSchemaValue::Resolve(latest->schema.text, (*written)->iceberg_type(), *refs).ok() &&
        records::JsonSchemaValue::Resolve(derived, (*own)->iceberg_type()).ok()) {
      log::Info("values framed with the latest schema of subject {} (id {}, version {}): it matches the table",
                subject, latest->id, latest->version);
      return Choice{latest->schema.text, latest->id, {}, std::move(*refs)};
    }
  }
  return RegisterDerived(subject, derived, SchemaType::kJson, "JSON Schema");
}

// The first top-level message of .proto `text` that the columns resolve
// against, with the struct it maps to on its own; or the first message's
// error.
struct FittingMessage {
  std::string name;
  iceberg::TypePtr own;
};
static Result<FittingMessage> FindFittingMessage(const std::string& text, const records::SchemaReferences& refs,
                                                 const iceberg::TypePtr& value_struct) {
  ASSIGN_OR_RAISE(auto names, records::ProtobufValueSchema::MessageNames(text, refs));
  Status first = Status::Invalid("the schema declares no message");
  for (size_t k = 0; k < names.size(); ++k) {
    auto fits = records::ProtobufValueSchema::Resolve(text, names[k], value_struct, refs);
    Status st = fits.status();
    if (fits.ok()) {
      const int32_t indexes[] = {static_cast<int32_t>(k)};
      auto own = records::ProtobufValueSchema::Make(text, indexes, 1, refs);
      st = own.ok() ? NoNarrowing(*value_struct, *(*own)->iceberg_type(), "") : own.status();
      if (st.ok()) return FittingMessage{names[k], (*own)->iceberg_type()};
    }
    if (k == 0) first = st.WithContext(fmt::format("message {}", names[k]));
  }
  return first;
}

Result<records::ValueAvroChooser::Choice> ProtobufValueChooser::ChooseUncached(const iceberg::TypePtr& value_struct) {
  const std::string full_name = DerivedRecordName(topic_);
  ASSIGN_OR_RAISE(std::string derived, records::DeriveProtobufSchema(*value_struct, full_name));
  const std::string subject = SubjectName(settings_.strategy, topic_, full_name);
  auto latest = registry_->LatestVersion(subject);
  if (!latest.ok() && latest.status().code() != StatusCode::kNotFound) return latest.status();
  const bool latest_proto = latest.ok() && latest->schema.type == SchemaType::kProtobuf;
  if (settings_.use_latest) {
    RETURN_NOT_OK(RequireLatest(latest, subject, SchemaType::kProtobuf, "Protobuf"));
    ASSIGN_OR_RAISE(auto refs, registry_->ResolveReferences(latest->schema));
    auto message = FindFittingMessage(latest->schema.text, refs, value_struct);
    if (!message.ok()) {
      return Status::Invalid("the value columns cannot be encoded with the latest schema of subject '{}' (id {}): {}",
                             subject, latest->id, message.status().message());
    }
    log::Info("values encoded as message {} of the latest schema of subject {} (id {}, version {})", message->name,
              subject, latest->id, latest->version);
    return Choice{latest->schema.text, latest->id, message->name, std::move(refs)};
  }
  // The subject's latest version, when one of its messages has exactly the table's fields.
  std::optional<records::SchemaReferences> refs;
  if (latest_proto) refs = ReferencesOrNone(*registry_, *latest);
  if (refs) {
    auto message = FindFittingMessage(latest->schema.text, *refs, value_struct);
    if (message.ok() && records::ProtobufValueSchema::Resolve(derived, full_name, message->own).ok()) {
      log::Info("values encoded as message {} of the latest schema of subject {} (id {}, version {}): it matches "
                "the table",
                message->name, subject, latest->id, latest->version);
      return Choice{latest->schema.text, latest->id, message->name, std::move(*refs)};
    }
  }
  ASSIGN_OR_RAISE(Choice c, RegisterDerived(subject, derived, SchemaType::kProtobuf, "Protobuf schema"));
  c.message_name = full_name;
  return c;
}

}  // namespace thaw::registry
