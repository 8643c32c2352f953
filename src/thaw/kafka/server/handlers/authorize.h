// What the handlers ask before they answer: may this connection's principal
// do an operation on a resource (kafka/server/acl.h)? Without --acl-file
// everything is allowed. The principal is the SASL user ("User:alice"), or
// User:ANONYMOUS on a listener without SASL, as Kafka names them.
#pragma once

#include <string_view>

#include "thaw/kafka/server/acl.h"
#include "thaw/kafka/server/dispatch.h"

namespace thaw::kafka::server {

// The connection's principal as ACLs name it.
std::string_view Principal(const RequestContext& ctx);

// Whether the request may do `op` on the resource. A denial is logged at
// debug level (principal, operation, resource; the client's address and id)
// unless `log_denied` is false: Metadata for every topic and ListGroups
// filter silently, as Kafka does.
bool Authorized(const RequestContext& ctx, AclOperation op, AclResourceType type, std::string_view name,
                bool log_denied = true);

}  // namespace thaw::kafka::server
