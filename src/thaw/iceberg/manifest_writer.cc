#include "thaw/iceberg/manifest_writer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "thaw/iceberg/avro/avro.h"
#include "thaw/iceberg/manifest_schema.h"
#include "thaw/iceberg/schema_json.h"

namespace thaw::iceberg {

using avro::Value;

std::string EncodeIntBound(int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return out;
}

std::string EncodeLongBound(int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return out;
}

namespace {

bool IsIntLike(TypeId id) { return id == TypeId::kInt || id == TypeId::kDate; }
bool IsLongLike(TypeId id) {
  return id == TypeId::kLong || id == TypeId::kTime || id == TypeId::kTimestamp || id == TypeId::kTimestampTz ||
         id == TypeId::kTimestampNs || id == TypeId::kTimestampTzNs;
}
bool IsFloating(TypeId id) { return id == TypeId::kFloat || id == TypeId::kDouble; }
bool IsBytesLike(TypeId id) {
  return id == TypeId::kString || id == TypeId::kBinary || id == TypeId::kFixed || id == TypeId::kUuid ||
         id == TypeId::kGeometry || id == TypeId::kGeography;
}

int DecimalBytes(int precision) {
  int n = 1;
  while (static_cast<int>(std::floor((8.0 * n - 1) * std::log10(2.0))) < precision) ++n;
  return n;
}

// A decimal's unscaled value as big-endian two's complement of exactly
// `size` bytes (sign-extended or with redundant sign bytes dropped).
Result<std::string> DecimalBytesOf(const Datum& d, size_t size) {
  std::string be;
  if (d.kind == Datum::kInt) {
    const auto u = static_cast<uint64_t>(d.i);
    for (int i = 7; i >= 0; --i) be.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  } else {
    be = d.s;
  }
  if (be.empty()) be.assign(1, '\0');
  const char sign = (static_cast<unsigned char>(be[0]) & 0x80) ? '\xff' : '\0';
  while (be.size() > size && be[0] == sign && ((static_cast<unsigned char>(be[1]) & 0x80) != 0) == (sign != '\0')) {
    be.erase(0, 1);
  }
  if (be.size() > size) return Status::Invalid("decimal value does not fit {} bytes", size);
  return std::string(size - be.size(), sign) + be;
}

// Minimal big-endian two's complement (spec Appendix D for decimals).
std::string MinimalDecimal(std::string be) {
  while (be.size() > 1) {
    const auto b0 = static_cast<unsigned char>(be[0]);
    const auto b1 = static_cast<unsigned char>(be[1]);
    if ((b0 == 0x00 && !(b1 & 0x80)) || (b0 == 0xff && (b1 & 0x80))) {
      be.erase(0, 1);
    } else {
      break;
    }
  }
  return be;
}

Status KindMismatch(const Datum& d, const Type& t) {
  return Status::Invalid("value {} does not fit partition type {}", d.ToString(), t.ToString());
}

// A partition value checked against its type, as the Avro value written.
Result<Value> PartitionValue(const Datum& d, const Type& t) {
  if (d.kind == Datum::kNull) return Value::Null();
  switch (t.id) {
    case TypeId::kBoolean:
      if (d.kind != Datum::kInt) return KindMismatch(d, t);
      return Value::Boolean(d.i != 0);
    case TypeId::kInt:
    case TypeId::kDate:
      if (d.kind != Datum::kInt || d.i < INT32_MIN || d.i > INT32_MAX) return KindMismatch(d, t);
      return Value::Int(static_cast<int32_t>(d.i));
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double x = d.d;
      if (d.kind == Datum::kInt) {
        x = static_cast<double>(d.i);
      } else if (d.kind != Datum::kDouble) {
        return KindMismatch(d, t);
      }
      return t.id == TypeId::kFloat ? Value::Float(static_cast<float>(x)) : Value::Double(x);
    }
    case TypeId::kString:
      if (d.kind != Datum::kBytes) return KindMismatch(d, t);
      return Value::String(d.s);
    case TypeId::kBinary:
    case TypeId::kGeometry:
    case TypeId::kGeography:
      if (d.kind != Datum::kBytes) return KindMismatch(d, t);
      return Value::Bytes(d.s);
    case TypeId::kUuid:
    case TypeId::kFixed: {
      const size_t size = t.id == TypeId::kUuid ? 16 : static_cast<size_t>(t.length);
      if (d.kind != Datum::kBytes || d.s.size() != size) return KindMismatch(d, t);
      return Value::Fixed(d.s);
    }
    case TypeId::kDecimal: {
      if (d.kind != Datum::kInt && d.kind != Datum::kBytes) return KindMismatch(d, t);
      ASSIGN_OR_RAISE(auto bytes, DecimalBytesOf(d, static_cast<size_t>(DecimalBytes(t.precision))));
      return Value::Fixed(std::move(bytes));
    }
    default:
      if (IsLongLike(t.id)) {
        if (d.kind != Datum::kInt) return KindMismatch(d, t);
        return Value::Long(d.i);
      }
      break;
  }
  return Status::Unsupported("partition values of type {} cannot be written", t.ToString());
}

// Orders two non-null values of one partition type. Floats: -0.0 < +0.0.
int Compare(const Datum& a, const Datum& b, const Type& t) {
  if (IsFloating(t.id)) {
    const double x = a.kind == Datum::kInt ? static_cast<double>(a.i) : a.d;
    const double y = b.kind == Datum::kInt ? static_cast<double>(b.i) : b.d;
    if (x != y) return x < y ? -1 : 1;
    return std::signbit(x) == std::signbit(y) ? 0 : (std::signbit(x) ? -1 : 1);
  }
  if (t.id == TypeId::kDecimal) {
    // Both as the written fixed (same width, two's complement): flip the
    // sign bit, then unsigned order.
    std::string ka = a.s, kb = b.s;
    if (!ka.empty()) ka[0] = static_cast<char>(static_cast<unsigned char>(ka[0]) ^ 0x80);
    if (!kb.empty()) kb[0] = static_cast<char>(static_cast<unsigned char>(kb[0]) ^ 0x80);
    return ka < kb ? -1 : (kb < ka ? 1 : 0);
  }
  if (a.kind == Datum::kBytes) return a.s < b.s ? -1 : (b.s < a.s ? 1 : 0);
  return a.i < b.i ? -1 : (b.i < a.i ? 1 : 0);
}

// Single-value encoding (Appendix D) of a checked, non-null partition value.
std::string EncodeValue(const Datum& d, const Type& t) {
  switch (t.id) {
    case TypeId::kBoolean:
      return std::string(1, d.i != 0 ? '\x01' : '\x00');
    case TypeId::kFloat: {
      const auto bits = std::bit_cast<uint32_t>(static_cast<float>(d.kind == Datum::kInt ? d.i : d.d));
      return EncodeIntBound(static_cast<int32_t>(bits));
    }
    case TypeId::kDouble: {
      const auto bits = std::bit_cast<uint64_t>(d.kind == Datum::kInt ? static_cast<double>(d.i) : d.d);
      return EncodeLongBound(static_cast<int64_t>(bits));
    }
    case TypeId::kDecimal:
      return MinimalDecimal(d.s);
    default:
      if (IsIntLike(t.id)) return EncodeIntBound(static_cast<int32_t>(d.i));
      if (IsLongLike(t.id)) return EncodeLongBound(d.i);
      if (IsBytesLike(t.id)) return d.s;
      return d.s;
  }
}

// Partition field summary, accumulated over every entry (as Java's
// PartitionSummary does, deleted ones included).
struct SummaryBuilder {
  TypePtr type;
  bool contains_null = false;
  bool contains_nan = false;
  std::optional<Datum> lower, upper;

