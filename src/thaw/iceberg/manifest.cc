#include "thaw/iceberg/manifest.h"

#include <algorithm>
#include <cstring>

#include "thaw/iceberg/avro/avro.h"

namespace thaw::iceberg {

using avro::Value;

bool Datum::operator==(const Datum& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case kNull:
      return true;
    case kInt:
      return i == o.i;
    case kDouble: {
      // Partition equality compares floats by normalised bits (NaN == NaN).
      if (d != d && o.d != o.d) return true;
      return d == o.d;
    }
    case kBytes:
      return s == o.s;
  }
  return false;
}

bool Datum::operator<(const Datum& o) const {
  if (kind != o.kind) return kind < o.kind;
  switch (kind) {
    case kNull:
      return false;
    case kInt:
      return i < o.i;
    case kDouble:
      return d < o.d;
    case kBytes:
      return s < o.s;  // unsigned lexicographic via std::string? see note below
  }
  return false;
}

std::string Datum::ToString() const {
  switch (kind) {
    case kNull:
      return "null";
    case kInt:
      return std::to_string(i);
    case kDouble:
      return fmt::format("{}", d);
    case kBytes:
      return s;
  }
  return "?";
}

bool ManifestFile::may_have_live_files() const {
  if (added_files && existing_files) return *added_files + *existing_files > 0;
  return true;
}

std::optional<int64_t> DecodeIntegerBound(const std::string& b) {
  if (b.size() == 4) {
    int32_t v;
    std::memcpy(&v, b.data(), 4);
    return v;
  }
  if (b.size() == 8) {
    int64_t v;
    std::memcpy(&v, b.data(), 8);
    return v;
  }
  return std::nullopt;
}

Datum DecodeBound(const std::string& b, const Type& type) {
  Datum d;
  switch (type.id) {
    case TypeId::kBoolean:
      if (b.size() == 1) {
        d.kind = Datum::kInt;
        d.i = b[0] != 0;
      }
      break;
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      if (auto v = DecodeIntegerBound(b)) {
        d.kind = Datum::kInt;
        d.i = *v;
        // A 4-byte bound on a timestamp column was written as a date (promotion).
        if (b.size() == 4 && (type.id == TypeId::kTimestamp || type.id == TypeId::kTimestampTz))
          d.i *= 86'400'000'000LL;
      }
      break;
    case TypeId::kFloat:
    case TypeId::kDouble:
      if (b.size() == 4) {
        float f;
        std::memcpy(&f, b.data(), 4);
        d.kind = Datum::kDouble;
        d.d = f;
      } else if (b.size() == 8) {
        double x;
        std::memcpy(&x, b.data(), 8);
        d.kind = Datum::kDouble;
        d.d = x;
      }
      break;
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed:
    case TypeId::kUuid:
      d.kind = Datum::kBytes;
      d.s = b;
      break;
    default:
      break;  // decimals, geo, nested: no ordering used for pruning
  }
  return d;
}

