#include "thaw/common/status.h"

namespace thaw {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kCorrupt: return "corrupt input";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kIOError: return "I/O error";
    case StatusCode::kCommitConflict: return "commit conflict";
    case StatusCode::kCommitStateUnknown: return "commit state unknown";
    case StatusCode::kPermissionDenied: return "permission denied";
    case StatusCode::kAlreadyExists: return "already exists";
    case StatusCode::kAborted: return "aborted";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return fmt::format("{}: {}", StatusCodeName(code_), message());
}

}  // namespace thaw
