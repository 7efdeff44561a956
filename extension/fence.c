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

#include "access/xlog.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
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
 * A setting that the session gave before the library was loaded (in its
 * startup packet, say) and that the library could not take because it is
 * not valid in the database's encoding; NULL when there is none.  See
 * fence_settings_usable().
 */
static const char *rejected_setting = NULL;

/*
 * fence_valid_text: whether "text" is valid in the database's encoding.
 * A string that is not would be stored in fence.fences (an owner, a
 * resource name), where pg_dump writes it out as is and the restore's COPY
 * refuses it, which loses every mark behind it.  Values that come as SQL
 * arguments were checked by PostgreSQL when they arrived; settings given as
 * startup options (PGOPTIONS) were not, and an owner or a resource may
 * come from those.
 */
bool
fence_valid_text(const char *text)
{
	return pg_verifymbstr(text, strlen(text), true);
}

/* fence_check_text: refuse "text" (what "what" names) with 22021 unless valid. */
void
fence_check_text(const char *text, const char *what)
{
	if (!fence_valid_text(text))
		ereport(ERROR,
				(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				 errmsg("%s is not valid in the database's encoding %s",
						what, GetDatabaseEncodingName())));
}

/*
 * Check hook of fence.resource and fence.owner: the value must be valid
 * in the database's encoding (22021).  A session that gives an invalid one
 * as a startup option is refused at connection when the library is
 * preloaded; otherwise the library finds it when it is loaded, and
 * fence_settings_usable() refuses what would use it.
 */
static bool
check_encoded_setting(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || fence_valid_text(*newval))
		return true;
	GUC_check_errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE);
	GUC_check_errdetail("The value is not valid in the database's encoding %s.",
						GetDatabaseEncodingName());
	return false;
}

/* A new value of a setting replaces one that the library had refused. */
void
fence_settings_assigned(void)
{
	rejected_setting = NULL;
}

static void
assign_encoded_setting(const char *newval, void *extra)
{
	fence_settings_assigned();
}

/*
 * fence_settings_usable: refuse (22021) to use the session's settings
 * while one of them was refused when the library was loaded: PostgreSQL
 * then drops the value with a warning, and a write would go on without the
 * owner (or resource) its session gave.  Setting any fence setting anew
 * ends it.
 */
void
fence_settings_usable(void)
{
	if (rejected_setting != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				 errmsg("the setting %s that this session gave is not valid in the database's encoding %s",
						rejected_setting, GetDatabaseEncodingName()),
				 errhint("Set %s again with a valid value.", rejected_setting)));
}

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
	fence_settings_usable();
	if (fence_setting_resource == NULL || fence_setting_owner == NULL ||
		fence_setting_owner[0] == '\0' ||
		strcmp(fence_setting_resource, resource) != 0)
		return NULL;
	return fence_setting_owner;
}

/*
 * fence_prevent_read_only: refuse "what" (a call that may move a mark) in
 * a read-only transaction, as PreventCommandIfReadOnly() does, and say so
 * plainly on a standby, in the error and so in the server's log: its
 * marks are the primary's as replayed so far, and after a failover to an
 * asynchronous standby they may be behind the tokens handed out (README:
 * What it promises).
 */
void
fence_prevent_read_only(const char *what)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot execute %s on a standby", what),
				 errdetail("This server is a standby (in recovery): its marks are the primary's as replayed so far, and none can move here."),
				 errhint("Write through the primary. After a failover to an asynchronous standby, run \"fence resync\" against the promoted server before writing.")));
	PreventCommandIfReadOnly(what);
}

void
_PG_init(void)
{
	static const char *const encoded[] = {"fence.resource", "fence.owner", "fence.tokens"};
	const char *rejected = NULL;
	int			i;

	/* startup options given before the library was loaded (see above) */
	for (i = 0; i < lengthof(encoded); i++)
	{
		const char *value = GetConfigOption(encoded[i], true, false);

		if (value != NULL && !fence_valid_text(value))
			rejected = encoded[i];
	}

	DefineCustomStringVariable("fence.resource",
							   "Resource that fence.token belongs to.",
							   "Guarded tables use fence.token only for this resource.",
							   &fence_setting_resource,
							   NULL,
							   PGC_USERSET,
							   0,
							   check_encoded_setting, assign_encoded_setting, NULL);

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
							   check_encoded_setting, assign_encoded_setting, NULL);

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
	/* after the definitions, whose assign hooks clear it */
	rejected_setting = rejected;

	fence_registry_init();
}
