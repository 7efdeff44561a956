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
 *	  registry follows the same rule.  Each resource has one entry, holding
 *	  what is in force now and which (sub)transaction wrote it last.  A
 *	  subtransaction that writes an entry it did not write before first
 *	  logs what the entry held (or that it made the entry) in an undo log;
 *	  when it rolls back (ROLLBACK TO SAVEPOINT, an exception caught by
 *	  PL/pgSQL) its records put back what the parent had, and its row locks
 *	  and tokens are gone together; when it commits (RELEASE) its entries
 *	  become its parent's, and of its records only those the parent will
 *	  need to roll back to its own parent are kept.
 *
 *	  The records of the current subtransaction are always the newest of
 *	  the log: a child's are popped (rollback) or taken over by its parent
 *	  (commit) when it ends, before the parent writes again.  So ending a
 *	  subtransaction costs the entries it wrote, not the size of the
 *	  registry: a PL/pgSQL loop that fences one resource per EXCEPTION
 *	  block stays linear.  The top-level transaction logs nothing, as its
 *	  end drops everything.  What the registry keeps per resource is the
 *	  entry alone; the log holds only the writes of subtransactions still
 *	  open.
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

#include "fence_ext.h"

/* What the transaction holds for one resource. */
typedef struct Grant
{
	FenceGrant	pub;			/* token 0: forgotten, row lock still held */
	SubTransactionId subid;		/* the (sub)transaction that wrote it last */
	struct Grant *next;			/* next grant whose name has the same hash */
} Grant;

typedef struct RegistryEntry
{
	uint64		hash;			/* hash key: must be first */
	Grant	   *grants;
} RegistryEntry;

/*
 * What a grant held before subtransaction "subid" first wrote it, or, when
 * "made", that the subtransaction made it.
 */
typedef struct Undo
{
	Grant	   *grant;
	SubTransactionId subid;
	SubTransactionId old_subid;
	bool		made;
	int64		old_token;
	const char *old_owner;
} Undo;

static MemoryContext registry_cxt = NULL;
static HTAB *registry = NULL;
static Undo *undo_log = NULL;
static int	undo_len = 0;
static int	undo_size = 0;

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
find_grant(const char *resource, uint64 hash)
{
	RegistryEntry *entry;
	Grant	   *g;

	if (registry == NULL)
		return NULL;
	entry = hash_search(registry, &hash, HASH_FIND, NULL);
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
	Grant	   *g = find_grant(resource, resource_hash(resource));

	return g != NULL && g->pub.token != 0 ? &g->pub : NULL;
}

/*
 * fence_registry_lookup() and fence_registry_holds_lock() in one probe:
 * the token registered for "resource", and in "holds_lock" whether this
 * transaction holds its row lock (also when it no longer names a token).
 */
const FenceGrant *
fence_registry_find(const char *resource, bool *holds_lock)
{
	Grant	   *g = find_grant(resource, resource_hash(resource));

	*holds_lock = g != NULL;
	return g != NULL && g->pub.token != 0 ? &g->pub : NULL;
}

bool
fence_registry_holds_lock(const char *resource)
{
	return find_grant(resource, resource_hash(resource)) != NULL;
}

/* Log what "g" holds (or, "made", that it is new) before "subid" writes it. */
static void
log_undo(Grant *g, SubTransactionId subid, bool made)
{
	Undo	   *u;

	if (undo_len == undo_size)
	{
		undo_size = undo_size == 0 ? 64 : undo_size * 2;
		undo_log = undo_log == NULL ?
			MemoryContextAlloc(registry_cxt, sizeof(Undo) * undo_size) :
			repalloc(undo_log, sizeof(Undo) * undo_size);
	}
	u = &undo_log[undo_len++];
	u->grant = g;
	u->subid = subid;
	u->made = made;
	u->old_subid = g->subid;
	u->old_token = g->pub.token;
	u->old_owner = g->pub.owner;
}

