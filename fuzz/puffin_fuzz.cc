// libFuzzer target for the Puffin footer parser and deletion-vector-v1 blobs.
//
// Every input goes through three doors: as a whole Puffin file, as a
// deletion-vector blob, and as a bare Roaring64 vector (a blob's CRC would
// otherwise reject nearly every mutated input before the Roaring parser).
// Whatever parses must also satisfy the DeletionVector invariants below; a
// violation aborts so the fuzzer records it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "thaw/iceberg/deletion_vector.h"
#include "thaw/iceberg/puffin.h"

namespace {

using thaw::iceberg::DeletionVector;

void Check(bool condition) {
  if (!condition) std::abort();
}

// Positions beyond this are only counted, not materialized: a 4 KiB input of
// run containers can describe tens of millions of positions.
constexpr int64_t kMaxPositionsToWalk = int64_t{1} << 20;

void CheckInvariants(const DeletionVector& dv) {
  if (dv.Cardinality() <= kMaxPositionsToWalk) {
    int64_t count = 0;
    int64_t previous = -1;
    dv.ForEach([&](int64_t pos) {
      Check(pos > previous);
      Check(dv.Contains(pos));
      previous = pos;
      ++count;
    });
    Check(count == dv.Cardinality());
    if (previous < INT64_MAX) Check(!dv.Contains(previous + 1));
  }
  Check(!dv.Contains(-1));

  // Re-serializing must produce a blob we accept, with the same content, and
  // serialization must be stable from then on.
  const std::string blob = dv.Serialize();
  auto again = DeletionVector::Deserialize(blob, "fuzz round trip");
  Check(again.ok());
  Check(again->Cardinality() == dv.Cardinality());
  Check(again->Serialize() == blob);
}

void CheckParsed(const thaw::Result<DeletionVector>& result) {
  if (result.ok()) CheckInvariants(*result);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  auto footer = thaw::iceberg::ParsePuffinFooter(input, "fuzz.puffin");
  if (footer.ok()) {
    for (const auto& blob : footer->blobs) {
      // The footer parser already bounds-checked every blob.
      Check(thaw::iceberg::SlicePuffinBlob(input, blob, "fuzz.puffin").ok());
      CheckParsed(thaw::iceberg::ReadDeletionVector(input, blob, "fuzz.puffin"));
    }
  }

  CheckParsed(DeletionVector::Deserialize(input, "fuzz blob"));
  CheckParsed(DeletionVector::DeserializeVector(input, "fuzz vector"));

  // The builder: read the input as positions (sign bit cleared, low bits kept
  // small half of the time so containers fill up and runs appear).
  std::vector<int64_t> positions(size / 8);
  for (size_t i = 0; i < positions.size(); ++i) {
    uint64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    positions[i] = static_cast<int64_t>((v & 1) ? (v >> 1) : (v >> 1) % (1 << 20));
  }
  const DeletionVector built = DeletionVector::FromPositions(positions);
  for (int64_t p : positions) Check(built.Contains(p));
  CheckInvariants(built);
  return 0;
}
