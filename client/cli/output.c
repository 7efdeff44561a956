/*
 * client/cli/output.c
 *	  How fence prints what it found: NAME=VALUE lines a POSIX shell can
 *	  eval, or JSON with --json; a lease, and a statement's result.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * The length of the UTF-8 sequence at "p", or 0 when it is not a valid one
 * (overlong forms, surrogates and code points above U+10FFFF are not).
 */
static int
utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80,
				hi = 0xBF;
	int			n,
				i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
	{
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	}
	else if (c >= 0xF0 && c <= 0xF4)
	{
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	}
	else
		return 0;
	/* the second byte has the narrower range; the string's NUL stops us */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

/*
 * Print "s" as a JSON string.  JSON text is UTF-8, and names, owners and
 * values are whatever bytes they are: each byte that is not part of a valid
 * UTF-8 sequence becomes U+FFFD; quotes, backslashes and control characters
 * are escaped.
 */
void
json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *) s;

	fputc('"', f);
	while (*p)
	{
		int			n = utf8_len(p);

		if (n == 0)
		{
			fputs("\\ufffd", f);
			n = 1;
		}
		else if (n > 1)
			fwrite(p, 1, n, f);
		else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7F)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
		p += n;
	}
	fputc('"', f);
}

/* Print NAME=VALUE so that a POSIX shell's eval gets VALUE back intact. */
void
shell_assign(const char *name, const char *value)
{
	const char *p;
	int			plain = *value != '\0';

	for (p = value; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:/@%+-=", *p))
			plain = 0;
	if (plain)
	{
		printf("%s=%s\n", name, value);
		return;
	}
	printf("%s='", name);
	for (p = value; *p; p++)
	{
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*p);
	}
	printf("'\n");
}

void
print_lease(const options *o, fence_lease *l)
{
	char		token[24];

	snprintf(token, sizeof(token), "%lld", fence_lease_token(l));
	if (o->json)
	{
		printf("{\"resource\":");
		json_string(stdout, fence_lease_resource(l));
		printf(",\"token\":%s,\"owner\":", token);
		json_string(stdout, fence_lease_owner(l));
		printf(",\"ttl_ms\":%lld}\n", fence_lease_ttl(l));
		return;
	}
	shell_assign("FENCE_RESOURCE", fence_lease_resource(l));
	shell_assign("FENCE_TOKEN", token);
	shell_assign("FENCE_OWNER", fence_lease_owner(l));
}

/* A set as acquire prints it: numbered shell assignments, or JSON. */
void
print_set(const options *o, fence_leases *set, const char *tokens)
{
	size_t		i,
				n = fence_leases_count(set);
	char		name[40],
				value[24];

	if (o->json)
	{
		printf("{\"tokens\":");
		json_string(stdout, tokens);
		printf(",\"leases\":[");
		for (i = 0; i < n; i++)
		{
			fence_lease *l = fence_leases_member(set, i);

			printf("%s{\"resource\":", i ? "," : "");
			json_string(stdout, fence_lease_resource(l));
			printf(",\"token\":%lld,\"owner\":", fence_lease_token(l));
			json_string(stdout, fence_lease_owner(l));
			printf(",\"ttl_ms\":%lld}", fence_lease_ttl(l));
		}
		printf("]}\n");
		return;
	}
	shell_assign("FENCE_TOKENS", tokens);
	snprintf(value, sizeof(value), "%zu", n);
	shell_assign("FENCE_COUNT", value);
	for (i = 0; i < n; i++)
	{
		fence_lease *l = fence_leases_member(set, i);

		snprintf(name, sizeof(name), "FENCE_RESOURCE_%zu", i + 1);
		shell_assign(name, fence_lease_resource(l));
		snprintf(name, sizeof(name), "FENCE_TOKEN_%zu", i + 1);
		snprintf(value, sizeof(value), "%lld", fence_lease_token(l));
		shell_assign(name, value);
		snprintf(name, sizeof(name), "FENCE_OWNER_%zu", i + 1);
		shell_assign(name, fence_lease_owner(l));
	}
	if (n == 1)
		print_lease(o, fence_leases_member(set, 0));
}

/* Print a result like psql -At: fields separated by '|'. */
void
print_result(const options *o, PGresult *res, long long token)
{
	int			i,
				j,
				n = PQntuples(res),
				m = PQnfields(res);

	if (o->json)
	{
		const char *tuples = PQcmdTuples(res);

		printf("{\"token\":%lld,\"command\":", token);
		json_string(stdout, PQcmdStatus(res));
		printf(",\"rows\":%s", *tuples ? tuples : "0");
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
		{
			printf(",\"result\":[");
			for (i = 0; i < n; i++)
			{
				printf(i ? ",[" : "[");
				for (j = 0; j < m; j++)
				{
					if (j)
						putchar(',');
					if (PQgetisnull(res, i, j))
						printf("null");
					else
						json_string(stdout, PQgetvalue(res, i, j));
				}
				putchar(']');
			}
			putchar(']');
		}
		printf("}\n");
		return;
	}
	for (i = 0; i < n; i++)
	{
		for (j = 0; j < m; j++)
		{
			if (j)
				putchar('|');
			fputs(PQgetvalue(res, i, j), stdout);
		}
		putchar('\n');
	}
}