/*
 * Record "token" and "owner" (token 0: no token) as what the current
 * subtransaction registered for "resource".
 */
static void
set_grant(const char *resource, int64 token, const char *owner)
{
	SubTransactionId subid = GetCurrentSubTransactionId();
	uint64		hash = resource_hash(resource);
	Grant	   *g;

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

	g = find_grant(resource, hash);
	if (g == NULL)
	{
		bool		found;
		RegistryEntry *entry = hash_search(registry, &hash, HASH_ENTER, &found);

		if (!found)
			entry->grants = NULL;
		g = MemoryContextAlloc(registry_cxt, sizeof(Grant));
		g->pub.resource = MemoryContextStrdup(registry_cxt, resource);
		g->pub.token = 0;
		g->pub.owner = NULL;
		g->subid = subid;
		g->next = entry->grants;
		entry->grants = g;
		if (subid != TopSubTransactionId)
			log_undo(g, subid, true);
	}
	else if (g->subid != subid)
	{
		if (subid != TopSubTransactionId)
			log_undo(g, subid, false);
		g->subid = subid;
	}

	g->pub.token = token;
	if (owner == NULL)
		g->pub.owner = NULL;
	else if (g->pub.owner == NULL || strcmp(g->pub.owner, owner) != 0)
		g->pub.owner = MemoryContextStrdup(registry_cxt, owner);
	generation++;
}

void
fence_registry_remember(const char *resource, int64 token, const char *owner)
{
	Assert(token > 0);
	set_grant(resource, token, owner);
}

/*
 * Forget the token of "resource" for the rest of the current subtransaction.
 * The entry stays, without a token: the row lock is still ours.
 */
void
fence_registry_forget(const char *resource)
{
	set_grant(resource, 0, NULL);
}

/* Take "g" out of the registry: the subtransaction that made it rolled back. */
static void
remove_grant(Grant *g)
{
	uint64		hash = resource_hash(g->pub.resource);
	RegistryEntry *entry = hash_search(registry, &hash, HASH_FIND, NULL);
	Grant	  **link;

	Assert(entry != NULL);
	for (link = &entry->grants; *link != g; link = &(*link)->next)
		Assert(*link != NULL);
	*link = g->next;
	if (entry->grants == NULL)
		hash_search(registry, &hash, HASH_REMOVE, NULL);
}

/*
 * Subtransaction "subid" ended: undo what it wrote (abort), or hand its
 * grants to "parent" (commit).  Its records are the newest of the log.
 */
static void
end_subxact(bool commit, SubTransactionId subid, SubTransactionId parent)
{
	int			first = undo_len;
	int			kept;
	int			i;

	while (first > 0 && undo_log[first - 1].subid == subid)
		first--;
	if (first == undo_len)
		return;					/* it wrote nothing */

	if (!commit)
	{
		/* newest first, so that each grant gets back its oldest value */
		for (i = undo_len - 1; i >= first; i--)
		{
			Undo	   *u = &undo_log[i];

			if (u->made)
				remove_grant(u->grant);
			else
			{
				u->grant->subid = u->old_subid;
				u->grant->pub.token = u->old_token;
				u->grant->pub.owner = u->old_owner;
			}
		}
		undo_len = first;
		generation++;
		return;
	}

	/*
	 * Its grants are the parent's now.  The parent needs a record only for
	 * a grant it had not written itself, to roll back to what its own
	 * parent had; the top-level transaction needs none.
	 */
	kept = first;
	for (i = first; i < undo_len; i++)
	{
		Undo	   *u = &undo_log[i];

		u->grant->subid = parent;
		if (parent == TopSubTransactionId || u->old_subid == parent)
			continue;
		u->subid = parent;
		undo_log[kept++] = *u;
	}
	undo_len = kept;
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
			undo_log = NULL;
			undo_len = undo_size = 0;
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
	if (registry == NULL)
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
