#include "thaw/records/record_merge.h"

#include <algorithm>
#include <optional>
#include <queue>

namespace thaw::records {

bool SameContent(const Record& a, std::span<const Header> ha, const Record& b,
                 std::span<const Header> hb) {
  if (a.timestamp_ms != b.timestamp_ms || a.timestamp_type != b.timestamp_type) return false;
  if (a.key != b.key || a.value != b.value) return false;
  if (ha.size() != hb.size()) return false;
  for (size_t i = 0; i < ha.size(); ++i) {
    if (ha[i].key != hb[i].key || ha[i].value != hb[i].value) return false;
  }
  return true;
}

namespace {

struct InputState {
  std::unique_ptr<MergeInput> source;
  int64_t rank = 0;
  std::shared_ptr<RecordChunk> chunk;  // shared: output chunks keep it alive
  size_t pos = 0;
  std::optional<int64_t> last_offset;  // for the in-order guard
  uint64_t emitted_in = 0;             // output generation that already holds `chunk` (0: none)
};

}  // namespace

struct KWayMerger::State {
  std::vector<InputState> inputs;
  // Min-heap of input indices by (offset, -rank, index).
  std::vector<size_t> heap;
  uint64_t generation = 0;
  bool started = false;
  // The last record emitted, kept alive to compare duplicates with.
  std::optional<Record> last;
  std::vector<Header> last_headers;
  std::shared_ptr<RecordChunk> last_chunk;

  const Record& Head(size_t i) const { return inputs[i].chunk->records[inputs[i].pos]; }
  // "a comes after b" for std heap functions (which build a max-heap).
  bool After(size_t a, size_t b) const {
    const Record& ra = Head(a);
    const Record& rb = Head(b);
    if (ra.offset != rb.offset) return ra.offset > rb.offset;
    if (inputs[a].rank != inputs[b].rank) return inputs[a].rank < inputs[b].rank;
    return a > b;
  }
  void Push(size_t i) {
    heap.push_back(i);
    std::push_heap(heap.begin(), heap.end(), [this](size_t a, size_t b) { return After(a, b); });
  }
  size_t Pop() {
    std::pop_heap(heap.begin(), heap.end(), [this](size_t a, size_t b) { return After(a, b); });
    size_t i = heap.back();
    heap.pop_back();
    return i;
  }
  // Moves input i to its next record, loading chunks as needed; false at its end.
  Result<bool> Advance(size_t i) {
    InputState& in = inputs[i];
    if (in.chunk && in.pos + 1 < in.chunk->records.size()) {
      ++in.pos;
    } else {
      while (true) {
        auto next = std::make_shared<RecordChunk>();
        ASSIGN_OR_RAISE(bool more, in.source->Next(next.get()));
        if (!more) {
          in.chunk.reset();
          return false;
        }
        if (next->records.empty()) continue;
        in.chunk = std::move(next);
        in.pos = 0;
        in.emitted_in = 0;  // the new chunk is in no output yet
        break;
      }
    }
    const int64_t off = in.chunk->records[in.pos].offset;
    if (in.last_offset && off < *in.last_offset) {
      return Status::Internal(
          "{}: offset {} follows offset {} in a stream the reader merges as sorted",
          in.source->Describe(), off, *in.last_offset);
    }
    in.last_offset = off;
    return true;
  }
};

KWayMerger::KWayMerger(std::unique_ptr<State> s) : s_(std::move(s)) {}
KWayMerger::~KWayMerger() = default;
size_t KWayMerger::num_inputs() const { return s_->inputs.size(); }

Result<std::unique_ptr<KWayMerger>> KWayMerger::Make(std::vector<Input> inputs) {
  auto s = std::make_unique<State>();
  for (auto& in : inputs) {
    InputState st;
    st.source = std::move(in.source);
    st.rank = in.rank;
    s->inputs.push_back(std::move(st));
  }
  return std::unique_ptr<KWayMerger>(new KWayMerger(std::move(s)));
}

Result<bool> KWayMerger::Next(size_t max_records, RecordChunk* out, DuplicateStats* dups) {
  State& s = *s_;
  out->records.clear();
  out->headers.clear();
  out->keepalive.clear();
  if (!s.started) {
    s.started = true;
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      ASSIGN_OR_RAISE(bool has, s.Advance(i));
      if (has) s.Push(i);
    }
  }
  ++s.generation;
  while (!s.heap.empty() && out->records.size() < max_records) {
    const size_t i = s.Pop();
    InputState& in = s.inputs[i];
    const RecordChunk& chunk = *in.chunk;
    const Record& r = chunk.records[in.pos];
    std::span<const Header> hs(chunk.headers.data() + r.header_begin, r.header_count);
    if (s.last && r.offset == s.last->offset) {
      // The winner of this offset came first (heap order: rank, then input).
      ++dups->duplicates;
      if (!SameContent(*s.last, s.last_headers, r, hs)) ++dups->differing;
    } else {
      if (in.emitted_in != s.generation) {
        out->keepalive.push_back(in.chunk);
        in.emitted_in = s.generation;
      }
      Record copy = r;
      copy.header_begin = static_cast<uint32_t>(out->headers.size());
      out->headers.insert(out->headers.end(), hs.begin(), hs.end());
      out->records.push_back(copy);
      s.last = r;
      s.last_headers.assign(hs.begin(), hs.end());
      if (s.last_chunk != in.chunk) s.last_chunk = in.chunk;
    }
    ASSIGN_OR_RAISE(bool has, s.Advance(i));
    if (has) s.Push(i);
  }
  return !out->records.empty();
}

}  // namespace thaw::records
