/*
 * extension/registry.c
 *	  The tokens accepted in the current transaction, per resource.
 *
 *	  Once a transaction has checked token T for resource R, it holds R's
 *	  row lock in fence.fences (or, for an unchanged mark, R's mark lock:
 *	  marks.c) until it ends, so nobody else can move R's
 *	  high-water mark in between: every later check of the same (R, T) in
 *	  this transaction would give the same answer.  The registry remembers
 *	  those answers, which is what lets a guarded statement touching 100k
 *	  rows of one resource check the fence table once, and lets the guard
 *	  find the token fence.advance registered earlier in the transaction.
 *	  An entry also tells rule.c that this transaction holds R's row lock
 *	  already, even when it no longer names a token (fence.reset forgot it).
 *
 *	  Names by hash.  A transaction may fence millions of resources (one per
 *	  key of a key-mode table), with names of up to 1024 bytes, so the
 *	  registry keeps no names: an entry is R's 128-bit SipHash-2-4
 *	  (siphash.c) under a key drawn from pg_strong_random() when the backend
 *	  first needs it and never shown to anyone, and R's token, 24 bytes in
 *	  all.  An owner is kept the same way, hashed, once per distinct owner,
 *	  with 4 bytes in the entry for the transactions that name owners.  A
 *	  lookup answers for R exactly when an entry has R's hash.
 *
 *	  Why a collision cannot admit a write.  Were two names R and R' of one
 *	  transaction to share a hash, a write to R' would find R's entry, and
 *	  the guard would let it through on R's token and R's row lock, without
 *	  ever checking R''s fence.  That needs two of the at most n names a
 *	  transaction registers (n < 2^26, below) to collide on 128 bits of a
 *	  pseudorandom function: probability at most n^2 / 2^129 < 2^-77, for
 *	  any names, however chosen, since whoever chooses them (a client
 *	  naming resources, a user choosing the keys of a key-mode table) does
 *	  not know the key and so cannot aim at a collision; and the next
 *	  backend draws another key.  That is far below the odds of an
 *	  undetected memory error on the same machine, which the rule does not
 *	  defend against either.  Owners: two owners sharing a hash would let
 *	  a token registered for one pass as the other's in rule.c's shortcut,
 *	  with the same probability.  Names that differ are never merged in any
 *	  other way: the table below compares all 128 bits before it answers.
 *
 *	  Layout.  Entries are appended to an array of fixed-size chunks and
 *	  never move; an open-addressing index of 4-byte slots (linear probing,
 *	  at most 3/4 full, grown by half and rebuilt from the entries' hashes)
 *	  finds them.  A slot holds the entry's number and 6 more bits of its
 *	  hash, so that a probe that is not a match rarely touches the entry.
 *	  Per resource: 24 bytes of entry and 5.3 to 8 bytes of index (plus 4
 *	  for an owner); a transaction can hold at most 2^26 - 1 resources
 *	  (about 2 GB), past which registering one more is refused with 54000.
 *
 *	  Subtransactions.  PostgreSQL keeps a row lock for as long as the
 *	  (sub)transaction that took it lives, and a lock that a parent took
 *	  survives the rollback of a child that locked the row again.  The
 *	  registry follows the same rule.  Each subtransaction that writes the
 *	  registry gets a level on a stack: the number of entries when it began
 *	  (entries made after that are its own or its committed children's, and
 *	  its rollback drops them) and the start of its records in an undo log,
 *	  which holds what an entry held before the subtransaction first
 *	  changed it, for the entries that existed before it began.  Rollback
 *	  (ROLLBACK TO SAVEPOINT, an exception caught by PL/pgSQL) puts those
 *	  back and drops the newer entries, so the parent's tokens, with the row
 *	  locks PostgreSQL keeps for it, are in force again and the child's are
 *	  gone; commit (RELEASE) hands the level to the parent, keeping only the
 *	  records the parent will need to roll back to its own parent.  The
 *	  levels of ended subtransactions are always popped first, so ending a
 *	  subtransaction costs the entries it wrote, not the size of the
 *	  registry: a PL/pgSQL loop that fences one resource per EXCEPTION
 *	  block stays linear.  The top-level transaction keeps no level and
 *	  logs nothing, as its end drops everything.
 *
 *	  It lives in a child of TopTransactionContext and is dropped at the end
 *	  of the transaction.  A generation number that changes whenever what a
 *	  lookup would return may have changed lets callers keep the result of
 *	  a lookup (guard.c does, per statement) and know when it went stale.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "fence_ext.h"
#include "siphash.h"

/* What the transaction holds for one resource: 24 bytes. */
typedef struct Entry
{
	FenceHash128 name;			/* the resource's hash */
	int64		token;			/* 0: forgotten, row lock still held */
} Entry;