  // `written`: the value as written (decimals are ordered by their fixed).
  void Add(const Datum& d, const Value& written) {
    if (d.kind == Datum::kNull) {
      contains_null = true;
      return;
    }
    if (IsFloating(type->id) && d.kind == Datum::kDouble && std::isnan(d.d)) {
      contains_nan = true;
      return;
    }
    if (type->id == TypeId::kDecimal) {
      AddOrdered(Datum{Datum::kBytes, 0, 0, written.bytes});
    } else {
      AddOrdered(d);
    }
  }
  void AddOrdered(const Datum& d) {
    if (!lower || Compare(d, *lower, *type) < 0) lower = d;
    if (!upper || Compare(d, *upper, *type) > 0) upper = d;
  }

  FieldSummary Finish() const {
    FieldSummary fs;
    fs.contains_null = contains_null;
    fs.contains_nan = contains_nan;
    if (lower) fs.lower_bound = EncodeValue(*lower, *type);
    if (upper) fs.upper_bound = EncodeValue(*upper, *type);
    return fs;
  }
};

Value OptLong(std::optional<int64_t> v) { return v ? Value::Long(*v) : Value::Null(); }

// map<int, long> / map<int, binary> as an array of {key, value} records;
// null when empty.
template <typename T, typename F>
Value IntMap(const std::map<int32_t, T>& m, F make) {
  if (m.empty()) return Value::Null();
  std::vector<Value> items;
  items.reserve(m.size());
  for (const auto& [k, v] : m) items.push_back(Value::Record({Value::Int(k), make(v)}));
  return Value::Array(std::move(items));
}

Status WriteFile(storage::FileIO& io, const std::string& location, const std::string& bytes) {
  ASSIGN_OR_RAISE(auto out, io.Create(location));
  Status st = out->Write(bytes.data(), static_cast<int64_t>(bytes.size()));
  if (st.ok()) st = out->Close();
  if (!st.ok()) {
    out->Abort();
    return st;
  }
  return Status::OK();
}

}  // namespace

