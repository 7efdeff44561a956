/*
 * extension/fence.c
 *	  Module entry point of the fence extension: the settings through which
 *	  a session carries its fencing token, and the registration of the
 *	  per-transaction state.
 *
 *	  fence.resource, fence.token and fence.owner (and fence.tokens, which
 *	  carries several of them: tokens.c) are plain user settings, so
 *	  that any client can carry a token without code: SET LOCAL in a pooled
 *	  transaction, or PGOPTIONS='-c fence.token=...' for a whole connection
 *	  (this is what "fence run" does).  fence.token is a string on purpose:
 *	  the guard parses it strictly, so that '12abc' is an invalid token and
 *	  not token 12.
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "compat.h"
#include "fence_ext.h"

PG_MODULE_MAGIC;

char	   *fence_setting_resource = NULL;
char	   *fence_setting_token = NULL;
char	   *fence_setting_owner = NULL;
int			fence_max_step = 0;

void		_PG_init(void);

/*
 * The owner that the session's settings give with the token for
 * "resource": its entry's in fence.tokens, else fence.owner when
 * fence.resource names it; NULL otherwise (LF003 when both name the
 * resource and disagree).  Writes that name no owner themselves use it, so that a
 * token which the lock service issued twice is still told apart by owner.
 */
const char *
fence_session_owner(const char *resource)
{
	int64		token;
	const char *owner;

	if (fence_tokens_find(resource, &token, &owner))
		return owner;
	if (fence_setting_resource == NULL || fence_setting_owner == NULL ||
		fence_setting_owner[0] == '\0' ||
		strcmp(fence_setting_resource, resource) != 0)
		return NULL;
	return fence_setting_owner;
}

void
_PG_init(void)
{
	DefineCustomStringVariable("fence.resource",
							   "Resource that fence.token belongs to.",
							   "Guarded tables use fence.token only for this resource.",
							   &fence_setting_resource,
							   NULL,
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("fence.token",
							   "Fencing token carried by this session or transaction.",
							   "A positive 64-bit integer taken from the lease's token counter.",
							   &fence_setting_token,
							   NULL,
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("fence.owner",
							   "Owner id of the lease that fence.token came with.",
							   NULL,
							   &fence_setting_owner,
							   NULL,
							   PGC_USERSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("fence.tokens",
							   "Fencing tokens of several resources: RESOURCE=TOKEN[/OWNER], comma-separated.",
							   "For a transaction that writes under several leases; parsed when set.",
							   &fence_setting_tokens,
							   "",
							   PGC_USERSET,
							   0,
							   fence_tokens_check, fence_tokens_assign, NULL);

	DefineCustomIntVariable("fence.max_step",
							"Largest allowed jump of a token above the highest accepted token.",
							"Zero means no limit.",
							&fence_max_step,
							0, 0, INT_MAX,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	fence_stats_init();
	MarkGUCPrefixReserved("fence");

	fence_registry_init();
}
