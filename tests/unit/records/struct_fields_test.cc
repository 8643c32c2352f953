// The cache of struct arrays' children the value encoders keep per batch:
// the same children arrow's StructArray::field gives (slices included,
// nested structs too), and field indexes per schema node and struct type.
#include "thaw/records/struct_fields.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace thaw::records {
namespace {

std::shared_ptr<arrow::StructArray> Struct(std::vector<std::string> names, int64_t rows, int32_t base) {
  arrow::ArrayVector children;
  arrow::FieldVector fields;
  for (size_t k = 0; k < names.size(); ++k) {
    arrow::Int32Builder b;
    for (int64_t r = 0; r < rows; ++r) EXPECT_TRUE(b.Append(base + static_cast<int32_t>(k * 100 + r)).ok());
    children.push_back(*b.Finish());
    fields.push_back(arrow::field(names[k], arrow::int32()));
  }
  return *arrow::StructArray::Make(children, fields);
}

int32_t At(const arrow::Array& a, int64_t row) { return static_cast<const arrow::Int32Array&>(a).Value(row); }

TEST(StructFields, GivesTheChildrenArrowGivesSlicesIncluded) {
  auto whole = Struct({"a", "b"}, 10, 0);
  auto sliced = std::static_pointer_cast<arrow::StructArray>(whole->Slice(3, 4));
  StructFields cache;
  for (int k = 0; k < 2; ++k) {
    for (int64_t r = 0; r < sliced->length(); ++r) {
      EXPECT_EQ(At(cache.Field(*sliced, k), r), At(*sliced->field(k), r)) << k << " " << r;
    }
  }
  EXPECT_EQ(At(cache.Field(*sliced, 1), 0), 103);
}

TEST(StructFields, IndexesByNamePerNodeAndType) {
  auto older = Struct({"a", "b"}, 1, 0);
  auto newer = Struct({"c", "b", "a"}, 1, 0);
  const std::vector<std::string> wanted = {"a", "b", "c"};
  const int node = 0;  // one schema node applied to both columns
  auto name = [](const std::string& s) -> const std::string& { return s; };
  StructFields cache;
  const auto& in_older =
      cache.IndexesByName(&node, static_cast<const arrow::StructType&>(*older->type()), wanted, name);
  EXPECT_EQ(in_older, (std::vector<int>{0, 1, -1}));
  const auto& in_newer =
      cache.IndexesByName(&node, static_cast<const arrow::StructType&>(*newer->type()), wanted, name);
  EXPECT_EQ(in_newer, (std::vector<int>{2, 1, 0}));
}

TEST(StructFields, NestedStructs) {
  auto inner = Struct({"x", "y"}, 5, 500);
  auto outer = *arrow::StructArray::Make({inner, Struct({"z"}, 5, 900)->field(0)},
                                         {arrow::field("in", inner->type()), arrow::field("z", arrow::int32())});
  auto sliced = std::static_pointer_cast<arrow::StructArray>(outer->Slice(2, 3));
  StructFields cache;
  const auto& in = static_cast<const arrow::StructArray&>(cache.Field(*sliced, 0));
  EXPECT_EQ(At(cache.Field(in, 1), 0), 602);  // y of row 2
  EXPECT_EQ(At(cache.Field(*sliced, 1), 2), 904);
  EXPECT_EQ(&cache.Field(in, 1), &cache.Field(in, 1));  // boxed once
}

}  // namespace
}  // namespace thaw::records