Result<ManifestFile> WriteManifest(storage::FileIO& io, const std::string& location, const TableMetadata& md,
                                   const PartitionSpec& spec, int64_t snapshot_id,
                                   const std::vector<ManifestEntry>& entries) {
  auto fail = [&](const Status& st) { return st.WithContext(fmt::format("writing manifest {}", location)); };
  const int version = md.format_version;
  const Schema& schema = md.current_schema();

  std::vector<PartitionStructField> part;
  std::vector<SummaryBuilder> summaries;
  for (const auto& f : spec.fields) {
    auto t = PartitionFieldType(f, schema);
    if (!t.ok()) return fail(t.status().WithContext(fmt::format("partition spec {}", spec.spec_id)));
    part.push_back({f.field_id, f.name, *t});
    SummaryBuilder sb;
    sb.type = *t;
    summaries.push_back(std::move(sb));
  }
  auto avro_schema = ManifestEntryAvroSchema(version, part);
  if (!avro_schema.ok()) return fail(avro_schema.status());

  // One content kind per manifest.
  ManifestContent content = ManifestContent::kData;
  if (!entries.empty() && entries[0].file.content != FileContent::kData) content = ManifestContent::kDeletes;
  for (const auto& e : entries) {
    const bool is_data = e.file.content == FileContent::kData;
    if (is_data != (content == ManifestContent::kData)) {
      return fail(
          Status::Invalid("data file {} and delete files cannot share a manifest; write one manifest "
                          "for data files and one for delete files",
                          is_data ? e.file.path : entries[0].file.path));
    }
  }

  std::map<std::string, std::string> meta;
  meta["schema"] = SchemaToJson(schema).dump();
  meta["schema-id"] = std::to_string(schema.schema_id());
  meta["partition-spec"] = PartitionFieldsToJson(spec).dump();
  meta["partition-spec-id"] = std::to_string(spec.spec_id);
  meta["format-version"] = std::to_string(version);
  meta["content"] = content == ManifestContent::kData ? "data" : "deletes";
  auto writer = avro::OcfWriter::Make(*avro_schema, std::move(meta), avro::Codec::kDeflate);
  if (!writer.ok()) return fail(writer.status());

  ManifestFile mf;
  mf.path = location;
  mf.spec_id = spec.spec_id;
  mf.content = content;
  mf.added_snapshot_id = snapshot_id;
  int32_t added = 0, existing = 0, deleted = 0;
  int64_t added_rows = 0, existing_rows = 0, deleted_rows = 0;
  std::optional<int64_t> min_seq;  // over entries that carry their data sequence number

  auto as_long = [](int64_t v) { return Value::Long(v); };
  auto as_bytes = [](const std::string& v) { return Value::Bytes(v); };
  for (size_t n = 0; n < entries.size(); ++n) {
    const ManifestEntry& e = entries[n];
    const DataFile& f = e.file;
    auto entry_fail = [&](const Status& st) { return fail(st.WithContext(fmt::format("entry {} ({})", n, f.path))); };
    if (f.spec_id != spec.spec_id) {
      return entry_fail(Status::Invalid("the file belongs to partition spec {}, the manifest is for spec {}", f.spec_id,
                                        spec.spec_id));
    }
    if (f.partition.size() != spec.fields.size()) {
      return entry_fail(Status::Invalid("the file has {} partition values, spec {} has {} fields", f.partition.size(),
                                        spec.spec_id, spec.fields.size()));
    }
    std::vector<Value> pvalues;
    pvalues.reserve(part.size());
    for (size_t i = 0; i < part.size(); ++i) {
      auto v = PartitionValue(f.partition[i], *part[i].type);
      if (!v.ok()) return entry_fail(v.status().WithContext(fmt::format("partition field '{}'", part[i].name)));
      summaries[i].Add(f.partition[i], *v);
      pvalues.push_back(std::move(*v));
    }

    // ADDED entries of this snapshot inherit snapshot id and sequence
    // numbers from the manifest list; the others carry theirs. A DELETED
    // entry names the snapshot that deletes it (the spec's snapshot_id).
    Value snap = Value::Null(), seq = Value::Null(), file_seq = Value::Null();
    switch (e.status) {
      case EntryStatus::kAdded:
        if (e.snapshot_id != 0 && e.snapshot_id != snapshot_id) {
          return entry_fail(
              Status::Invalid("ADDED by snapshot {}, not by snapshot {} writing this manifest; "
                              "carry it over as EXISTING",
                              e.snapshot_id, snapshot_id));
        }
        // A rewrite may give its new files an explicit (older) data
        // sequence number, as Java's RewriteFiles.dataSequenceNumber; the
        // file sequence number is still inherited.
        if (e.sequence_number > 0) {
          seq = Value::Long(e.sequence_number);
          min_seq = std::min(min_seq.value_or(e.sequence_number), e.sequence_number);
        }
        ++added;
        added_rows += f.record_count;
        break;
      case EntryStatus::kExisting:
      case EntryStatus::kDeleted:
        snap = Value::Long(e.status == EntryStatus::kDeleted ? snapshot_id : e.snapshot_id);
        seq = Value::Long(e.sequence_number);
        file_seq = Value::Long(e.file_sequence_number);
        min_seq = std::min(min_seq.value_or(e.sequence_number), e.sequence_number);
        if (e.status == EntryStatus::kExisting) {
          ++existing;
          existing_rows += f.record_count;
        } else {
          ++deleted;
          deleted_rows += f.record_count;
        }
        break;
    }

    std::vector<Value> df;
    df.reserve(20);
    df.push_back(Value::Int(static_cast<int32_t>(f.content)));
    df.push_back(Value::String(f.path));
    std::string format = f.format;
    std::transform(format.begin(), format.end(), format.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    df.push_back(Value::String(std::move(format)));
    df.push_back(Value::Record(std::move(pvalues)));
    df.push_back(Value::Long(f.record_count));
    df.push_back(Value::Long(f.file_size));
    df.push_back(IntMap(f.column_sizes, as_long));
    df.push_back(IntMap(f.value_counts, as_long));
    df.push_back(IntMap(f.null_value_counts, as_long));
    df.push_back(IntMap(f.nan_value_counts, as_long));
    df.push_back(IntMap(f.lower_bounds, as_bytes));
    df.push_back(IntMap(f.upper_bounds, as_bytes));
    df.push_back(Value::Null());  // key_metadata
    if (f.split_offsets.empty()) {
      df.push_back(Value::Null());
    } else {
      std::vector<Value> offsets;
      for (int64_t o : f.split_offsets) offsets.push_back(Value::Long(o));
      df.push_back(Value::Array(std::move(offsets)));
    }
    if (f.equality_ids.empty()) {
      df.push_back(Value::Null());
    } else {
      std::vector<Value> ids;
      for (int32_t id : f.equality_ids) ids.push_back(Value::Int(id));
      df.push_back(Value::Array(std::move(ids)));
    }
    df.push_back(f.sort_order_id ? Value::Int(*f.sort_order_id) : Value::Null());
    if (version >= 3) df.push_back(f.content == FileContent::kData ? OptLong(f.first_row_id) : Value::Null());
    df.push_back(f.referenced_data_file ? Value::String(*f.referenced_data_file) : Value::Null());
    if (version >= 3) {
      df.push_back(OptLong(f.content_offset));
      df.push_back(OptLong(f.content_size));
    }

    Status st = (*writer)->Append(Value::Record({Value::Int(static_cast<int32_t>(e.status)), std::move(snap),
                                                 std::move(seq), std::move(file_seq), Value::Record(std::move(df))}));
    if (!st.ok()) return entry_fail(st);
  }
  auto bytes = (*writer)->Finish();
  if (!bytes.ok()) return fail(bytes.status());
  RETURN_NOT_OK(WriteFile(io, location, *bytes).WithContext(fmt::format("writing manifest {}", location)));

  mf.length = static_cast<int64_t>(bytes->size());
  mf.min_sequence_number = min_seq.value_or(0);
  mf.added_files = added;
  mf.existing_files = existing;
  mf.deleted_files = deleted;
  mf.added_rows = added_rows;
  mf.existing_rows = existing_rows;
  mf.deleted_rows = deleted_rows;
  for (const auto& s : summaries) mf.partitions.push_back(s.Finish());
  return mf;
}

Result<int64_t> WriteManifestList(storage::FileIO& io, const std::string& location, const TableMetadata& md,
                                  const Snapshot& snapshot, const std::vector<ManifestFile>& manifests) {
  auto fail = [&](const Status& st) {
    return st.WithContext(fmt::format("writing manifest list {} of snapshot {}", location, snapshot.snapshot_id));
  };
  const int version = md.format_version;
  auto avro_schema = ManifestListAvroSchema(version);
  if (!avro_schema.ok()) return fail(avro_schema.status());
  if (version >= 3 && !snapshot.first_row_id) {
    return fail(Status::Invalid("a format v3 snapshot needs a first-row-id (the table's next-row-id)"));
  }

  std::map<std::string, std::string> meta;
  meta["snapshot-id"] = std::to_string(snapshot.snapshot_id);
  meta["parent-snapshot-id"] =
      snapshot.parent_snapshot_id ? std::to_string(*snapshot.parent_snapshot_id) : std::string("null");
  meta["sequence-number"] = std::to_string(snapshot.sequence_number);
  meta["format-version"] = std::to_string(version);
  if (version >= 3) meta["first-row-id"] = std::to_string(*snapshot.first_row_id);
  auto writer = avro::OcfWriter::Make(*avro_schema, std::move(meta), avro::Codec::kDeflate);
  if (!writer.ok()) return fail(writer.status());

  const int64_t first_row_id = snapshot.first_row_id.value_or(0);
  int64_t next_row_id = first_row_id;
  for (const ManifestFile& mf : manifests) {
    auto entry_fail = [&](const Status& st) { return fail(st.WithContext(fmt::format("manifest {}", mf.path))); };
    if (!mf.added_files || !mf.existing_files || !mf.deleted_files || !mf.added_rows || !mf.existing_rows ||
        !mf.deleted_rows) {
      return entry_fail(
          Status::Invalid("the manifest's file and row counts are unknown (a v1 manifest list "
                          "entry); a v{} manifest list needs them",
                          version));
    }
    int64_t seq = mf.sequence_number;
    int64_t min_seq = mf.min_sequence_number;
    if (mf.added_snapshot_id == snapshot.snapshot_id) {
      // Written by this commit: sequence numbers are assigned now (a retried
      // commit reuses the manifest with its new sequence number). Carried
      // over entries keep theirs, which bound the minimum.
      seq = snapshot.sequence_number;
      const bool carries = *mf.existing_files + *mf.deleted_files > 0 || mf.min_sequence_number > 0;
      min_seq = carries ? std::min(mf.min_sequence_number, seq) : seq;
    }
    Value first_row = Value::Null();
    if (version >= 3) {
      if (mf.first_row_id) {
        first_row = Value::Long(*mf.first_row_id);
      } else if (mf.content == ManifestContent::kData) {
        first_row = Value::Long(next_row_id);
        next_row_id += *mf.added_rows + *mf.existing_rows;
      }
    }
    Value partitions = Value::Null();
    if (!mf.partitions.empty()) {
      std::vector<Value> sums;
      for (const auto& fs : mf.partitions) {
        sums.push_back(Value::Record({Value::Boolean(fs.contains_null),
                                      fs.contains_nan ? Value::Boolean(*fs.contains_nan) : Value::Null(),
                                      fs.lower_bound ? Value::Bytes(*fs.lower_bound) : Value::Null(),
                                      fs.upper_bound ? Value::Bytes(*fs.upper_bound) : Value::Null()}));
      }
      partitions = Value::Array(std::move(sums));
    }
    std::vector<Value> rec{Value::String(mf.path),
                           Value::Long(mf.length),
                           Value::Int(mf.spec_id),
                           Value::Int(static_cast<int32_t>(mf.content)),
                           Value::Long(seq),
                           Value::Long(min_seq),
                           Value::Long(mf.added_snapshot_id),
                           Value::Int(*mf.added_files),
                           Value::Int(*mf.existing_files),
                           Value::Int(*mf.deleted_files),
                           Value::Long(*mf.added_rows),
                           Value::Long(*mf.existing_rows),
                           Value::Long(*mf.deleted_rows),
                           std::move(partitions),
                           Value::Null()};  // key_metadata
    if (version >= 3) rec.push_back(std::move(first_row));
    Status st = (*writer)->Append(Value::Record(std::move(rec)));
    if (!st.ok()) return entry_fail(st);
  }
  auto bytes = (*writer)->Finish();
  if (!bytes.ok()) return fail(bytes.status());
  RETURN_NOT_OK(WriteFile(io, location, *bytes).WithContext(fmt::format("writing manifest list {}", location)));
  return next_row_id - first_row_id;
}

}  // namespace thaw::iceberg
