/*
 * extension/key_resource.c
 *	  How the rows of a key-mode table are named: the resource that the
 *	  guard checks for a row, and that a worker must lease to write it.
 *
 *	  The row whose key column holds K, in a table protected with resource
 *	  B, belongs to
 *
 *		B ':' escape(text(K))
 *
 *	  where text(K) is the key's text form (its type's output function) and
 *	  escape() puts a backslash before every ':' and '\' in it.  A key with
 *	  neither character is written as it is: row 7 of a table protected as
 *	  'inv' is 'inv:7', the name that "fence run inv:7" leases.
 *
 *	  Why no two (B, K) share a name.  B may not contain ':' (protect()
 *	  refuses such a base in key mode), so the first ':' of a name ends B,
 *	  and what follows it is escape(text(K)), which escape() maps one to one
 *	  (unescaping gives text(K) back).  Escaping the key alone would not be
 *	  enough were ':' allowed in B: base 'a:b\' with key 'c' and base 'a'
 *	  with key 'b:c' would both be 'a:b\:c'.  Plain resources (table mode,
 *	  fence.advance) may contain ':', and 'inv:7' names the same fence as row
 *	  7 of 'inv' on purpose: a key-mode table protected as B owns every name
 *	  that starts with B ':'.
 *
 *	  Why only some key types.  A name must not depend on the session that
 *	  computes it, or one row would have two fences and a stale token could
 *	  commit under the one its successor did not raise.  The text form of a
 *	  timestamp follows DateStyle and TimeZone, of a float extra_float_digits,
 *	  of a regclass search_path, of a range or an array of those their
 *	  element's; an enum's labels can be renamed.  So the key's type, or the
 *	  base type of its domain, must be one of an allow-list (below) whose
 *	  output functions read no setting and no catalog.
 *
 *	  fence.key_resource(resource, key) computes the name from SQL, so that
 *	  applications need not reimplement the escaping.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "fence_ext.h"
#include "guard.h"

PG_FUNCTION_INFO_V1(fence_key_resource);

/*
 * fence_key_type_allowed: whether keys of type "typid" (or of a domain over
 * it) have a text form fit to name a resource.  Each type's output is
 * fixed by its value alone:
 *
 *	boolean					't' or 'f' (not 'true'/'false', as ::text gives)
 *	smallint, integer,		decimal digits
 *	bigint
 *	numeric					digits with the stored scale ('1.0' and '1.00'
 *							are two names: use numeric(p,s) for a fixed
 *							scale), 'NaN', 'Infinity'
 *	text, varchar, char,	the stored characters; char keeps its padding
 *	name
 *	uuid					lower-case hex in 8-4-4-4-12 groups
 *
 * Refused, among others: float4/float8 (extra_float_digits), money
 * (lc_monetary), date/time types (DateStyle, TimeZone, IntervalStyle),
 * bytea (bytea_output), reg* types (search_path, and renames), enums
 * (ALTER TYPE ... RENAME VALUE), arrays and ranges (their element's form),
 * geometric types (extra_float_digits), json (spacing as written).
 */
bool
fence_key_type_allowed(Oid typid)
{
	switch (getBaseType(typid))
	{
		case BOOLOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
		case UUIDOID:
			return true;
		default:
			return false;
	}
}

/* The errdetail of every refusal of a key type. */
const char *
fence_key_type_detail(void)
{
	return "A row's resource is named after the text form of its key, which must not depend on settings: "
		"the key must be of type boolean, smallint, integer, bigint, numeric, text, character varying, "
		"character, name or uuid, or of a domain over one of them.";
}

/*
 * fence_check_key_base: refuse "base" as the resource of a key-mode guard
 * when names built on it could be ambiguous (see the banner) or could not
 * fit the length limit, whatever the key.
 */
void
fence_check_key_base(const char *base)
{
	fence_check_resource_name(base);
	if (strchr(base, ':') != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resource \"%s\" of a key-mode guard must not contain \":\"", base),
				 errdetail("A row's resource is the resource, \":\" and the key; a \":\" in the resource would let two rows of different tables share a name."),
				 errhint("Choose a resource without \":\".")));
	if (strlen(base) + 1 > FENCE_MAX_RESOURCE_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resource of a key-mode guard is too long"),
				 errdetail("The resource has %zu bytes; with \":\" and a key it must fit in %d.",
						   strlen(base), FENCE_MAX_RESOURCE_LEN)));
}

/*
 * fence_key_resource_name: the resource of a row whose key has the text form
 * "key", in a table protected with resource "base"; palloc'd.  The length
 * is not checked here: callers report it with their own context.
 */
char *
fence_key_resource_name(const char *base, const char *key)
{
	StringInfoData buf;
	const char *p;

	initStringInfo(&buf);
	appendStringInfoString(&buf, base);
	appendStringInfoChar(&buf, ':');
	for (p = key; *p != '\0'; p++)
	{
		/* both are ASCII, which no byte of a multibyte character can be */
		if (*p == ':' || *p == '\\')
			appendStringInfoChar(&buf, '\\');
		appendStringInfoChar(&buf, *p);
	}
	return buf.data;
}

/*
 * fence.key_resource(resource text, key anycompatible) RETURNS text
 *	  The resource that the guard checks for a row with key "key" in a table
 *	  protected with "resource" and a key column of the key's type.
 */
Datum
fence_key_resource(PG_FUNCTION_ARGS)
{
	char	   *base = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, 1);
	Oid			typoutput;
	bool		typisvarlena;
	char	   *name;

	if (!OidIsValid(typid))
		elog(ERROR, "could not determine the type of the key");	/* internal error */
	if (!fence_key_type_allowed(typid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("key of type %s cannot name a resource", format_type_be(typid)),
				 errdetail_internal("%s", fence_key_type_detail())));
	fence_check_key_base(base);

	getTypeOutputInfo(typid, &typoutput, &typisvarlena);
	name = fence_key_resource_name(base, OidOutputFunctionCall(typoutput, PG_GETARG_DATUM(1)));
	if (strlen(name) > FENCE_MAX_RESOURCE_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resource name is too long"),
				 errdetail("The resource of this key has %zu bytes; the limit is %d.",
						   strlen(name), FENCE_MAX_RESOURCE_LEN)));
	PG_RETURN_TEXT_P(cstring_to_text(name));
}
