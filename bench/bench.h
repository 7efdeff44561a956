/*
 * bench/bench.h
 *	  Small helpers shared by the C bench programs: a monotonic clock,
 *	  a growable array of latencies, and percentiles.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline int64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void
bench_sleep_ms(int64_t ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Latencies in nanoseconds; grows as needed. */
typedef struct bench_lat
{
	int64_t    *v;
	size_t		n;
	size_t		cap;
} bench_lat;

static inline void
bench_lat_add(bench_lat *l, int64_t ns)
{
	if (l->n == l->cap)
	{
		size_t		cap = l->cap ? 2 * l->cap : 4096;
		int64_t    *v = realloc(l->v, cap * sizeof(int64_t));

		if (v == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = ns;
}

/* Append all of "src" to "dst". */
static inline void
bench_lat_merge(bench_lat *dst, const bench_lat *src)
{
	size_t		i;

	for (i = 0; i < src->n; i++)
		bench_lat_add(dst, src->v[i]);
}

static int
bench_cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* The "p"-th percentile (0..100) in microseconds; sorts "l". */
static inline double
bench_lat_pct_us(bench_lat *l, double p)
{
	size_t		i;

	if (l->n == 0)
		return 0.0 / 0.0;
	qsort(l->v, l->n, sizeof(int64_t), bench_cmp_i64);
	i = (size_t) (p / 100.0 * (double) (l->n - 1) + 0.5);
	return (double) l->v[i] / 1000.0;
}

#endif							/* BENCH_H */
