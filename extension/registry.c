/*
 * extension/registry.c
 *	  The tokens accepted in the current transaction, per resource.
 *
 *	  Once a transaction has checked token T for resource R, it holds R's
 *	  row lock in fence.fences until it ends, so nobody else can move R's
 *	  high-water mark in between: every later check of the same (R, T) in
 *	  this transaction would give the same answer.  The registry remembers
 *	  those answers, which is what lets a guarded statement touching 100k
 *	  rows of one resource check the fence table once, and lets the guard
 *	  find the token fence.advance registered earlier in the transaction.
 *	  An entry also tells rule.c that this transaction holds R's row lock
 *	  already, even when it no longer names a token (fence.reset forgot it).
 *
 *	  Subtransactions.  PostgreSQL keeps a row lock for as long as the
 *	  (sub)transaction that took it lives, and a lock that a parent took
 *	  survives the rollback of a child that locked the row again.  The
 *	  registry follows the same rule: each resource has a stack of versions,
 *	  one per (sub)transaction that registered something for it, the newest
 *	  on top.  A child that accepts or forgets a token pushes a version over
 *	  its parent's instead of replacing it; when the child rolls back (ROLLBACK
 *	  TO SAVEPOINT, an exception caught by PL/pgSQL) its version is popped
 *	  and the parent's token is in force again, as its row lock is; when the
 *	  child commits (RELEASE) its version replaces the parent's.
 *
 *	  It lives in a child of TopTransactionContext and is dropped at the end
 *	  of the transaction.  A generation number that changes whenever what a
 *	  lookup would return may have changed lets callers keep the result of
 *	  a lookup (guard.c does, per statement) and know when it went stale.
 *
 *	  Resource names can be long and there can be many (one per key of a
 *	  key-guarded table), so the hash is keyed by a 64-bit hash of the name
 *	  with a short chain for collisions, not by fixed-size name keys.
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "fence.h"

/* What one (sub)transaction registered for a resource. */
typedef struct Version
{
	FenceGrant	pub;			/* token 0: forgotten, row lock still held */
	SubTransactionId subid;		/* the (sub)transaction that registered it */
	struct Version *below;		/* its parent's version, or NULL */
} Version;

typedef struct Grant
{
	char	   *resource;
	Version    *top;			/* never NULL while the grant is chained */
	struct Grant *next;			/* next grant whose name has the same hash */
} Grant;

typedef struct RegistryEntry
{
	uint64		hash;			/* hash key: must be first */
	Grant	   *grants;
} RegistryEntry;

static MemoryContext registry_cxt = NULL;
static HTAB *registry = NULL;

/*
 * No version has a subtransaction id above this one: a subtransaction
 * that ends with a higher id registered nothing, and needs no scan.
 */
static SubTransactionId newest_subid = InvalidSubTransactionId;

static uint64 generation = 1;

static uint64
resource_hash(const char *resource)
{
	return hash_bytes_extended((const unsigned char *) resource,
							   (int) strlen(resource), 0);
}

uint64
fence_registry_generation(void)
{
	return generation;
}

static Grant *
find_grant(const char *resource)
{
	uint64		hash = resource_hash(resource);
	RegistryEntry *entry;
	Grant	   *g;

	if (registry == NULL)
		return NULL;
	entry = hash_search(registry, &hash, HASH_FIND, NULL);
	if (entry == NULL)
		return NULL;
	for (g = entry->grants; g != NULL; g = g->next)
		if (strcmp(g->resource, resource) == 0)
			return g;
	return NULL;
}

const FenceGrant *
fence_registry_lookup(const char *resource)
{
	Grant	   *g = find_grant(resource);

	return g != NULL && g->top->pub.token != 0 ? &g->top->pub : NULL;
}

bool
fence_registry_holds_lock(const char *resource)
{
	return find_grant(resource) != NULL;
}

/*
 * Record "token" and "owner" (token 0: no token) as what the current
 * subtransaction registered for "resource".
 */
static void
set_version(const char *resource, int64 token, const char *owner)
{
	SubTransactionId subid = GetCurrentSubTransactionId();
	Grant	   *g;
	Version    *v;

	if (registry == NULL)
	{
		HASHCTL		ctl;

		registry_cxt = AllocSetContextCreate(TopTransactionContext,
											 "fence registry",
											 ALLOCSET_DEFAULT_SIZES);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(RegistryEntry);
		ctl.hcxt = registry_cxt;
		registry = hash_create("fence registry", 16, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	g = find_grant(resource);
	if (g == NULL)
	{
		uint64		hash = resource_hash(resource);
		bool		found;
		RegistryEntry *entry = hash_search(registry, &hash, HASH_ENTER, &found);

		if (!found)
			entry->grants = NULL;
		g = MemoryContextAlloc(registry_cxt, sizeof(Grant));
		g->resource = MemoryContextStrdup(registry_cxt, resource);
		g->top = NULL;
		g->next = entry->grants;
		entry->grants = g;
	}

	v = g->top;
	if (v == NULL || v->subid != subid)
	{
		v = MemoryContextAlloc(registry_cxt, sizeof(Version));
		v->pub.resource = g->resource;
		v->pub.owner = NULL;
		v->subid = subid;
		v->below = g->top;
		g->top = v;
	}
	v->pub.token = token;
	if (owner == NULL)
		v->pub.owner = NULL;
	else if (v->pub.owner == NULL || strcmp(v->pub.owner, owner) != 0)
		v->pub.owner = MemoryContextStrdup(registry_cxt, owner);

	if (subid > newest_subid)
		newest_subid = subid;
	generation++;
}

void
fence_registry_remember(const char *resource, int64 token, const char *owner)
{
	Assert(token > 0);
	set_version(resource, token, owner);
}

/*
 * Forget the token of "resource" for the rest of the current subtransaction.
 * The entry stays, without a token: the row lock is still ours.
 */
void
fence_registry_forget(const char *resource)
{
	set_version(resource, 0, NULL);
}

/*
 * A subtransaction ended: pop the versions it registered (abort), or hand
 * them to its parent, where they replace the parent's own (commit).
 */
static void
end_subxact(bool commit, SubTransactionId subid, SubTransactionId parent)
{
	HASH_SEQ_STATUS seq;
	RegistryEntry *entry;

	hash_seq_init(&seq, registry);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Grant	  **link = &entry->grants;

		while (*link != NULL)
		{
			Grant	   *g = *link;
			Version    *v = g->top;

			if (v->subid == subid)
			{
				if (!commit)
					g->top = v->below;
				else
				{
					if (v->below != NULL && v->below->subid == parent)
						v->below = v->below->below;
					v->subid = parent;
				}
			}
			if (g->top == NULL)
				*link = g->next;
			else
				link = &g->next;
		}
	}
	newest_subid = parent;
	if (!commit)
		generation++;
}

static void
registry_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the memory goes with TopTransactionContext */
			registry = NULL;
			registry_cxt = NULL;
			newest_subid = InvalidSubTransactionId;
			generation++;
			break;
		default:
			break;
	}
}

static void
registry_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (registry == NULL || mySubid > newest_subid)
		return;

	if (event == SUBXACT_EVENT_ABORT_SUB)
		end_subxact(false, mySubid, parentSubid);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		end_subxact(true, mySubid, parentSubid);
}

void
fence_registry_init(void)
{
	RegisterXactCallback(registry_xact_callback, NULL);
	RegisterSubXactCallback(registry_subxact_callback, NULL);
}
