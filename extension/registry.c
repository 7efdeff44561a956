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
 *
 *	  It lives in a child of TopTransactionContext and is dropped at the end
 *	  of the transaction.  A subtransaction that aborts also releases the
 *	  row locks it took, so what it registered is forgotten with it; what it
 *	  registered and committed is handed to its parent.
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

typedef struct Grant
{
	FenceGrant	pub;
	SubTransactionId subid;		/* subtransaction that registered it */
	struct Grant *next;			/* next grant whose name has the same hash */
} Grant;

typedef struct RegistryEntry
{
	uint64		hash;			/* hash key: must be first */
	Grant	   *grants;
} RegistryEntry;

static MemoryContext registry_cxt = NULL;
static HTAB *registry = NULL;

uint64
fence_resource_hash(const char *resource)
{
	return hash_bytes_extended((const unsigned char *) resource,
							   (int) strlen(resource), 0);
}

static Grant *
find_grant(const char *resource, RegistryEntry **entry_out)
{
	uint64		hash = fence_resource_hash(resource);
	RegistryEntry *entry;
	Grant	   *g;

	entry = hash_search(registry, &hash, HASH_FIND, NULL);
	if (entry_out)
		*entry_out = entry;
	if (entry == NULL)
		return NULL;
	for (g = entry->grants; g != NULL; g = g->next)
		if (strcmp(g->pub.resource, resource) == 0)
			return g;
	return NULL;
}

const FenceGrant *
fence_registry_lookup(const char *resource)
{
	Grant	   *g;

	if (registry == NULL)
		return NULL;
	g = find_grant(resource, NULL);
	return g ? &g->pub : NULL;
}

void
fence_registry_remember(const char *resource, int64 token, const char *owner)
{
	uint64		hash;
	RegistryEntry *entry;
	Grant	   *g;
	bool		found;

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

	g = find_grant(resource, NULL);
	if (g == NULL)
	{
		hash = fence_resource_hash(resource);
		entry = hash_search(registry, &hash, HASH_ENTER, &found);
		if (!found)
			entry->grants = NULL;
		g = MemoryContextAlloc(registry_cxt, sizeof(Grant));
		g->pub.resource = MemoryContextStrdup(registry_cxt, resource);
		g->pub.owner = NULL;
		g->next = entry->grants;
		entry->grants = g;
	}
	g->pub.token = token;
	if (owner == NULL)
		g->pub.owner = NULL;
	else if (g->pub.owner == NULL || strcmp(g->pub.owner, owner) != 0)
		g->pub.owner = MemoryContextStrdup(registry_cxt, owner);
	g->subid = GetCurrentSubTransactionId();
}

/* Drop the grants that match "pred", e.g. all of one name or one subxact. */
static void
forget_where(bool (*pred) (Grant *, const void *), const void *arg)
{
	HASH_SEQ_STATUS seq;
	RegistryEntry *entry;

	hash_seq_init(&seq, registry);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Grant	  **link = &entry->grants;

		while (*link != NULL)
		{
			if (pred(*link, arg))
				*link = (*link)->next;
			else
				link = &(*link)->next;
		}
	}
}

static bool
grant_has_name(Grant *g, const void *resource)
{
	return strcmp(g->pub.resource, (const char *) resource) == 0;
}

static bool
grant_of_subxact(Grant *g, const void *subid)
{
	return g->subid == *(const SubTransactionId *) subid;
}

void
fence_registry_forget(const char *resource)
{
	if (registry != NULL)
		forget_where(grant_has_name, resource);
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
			break;
		default:
			break;
	}
}

static void
registry_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS seq;
	RegistryEntry *entry;
	Grant	   *g;

	if (registry == NULL)
		return;

	if (event == SUBXACT_EVENT_ABORT_SUB)
		forget_where(grant_of_subxact, &mySubid);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		hash_seq_init(&seq, registry);
		while ((entry = hash_seq_search(&seq)) != NULL)
			for (g = entry->grants; g != NULL; g = g->next)
				if (g->subid == mySubid)
					g->subid = parentSubid;
	}
}

void
fence_registry_init(void)
{
	RegisterXactCallback(registry_xact_callback, NULL);
	RegisterSubXactCallback(registry_subxact_callback, NULL);
}
