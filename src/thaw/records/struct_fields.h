// The child arrays of struct arrays, boxed once per column instead of once
// per row, for the encoders that walk a value column row by row (Avro,
// Protobuf, JSON). arrow::StructArray::field() loads a shared_ptr
// atomically -- a mutex in libstdc++ -- and in the Avro encoder that cost
// more than the encoding itself.
//
// Owned by the caller that walks one column (or a few) row by row, e.g. for
// one record batch: every struct array asked about must stay alive while
// it is in use (the cache is keyed by their ArrayData's address).
#pragma once

#include <arrow/array.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace thaw::records {

class StructFields {
 public:
  // sa.field(k).
  const arrow::Array& Field(const arrow::StructArray& sa, int k) {
    auto& f = fields_[sa.data().get()];
    if (f.empty()) f = sa.fields();
    return *f[static_cast<size_t>(k)];
  }

  // The index in `st` (kept alive by the caller) of the field named
  // name_of(item) for each of `items` (-1: none), computed once per `key`
  // (the schema node asking) and type.
  template <typename Items, typename NameOf>
  const std::vector<int>& IndexesByName(const void* key, const arrow::StructType& st, const Items& items,
                                        NameOf name_of) {
    auto [it, fresh] = indexes_.try_emplace(std::make_pair(key, static_cast<const void*>(&st)));
    if (fresh) {
      for (const auto& item : items) it->second.push_back(st.GetFieldIndex(std::string(name_of(item))));
    }
    return it->second;
  }

 private:
  std::unordered_map<const arrow::ArrayData*, arrow::ArrayVector> fields_;
  struct PairHash {
    size_t operator()(const std::pair<const void*, const void*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<std::pair<const void*, const void*>, std::vector<int>, PairHash> indexes_;
};

}  // namespace thaw::records