/* Entries come in chunks that never move, so that growing copies nothing. */
#define CHUNK_BITS 12
#define CHUNK_SIZE (1 << CHUNK_BITS)

typedef struct Chunk
{
	Entry		entries[CHUNK_SIZE];
	uint32	   *owners;			/* owner of each entry (0: none, else the
								 * owner's number + 1), made when the first
								 * entry of the chunk gets an owner */
} Chunk;

/* An index slot: 0 empty, else the entry's number + 1 and 6 bits of hash. */
#define SLOT_NUMBER_BITS 26
#define SLOT_NUMBER_MASK (((uint32) 1 << SLOT_NUMBER_BITS) - 1)
#define MAX_ENTRIES SLOT_NUMBER_MASK
#define MIN_SLOTS 64

/* What an entry held before a subtransaction first changed it. */
typedef struct Undo
{
	uint32		entry;
	uint32		owner;
	int64		token;
} Undo;

/* A subtransaction that wrote the registry (see the banner). */
typedef struct Level
{
	SubTransactionId subid;
	uint32		first_entry;	/* entries from here on are its own */
	int			first_undo;		/* its records in the undo log */
	HTAB	   *logged;			/* older entries it has a record for */
} Level;

/* The key of every hash of this backend, drawn once. */
static uint64 hash_key[2];
static bool have_hash_key = false;

static MemoryContext registry_cxt = NULL;

static Chunk **chunks = NULL;
static int	nchunks = 0;			/* made; a rollback keeps them for reuse */
static int	nchunks_alloc = 0;
static uint32 nentries = 0;

static uint32 *slots = NULL;
static uint32 nslots = 0;

/* owners by number, and the index from an owner's hash to its number */
static FenceHash128 *owner_names = NULL;
static uint32 nowners = 0;
static int	owners_alloc = 0;
static HTAB *owner_index = NULL;

static Undo *undo_log = NULL;
static int	undo_len = 0;
static int	undo_size = 0;

static Level *levels = NULL;
static int	nlevels = 0;
static int	levels_size = 0;

static uint64 generation = 1;

/*
 * Double the array "*array" of "*size" elements of "elem" bytes ("first"
 * the first time), in the registry's memory.
 */
static void
grow_array(void **array, int *size, Size elem, int first)
{
	*size = *size == 0 ? first : *size * 2;
	*array = *array == NULL ?
		MemoryContextAlloc(registry_cxt, elem * *size) :
		repalloc_huge(*array, elem * *size);
}

static inline Entry *
entry_at(uint32 n)
{
	return &chunks[n >> CHUNK_BITS]->entries[n & (CHUNK_SIZE - 1)];
}

static inline bool
same_hash(const FenceHash128 *a, const FenceHash128 *b)
{
	return a->lo == b->lo && a->hi == b->hi;
}

/* The slot where probing for "h" starts, and the 6 bits a slot keeps. */
static inline uint32
home_slot(const FenceHash128 *h)
{
	return (uint32) (((uint64) (uint32) h->lo * nslots) >> 32);
}

static inline uint32
slot_tag(const FenceHash128 *h)
{
	return (uint32) (h->lo >> 32) & ~SLOT_NUMBER_MASK;
}

/*
 * fence_registry_hash: the name under which the registry knows resource
 * (or owner) "name".
 */
