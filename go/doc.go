// Package pgfence takes leases on Redis with fencing tokens that
// PostgreSQL checks: a worker that lost its lease without noticing (a
// pause, a partition) cannot corrupt data, because the fence extension
// refuses its writes with SQLSTATE LF001.
//
// It is a thin cgo binding over libfence, the C library that implements
// the protocol for the fence command and every other binding, so every
// Redis topology (one node, Sentinel, Cluster, a quorum; TLS), the waiting
// queue and the recovery after a Redis restart work as they do there.  It
// needs nothing outside Go's standard library; libfence is found with
// pkg-config (libfence.pc).
//
//	client, err := pgfence.NewClient("redis://cache:6379", pgfence.WithPG("dbname=app"))
//	lease, err := client.Acquire(ctx, []string{"inventory"}, pgfence.Options{TTL: 10 * time.Second, Wait: 5 * time.Second})
//	defer lease.Release()
//	tx, _ := conn.Begin(ctx)                 // pgx, or database/sql
//	pgfence.SetTokens(ctx, tx, lease)        // SET LOCAL fence.tokens
//	... writes; select on lease.Lost() between units of work ...
//
// The shape is redsync's (Lock, Extend, Unlock with a context), with a
// fencing token: Acquire, Extend, Release, Lost.  docs/go.md has the
// recipes.
package pgfence