namespace {

const Value* Field(const Value& rec, int32_t id, std::string_view name) {
  if (const Value* v = rec.GetById(id)) return v;
  return rec.Get(name);
}

std::optional<int64_t> OptLong(const Value& rec, int32_t id, std::string_view name) {
  const Value* v = Field(rec, id, name);
  if (!v || v->is_null()) return std::nullopt;
  return v->integer;
}

std::optional<std::string> OptBytes(const Value& rec, int32_t id, std::string_view name) {
  const Value* v = Field(rec, id, name);
  if (!v || v->is_null()) return std::nullopt;
  return v->bytes;
}

Datum ToDatum(const Value& v) {
  Datum d;
  switch (v.type) {
    case avro::Type::kNull:
      break;
    case avro::Type::kBoolean:
      d.kind = Datum::kInt;
      d.i = v.boolean;
      break;
    case avro::Type::kInt:
    case avro::Type::kLong:
    case avro::Type::kEnum:
      d.kind = Datum::kInt;
      d.i = v.integer;
      break;
    case avro::Type::kFloat:
    case avro::Type::kDouble:
      d.kind = Datum::kDouble;
      d.d = v.real;
      break;
    case avro::Type::kBytes:
    case avro::Type::kString:
    case avro::Type::kFixed:
      d.kind = Datum::kBytes;
      d.s = v.bytes;
      break;
    default:
      break;
  }
  return d;
}

// Iceberg writes map<int, X> as an array of {key, value} records.
template <typename T, typename F>
void ReadIntMap(const Value* v, std::map<int32_t, T>* out, F convert, const std::vector<int32_t>* keep) {
  if (!v || v->is_null()) return;
  auto wanted = [&](int32_t id) { return !keep || std::binary_search(keep->begin(), keep->end(), id); };
  if (v->type == avro::Type::kArray) {
    for (const auto& kv : v->items) {
      if (kv.type != avro::Type::kRecord || kv.items.size() < 2) continue;
      const auto id = static_cast<int32_t>(kv.items[0].integer);
      if (wanted(id)) out->emplace(id, convert(kv.items[1]));
    }
  } else if (v->type == avro::Type::kMap) {
    for (size_t i = 0; i < v->items.size() && i < v->keys.size(); ++i) {
      const int32_t id = std::atoi(v->keys[i].c_str());
      if (wanted(id)) out->emplace(id, convert(v->items[i]));
    }
  }
}

Status ParseDataFile(const Value& df, const PartitionSpec& spec, DataFile* out, const std::vector<int32_t>* keep) {
  out->spec_id = spec.spec_id;
  if (auto c = OptLong(df, 134, "content")) out->content = static_cast<FileContent>(*c);
  auto path = OptBytes(df, 100, "file_path");
  if (!path) return Status::Corrupt("data_file without file_path");
  out->path = std::move(*path);
  if (auto f = OptBytes(df, 101, "file_format")) {
    out->format = *f;
    for (auto& c : out->format) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (const Value* p = Field(df, 102, "partition"); p && p->type == avro::Type::kRecord) {
    out->partition.reserve(spec.fields.size());
    for (size_t i = 0; i < spec.fields.size(); ++i) {
      const Value* pv = p->GetById(spec.fields[i].field_id);
      if (!pv) pv = p->Get(spec.fields[i].name);
      if (!pv && i < p->items.size()) pv = &p->items[i];
      out->partition.push_back(pv ? ToDatum(*pv) : Datum{});
    }
  }
  out->record_count = OptLong(df, 103, "record_count").value_or(0);
  out->file_size = OptLong(df, 104, "file_size_in_bytes").value_or(0);
  auto as_long = [](const Value& v) { return v.integer; };
  auto as_bytes = [](const Value& v) { return v.bytes; };
  ReadIntMap(Field(df, 108, "column_sizes"), &out->column_sizes, as_long, keep);
  ReadIntMap(Field(df, 109, "value_counts"), &out->value_counts, as_long, keep);
  ReadIntMap(Field(df, 110, "null_value_counts"), &out->null_value_counts, as_long, keep);
  ReadIntMap(Field(df, 137, "nan_value_counts"), &out->nan_value_counts, as_long, keep);
  ReadIntMap(Field(df, 125, "lower_bounds"), &out->lower_bounds, as_bytes, keep);
  ReadIntMap(Field(df, 128, "upper_bounds"), &out->upper_bounds, as_bytes, keep);
  if (const Value* eq = Field(df, 135, "equality_ids"); eq && eq->type == avro::Type::kArray) {
    for (const auto& id : eq->items) out->equality_ids.push_back(static_cast<int32_t>(id.integer));
  }
  if (const Value* so = Field(df, 132, "split_offsets"); so && so->type == avro::Type::kArray) {
    for (const auto& o : so->items) out->split_offsets.push_back(o.integer);
  }
  if (auto s = OptLong(df, 140, "sort_order_id")) out->sort_order_id = static_cast<int32_t>(*s);
  out->first_row_id = OptLong(df, 142, "first_row_id");
  out->referenced_data_file = OptBytes(df, 143, "referenced_data_file");
  out->content_offset = OptLong(df, 144, "content_offset");
  out->content_size = OptLong(df, 145, "content_size_in_bytes");
  return Status::OK();
}

}  // namespace

Result<std::vector<ManifestFile>> ReadManifestList(storage::FileIO& io, const TableMetadata& md,
                                                   const Snapshot& snapshot) {
  std::vector<ManifestFile> out;
  if (snapshot.manifest_list.empty()) {
    for (const auto& path : snapshot.v1_manifests) {
      ManifestFile mf;
      mf.path = path;
      mf.added_snapshot_id = snapshot.snapshot_id;
      mf.spec_from_list = false;
      out.push_back(std::move(mf));
    }
    return out;
  }
  const std::string source = "manifest list " + snapshot.manifest_list;
  auto data = io.ReadAll(snapshot.manifest_list);
  if (!data.ok()) return data.status().WithContext(fmt::format("snapshot {}", snapshot.snapshot_id));
  ASSIGN_OR_RAISE(auto reader, avro::OcfReader::Open(std::move(*data), source));
  Value v;
  while (true) {
    ASSIGN_OR_RAISE(bool more, reader->Next(&v));
    if (!more) break;
    ManifestFile mf;
    auto path = OptBytes(v, 500, "manifest_path");
    if (!path) return Status::Corrupt("{}: entry without manifest_path", source);
    mf.path = std::move(*path);
    mf.length = OptLong(v, 501, "manifest_length").value_or(0);
    mf.spec_id = static_cast<int32_t>(OptLong(v, 502, "partition_spec_id").value_or(0));
    mf.content = static_cast<ManifestContent>(OptLong(v, 517, "content").value_or(0));
    mf.sequence_number = OptLong(v, 515, "sequence_number").value_or(0);
    mf.min_sequence_number = OptLong(v, 516, "min_sequence_number").value_or(0);
    mf.added_snapshot_id = OptLong(v, 503, "added_snapshot_id").value_or(snapshot.snapshot_id);
    auto count = [&](int32_t id, const char* v2name, const char* v1name) -> std::optional<int32_t> {
      auto c = OptLong(v, id, v2name);
      if (!c) c = OptLong(v, id, v1name);
      return c ? std::optional<int32_t>(static_cast<int32_t>(*c)) : std::nullopt;
    };
    mf.added_files = count(504, "added_files_count", "added_data_files_count");
    mf.existing_files = count(505, "existing_files_count", "existing_data_files_count");
    mf.deleted_files = count(506, "deleted_files_count", "deleted_data_files_count");
    mf.added_rows = OptLong(v, 512, "added_rows_count");
    mf.existing_rows = OptLong(v, 513, "existing_rows_count");
    mf.deleted_rows = OptLong(v, 514, "deleted_rows_count");
    if (const Value* parts = Field(v, 507, "partitions"); parts && parts->type == avro::Type::kArray) {
      for (const auto& s : parts->items) {
        FieldSummary fs;
        if (const Value* cn = Field(s, 509, "contains_null"); cn && !cn->is_null()) fs.contains_null = cn->boolean;
        if (const Value* nan = Field(s, 518, "contains_nan"); nan && !nan->is_null()) fs.contains_nan = nan->boolean;
        fs.lower_bound = OptBytes(s, 510, "lower_bound");
        fs.upper_bound = OptBytes(s, 511, "upper_bound");
        mf.partitions.push_back(std::move(fs));
      }
    }
    mf.first_row_id = OptLong(v, 520, "first_row_id");
    out.push_back(std::move(mf));
  }
  return out;
}

Result<std::vector<ManifestEntry>> ReadManifest(storage::FileIO& io, const TableMetadata& md,
                                                const ManifestFile& manifest, const std::vector<int32_t>* metric_ids) {
  const std::string source = "manifest " + manifest.path;
  auto data = manifest.length > 0 ? io.ReadAllWithLength(manifest.path, manifest.length) : io.ReadAll(manifest.path);
  if (!data.ok()) return data.status();
  ASSIGN_OR_RAISE(auto reader, avro::OcfReader::Open(std::move(*data), source));
  // Planning prunes by bounds only: column_sizes, value_counts,
  // null_value_counts, nan_value_counts, key_metadata and split_offsets are
  // decoded past.
  if (metric_ids) reader->SkipFieldIds({108, 109, 110, 131, 132, 137});

  int32_t spec_id = manifest.spec_id;
  if (!manifest.spec_from_list) {
    if (auto s = reader->Meta("partition-spec-id")) spec_id = std::atoi(s->c_str());
  }
  const PartitionSpec* spec = md.SpecById(spec_id);
  if (!spec) return Status::Corrupt("{}: partition spec {} is not in the table metadata", source, spec_id);

  std::vector<ManifestEntry> out;
  int64_t next_row_id = manifest.first_row_id.value_or(0);
  Value v;
  while (true) {
    ASSIGN_OR_RAISE(bool more, reader->Next(&v));
    if (!more) break;
    ManifestEntry e;
    e.status = static_cast<EntryStatus>(OptLong(v, 0, "status").value_or(1));
    auto snapshot_id = OptLong(v, 1, "snapshot_id");
    e.snapshot_id = snapshot_id.value_or(manifest.added_snapshot_id);
    auto seq = OptLong(v, 3, "sequence_number");
    auto file_seq = OptLong(v, 4, "file_sequence_number");
    if (md.format_version == 1) {
      e.sequence_number = e.file_sequence_number = 0;
    } else {
      // Only ADDED entries inherit; EXISTING/DELETED carry explicit numbers.
      const bool inherit = e.status == EntryStatus::kAdded;
      e.sequence_number = seq ? *seq : (inherit ? manifest.sequence_number : 0);
      e.file_sequence_number = file_seq ? *file_seq : (inherit ? manifest.sequence_number : 0);
    }
    const Value* df = Field(v, 2, "data_file");
    if (!df || df->type != avro::Type::kRecord) return Status::Corrupt("{}: entry without data_file", source);
    Status st = ParseDataFile(*df, *spec, &e.file, metric_ids);
    if (!st.ok()) return st.WithContext(source);
    if (md.format_version >= 3 && e.file.content == FileContent::kData && !e.file.first_row_id &&
        manifest.first_row_id) {
      e.file.first_row_id = next_row_id;
      next_row_id += e.file.record_count;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace thaw::iceberg