FenceHash128
fence_registry_hash(const char *name)
{
	if (unlikely(!have_hash_key))
	{
		if (!pg_strong_random(hash_key, sizeof(hash_key)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate a random key for the fence registry")));
		have_hash_key = true;
	}
	return fence_siphash128(hash_key, name, strlen(name));
}

uint64
fence_registry_generation(void)
{
	return generation;
}

/* The index slot that holds entry "h", or of the empty slot ending its probe. */
static uint32
probe(const FenceHash128 *h, bool *found)
{
	uint32		i = home_slot(h);
	uint32		tag = slot_tag(h);

	for (;;)
	{
		uint32		s = slots[i];

		if (s == 0)
		{
			*found = false;
			return i;
		}
		if ((s & ~SLOT_NUMBER_MASK) == tag &&
			same_hash(&entry_at((s & SLOT_NUMBER_MASK) - 1)->name, h))
		{
			*found = true;
			return i;
		}
		if (++i == nslots)
			i = 0;
	}
}

/* Make the index "size" slots, holding every entry. */
static void
rebuild_index(uint32 size)
{
	uint32		n;

	if (slots != NULL)
		pfree(slots);
	nslots = size;
	slots = MemoryContextAllocZero(registry_cxt, sizeof(uint32) * size);
	for (n = 0; n < nentries; n++)
	{
		const Entry *e = entry_at(n);
		bool		found;
		uint32		i = probe(&e->name, &found);

		Assert(!found);
		slots[i] = slot_tag(&e->name) | (n + 1);
	}
}

/* Take entry "n" out of the index (backward-shift deletion). */
static void
unindex(uint32 n)
{
	bool		found;
	uint32		hole = probe(&entry_at(n)->name, &found);
	uint32		i = hole;

	Assert(found);
	for (;;)
	{
		uint32		home;

		if (++i == nslots)
			i = 0;
		if (slots[i] == 0)
			break;
		home = home_slot(&entry_at((slots[i] & SLOT_NUMBER_MASK) - 1)->name);
		/* move it into the hole unless its probe starts after the hole */
		if (hole <= i ? (home <= hole || home > i) : (home <= hole && home > i))
		{
			slots[hole] = slots[i];
			hole = i;
		}
	}
	slots[hole] = 0;
}

/*
 * The number of the entry for "h", or -1.
 *
 * A transaction that announced many resources and then writes their rows
 * (a key-mode table updated in key order after fence.advance of each key)
 * looks them up in the order it registered them: the entry after the one
 * found last is tried first, which reads the entries in order instead of
 * two random places per lookup.  It answers only when all 128 bits match,
 * as the index does.
 */
static int64
find_entry(const FenceHash128 *h)
{
	static uint32 next_guess = 0;
	bool		found;
	uint32		i;
	int64		n;

	if (nentries == 0)
		return -1;
	if (next_guess < nentries && same_hash(&entry_at(next_guess)->name, h))
		n = next_guess;
	else
	{
		i = probe(h, &found);
		if (!found)
			return -1;
		n = (int64) (slots[i] & SLOT_NUMBER_MASK) - 1;
	}
	next_guess = (uint32) n + 1;
	return n;
}

static uint32
entry_owner(uint32 n)
{
	uint32	   *owners = chunks[n >> CHUNK_BITS]->owners;

	return owners != NULL ? owners[n & (CHUNK_SIZE - 1)] : 0;
}

static void
set_entry_owner(uint32 n, uint32 owner)
{
	Chunk	   *c = chunks[n >> CHUNK_BITS];

	if (c->owners == NULL)
	{
		if (owner == 0)
			return;
		c->owners = MemoryContextAllocZero(registry_cxt, sizeof(uint32) * CHUNK_SIZE);
	}
	c->owners[n & (CHUNK_SIZE - 1)] = owner;
}

/* The number (+ 1) of owner "name", made if new. */
static uint32
owner_number(const char *name)
{
	FenceHash128 h = fence_registry_hash(name);
	bool		found;
	struct
	{
		FenceHash128 h;
		uint32		number;
	}		   *o;

	if (owner_index == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(FenceHash128);
		ctl.entrysize = sizeof(*o);
		ctl.hcxt = registry_cxt;
		owner_index = hash_create("fence registry owners", 16, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	o = hash_search(owner_index, &h, HASH_ENTER, &found);
	if (!found)
	{
		if (nowners == (uint32) owners_alloc)
			grow_array((void **) &owner_names, &owners_alloc, sizeof(FenceHash128), 16);
		owner_names[nowners] = h;
		o->number = ++nowners;
	}
	return o->number;
}

/*
 * fence_registry_find: whether this transaction holds the row lock of the
 * resource whose hash is "name"; if so, "token" is the token registered
 * for it (0: forgotten by fence.reset) and "owner" the hash of its owner,
 * or NULL if it has none.
 */
bool
fence_registry_find(const FenceHash128 *name, int64 *token,
					 const FenceHash128 **owner)
{
	int64		n = find_entry(name);
	uint32		o;

	if (n < 0)
		return false;
	*token = entry_at((uint32) n)->token;
	o = entry_owner((uint32) n);
	*owner = o != 0 ? &owner_names[o - 1] : NULL;
	return true;
}

/* The level of the current subtransaction, pushed if it has none yet. */
static Level *
current_level(SubTransactionId subid)
{
	Level	   *l;

	if (nlevels > 0 && levels[nlevels - 1].subid == subid)
		return &levels[nlevels - 1];
	/* ended subtransactions were popped: it is deeper than the top level */
	Assert(nlevels == 0 || levels[nlevels - 1].subid < subid);
	if (nlevels == levels_size)
		grow_array((void **) &levels, &levels_size, sizeof(Level), 8);
	l = &levels[nlevels++];
	l->subid = subid;
	l->first_entry = nentries;
	l->first_undo = undo_len;
	l->logged = NULL;
	return l;
}

/* Whether level "l" has a record for entry "n"; with "add", make it so. */
static bool
level_logged(Level *l, uint32 n, bool add)
{
	bool		found = false;

	if (l->logged == NULL)
	{
		HASHCTL		ctl;

		if (!add)
			return false;
		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(uint32);
		ctl.hcxt = registry_cxt;
		l->logged = hash_create("fence registry level", 16, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	(void) hash_search(l->logged, &n, add ? HASH_ENTER : HASH_FIND, &found);
	return found;
}

/* Record what entry "n" holds, for the rollback of level "l". */
static void
log_undo(Level *l, uint32 n)
{
	Undo	   *u;

	if (undo_len == undo_size)
		grow_array((void **) &undo_log, &undo_size, sizeof(Undo), 64);
	u = &undo_log[undo_len++];
	u->entry = n;
	u->token = entry_at(n)->token;
	u->owner = entry_owner(n);
	(void) level_logged(l, n, true);
}

/* A new entry for "name", indexed. */
static uint32
add_entry(const FenceHash128 *name)
{
	uint32		n = nentries;
	bool		found;
	uint32		i;

	if (n == MAX_ENTRIES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many fenced resources in one transaction"),
				 errdetail("A transaction can hold the fences of at most %u resources.",
						   (unsigned int) MAX_ENTRIES),
				 errhint("Fence the resources in several transactions.")));
	if ((n >> CHUNK_BITS) == (uint32) nchunks_alloc)
		grow_array((void **) &chunks, &nchunks_alloc, sizeof(Chunk *), 16);
	if ((n >> CHUNK_BITS) == nchunks)
	{
		chunks[nchunks] = MemoryContextAlloc(registry_cxt, sizeof(Chunk));
		chunks[nchunks++]->owners = NULL;
	}
	entry_at(n)->name = *name;
	entry_at(n)->token = 0;
	set_entry_owner(n, 0);
	nentries++;

	/* at most 3/4 full: grow by half, which leaves it half full */
	if ((uint64) nentries * 4 > (uint64) nslots * 3)
		rebuild_index(Max(MIN_SLOTS, nslots + nslots / 2));
	else
	{
		i = probe(name, &found);
		Assert(!found);
		slots[i] = slot_tag(name) | (n + 1);
	}
	return n;
}

/*
 * Record "token" (0: no token) and "owner" as what the current
 * subtransaction holds for the resource whose hash is "name".
 */
static void
set_entry(const FenceHash128 *name, int64 token, const char *owner)
{
	SubTransactionId subid = GetCurrentSubTransactionId();
	Level	   *level = NULL;
	int64		found;
	uint32		n;

	if (registry_cxt == NULL)
		registry_cxt = AllocSetContextCreate(TopTransactionContext,
											 "fence registry",
											 ALLOCSET_DEFAULT_SIZES);
	if (subid != TopSubTransactionId)
		level = current_level(subid);

	found = find_entry(name);
	if (found < 0)
		n = add_entry(name);
	else
	{
		n = (uint32) found;
		/* an entry older than the level, changed for the first time in it */
		if (level != NULL && n < level->first_entry &&
			!level_logged(level, n, false))
			log_undo(level, n);
	}
	entry_at(n)->token = token;
	set_entry_owner(n, owner != NULL ? owner_number(owner) : 0);
	generation++;
}

void
fence_registry_remember(const FenceHash128 *name, int64 token, const char *owner)
{
	Assert(token > 0);
	set_entry(name, token, owner);
}

/*
 * Forget the token of a resource for the rest of the current
 * subtransaction.  The entry stays, without a token: the row lock is still
 * ours.
 */
void
fence_registry_forget(const FenceHash128 *name)
{
	set_entry(name, 0, NULL);
}

/* Level "l", the newest, rolled back: undo its records, drop its entries. */
static void
roll_back_level(Level *l)
{
	int			i;

	/* newest first, so that each entry gets back its oldest value */
	for (i = undo_len - 1; i >= l->first_undo; i--)
	{
		Undo	   *u = &undo_log[i];

		entry_at(u->entry)->token = u->token;
		set_entry_owner(u->entry, u->owner);
	}
	undo_len = l->first_undo;

	/* many entries: cheaper to index the rest anew than to take them out */
	if (nentries - l->first_entry > l->first_entry)
	{
		nentries = l->first_entry;
		rebuild_index(nslots);
	}
	else
		while (nentries > l->first_entry)
			unindex(--nentries);
}

/*
 * Subtransaction "subid" ended: undo what it wrote (abort), or hand its
 * level to "parent" (commit).  Its level, if it has one, is the newest.
 */
static void
end_subxact(bool commit, SubTransactionId subid, SubTransactionId parent)
{
	Level	   *l;

	if (nlevels == 0 || levels[nlevels - 1].subid != subid)
		return;					/* it wrote nothing */
	l = &levels[nlevels - 1];

	if (!commit)
	{
		roll_back_level(l);
		generation++;
	}
	else if (nlevels >= 2 && levels[nlevels - 2].subid == parent)
	{
		Level	   *p = &levels[nlevels - 2];
		int			kept = l->first_undo;
		int			i;

		/*
		 * The parent needs a record only for an entry that is older than
		 * its own level and that it had not changed itself.
		 */
		for (i = l->first_undo; i < undo_len; i++)
		{
			Undo	   *u = &undo_log[i];

			if (u->entry >= p->first_entry || level_logged(p, u->entry, false))
				continue;
			(void) level_logged(p, u->entry, true);
			undo_log[kept++] = *u;
		}
		undo_len = kept;
	}
	else if (parent != TopSubTransactionId)
	{
		/* the parent wrote nothing itself: the level becomes its own */
		l->subid = parent;
		return;
	}
	else
		undo_len = l->first_undo;	/* the top level needs no records */

	if (l->logged != NULL)
		hash_destroy(l->logged);
	nlevels--;
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
			registry_cxt = NULL;
			chunks = NULL;
			nchunks = nchunks_alloc = 0;
			nentries = 0;
			slots = NULL;
			nslots = 0;
			owner_names = NULL;
			nowners = owners_alloc = 0;
			owner_index = NULL;
			undo_log = NULL;
			undo_len = undo_size = 0;
			levels = NULL;
			nlevels = levels_size = 0;
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
