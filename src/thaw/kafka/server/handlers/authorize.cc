#include "thaw/kafka/server/handlers/authorize.h"

#include "thaw/common/log.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/server/sasl.h"

namespace thaw::kafka::server {

std::string_view Principal(const RequestContext& ctx) {
  if (ctx.sasl && ctx.sasl->authenticated()) return ctx.sasl->principal();
  return kAnonymousPrincipal;
}

bool Authorized(const RequestContext& ctx, AclOperation op, AclResourceType type, std::string_view name,
                bool log_denied) {
  if (!ctx.acl) return true;
  if (ctx.acl->Authorize(Principal(ctx), op, type, name)) return true;
  if (log_denied) {
    const ApiSpec* spec = FindApiSpec(ctx.api_key);
    log::Debug("client {} (client id '{}'): {} denied {} on {} '{}' ({}; --acl-file)", ctx.peer, ctx.client_id,
               Principal(ctx), AclOperationName(op), AclResourceTypeName(type), name, spec ? spec->name : "?");
  }
  return false;
}

}  // namespace thaw::kafka::server
