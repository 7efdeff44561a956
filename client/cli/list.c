/*
 * client/cli/list.c
 *	  fence list: the leases held now whose resource matches PATTERN, each
 *	  with its owner, remaining TTL, token and number of live waiters.
 *
 * The library finds them (fence_list: SCAN on every node that holds keys,
 * never KEYS); this prints them, a table for people or, with --json, one
 * object for programs.  No lease is no error: exit 0, nothing printed (an
 * empty "leases" array).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * Print "s" for a terminal: a backslash, control characters and DEL as
 * escapes (\\, \xNN), the rest as it is.  Returns the columns it takes
 * (UTF-8 sequences counted as one).
 */
static size_t
print_cell(const char *s)
{
	const unsigned char *p;
	size_t		width = 0;

	for (p = (const unsigned char *) s; *p; p++)
	{
		if (*p == '\\')
			width += printf("\\\\");
		else if (*p < 0x20 || *p == 0x7F)
			width += printf("\\x%02X", *p);
		else
		{
			putchar(*p);
			width += (*p & 0xC0) != 0x80;
		}
	}
	return width;
}

/* The columns "s" takes when printed by print_cell. */
static size_t
cell_width(const char *s)
{
	const unsigned char *p;
	size_t		width = 0;

	for (p = (const unsigned char *) s; *p; p++)
		width += *p == '\\' ? 2 : (*p < 0x20 || *p == 0x7F) ? 4 : (*p & 0xC0) != 0x80;
	return width;
}

static void
pad(size_t used, size_t width)
{
	while (used++ < width + 2)
		putchar(' ');
}

int
cmd_list(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_held *leases;
	size_t		n,
				i,
				wr = strlen("RESOURCE"),
				wo = strlen("OWNER");

	if (argc > 1)
		return usage_error("list takes at most one argument: PATTERN%s", "");
	if (fence_list(ctx, argc == 1 ? argv[0] : NULL, &leases, &n) != FENCE_OK)
		return fail(ctx);
	if (o->json)
	{
		printf("{\"leases\":[");
		for (i = 0; i < n; i++)
		{
			printf(i > 0 ? ",{\"resource\":" : "{\"resource\":");
			json_string(stdout, leases[i].resource);
			printf(",\"owner\":");
			json_string(stdout, leases[i].owner);
			printf(",\"ttl_ms\":%lld,\"token\":%lld,\"waiters\":%zu}",
				   leases[i].pttl_ms, leases[i].token, leases[i].waiters);
		}
		printf("]}\n");
	}
	else if (n > 0)
	{
		for (i = 0; i < n; i++)
		{
			if (cell_width(leases[i].resource) > wr)
				wr = cell_width(leases[i].resource);
			if (cell_width(leases[i].owner) > wo)
				wo = cell_width(leases[i].owner);
		}
		pad(print_cell("RESOURCE"), wr);
		pad(print_cell("OWNER"), wo);
		printf("%-10s  %-6s  %s\n", "TTL", "TOKEN", "WAITERS");
		for (i = 0; i < n; i++)
		{
			char		ttl[32];

			pad(print_cell(leases[i].resource), wr);
			pad(print_cell(leases[i].owner), wo);
			snprintf(ttl, sizeof(ttl), "%lldms", leases[i].pttl_ms);
			printf("%-10s  %-6lld  %zu\n", ttl, leases[i].token, leases[i].waiters);
		}
	}
	fence_list_free(leases, n);
	return 0;
}
