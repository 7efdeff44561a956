/*
 * extension/fence_ext.h
 *	  What the parts of the fence extension share: the token rule, the
 *	  per-transaction registry of accepted tokens, the counts of accepted
 *	  and refused tokens, and the settings.
 */
#ifndef FENCE_EXT_H
#define FENCE_EXT_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "siphash.h"
#include "compat.h"

/* Resource names are btree keys of fence.fences and Redis keys: keep them small. */
#define FENCE_MAX_RESOURCE_LEN 1024

/* rule.c: the fencing rule, over the rows of fence.fences (marks.c) */
extern int64 fence_check_and_advance(const char *resource, int64 token,
									 const char *owner);
extern void fence_check_resource_name(const char *resource);
FENCE_NORETURN_BEFORE extern void fence_refuse_missing(const char *resource) FENCE_NORETURN_AFTER;
extern char *fence_resource_token_args(FunctionCallInfo fcinfo, const char *what,
									   int64 *token);

/* floors.c: what fence.forget() leaves of the marks it deletes */
extern int64 fence_floor_of(const char *resource);
extern Oid	fence_floors_relation(void);

/*
 * registry.c: tokens accepted in this transaction and its live
 * subtransactions, by the hash of each resource's name
 */
extern FenceHash128 fence_registry_hash(const char *name);
extern bool fence_registry_find(const FenceHash128 *name, int64 *token,
								const FenceHash128 **owner);
extern void fence_registry_remember(const FenceHash128 *name, int64 token,
									const char *owner);
extern void fence_registry_forget(const FenceHash128 *name);
extern uint64 fence_registry_generation(void);
extern void fence_registry_init(void);

/*
 * stats.c: counts in shared memory (when preloaded), fence.log_refusals,
 * and the one way a token is refused: fence_refuse() counts the refusal,
 * then raises it
 */
typedef enum FenceRefusal
{
	FENCE_REFUSED_STALE,		/* LF001 */
	FENCE_REFUSED_MISSING,		/* LF002 */
	FENCE_REFUSED_INVALID		/* LF003 */
} FenceRefusal;
#define FENCE_REFUSAL_KINDS 3

extern void fence_stats_init(void);
extern void fence_stats_accepted(const char *resource);
FENCE_NORETURN_BEFORE extern void fence_refuse(const char *resource, FenceRefusal kind,
												int64 token, bool token_known,
												const char *message, const char *detail,
												const char *hint) FENCE_NORETURN_AFTER;

/* fence.c: settings */
extern char *fence_setting_resource;	/* fence.resource */
extern char *fence_setting_token;	/* fence.token, parsed by the guard */
extern char *fence_setting_owner;	/* fence.owner */
extern int	fence_max_step;			/* fence.max_step, 0 = no limit */
extern const char *fence_session_owner(const char *resource);
extern bool fence_valid_text(const char *text);
extern void fence_check_text(const char *text, const char *what);
extern void fence_settings_usable(void);
extern void fence_prevent_read_only(const char *what);
extern void fence_settings_assigned(void);

/* tokens.c: fence.tokens, a set's (resource, token, owner) in one setting */
extern char *fence_setting_tokens;
extern bool fence_tokens_check(char **newval, void **extra, GucSource source);
extern void fence_tokens_assign(const char *newval, void *extra);
extern bool fence_tokens_find(const char *resource, int64 *token,
							  const char **owner);
extern bool fence_parse_token(const char *text, int64 *token);

/* many.c: a set of leases checked in one call, in canonical order */
typedef struct FenceResourceList
{
	int			n;
	char	  **resources;
	int64	   *tokens;
	char	  **owners;			/* an element may be NULL: no owner */
} FenceResourceList;

extern FenceResourceList fence_resource_list(FunctionCallInfo fcinfo,
											 int resources_arg, int tokens_arg,
											 int owners_arg);
extern void fence_check_and_advance_list(const FenceResourceList *list,
										 int64 *previous);

#endif							/* FENCE_EXT_H */
