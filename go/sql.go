// go/sql.go: a lease's tokens into SQL, for database/sql and pgx.
//
// SetTokens puts the lease's tokens into fence.tokens for the current
// transaction (set_config(..., true), which is SET LOCAL with a
// parameter), so that plain SQL on guarded tables is fenced without
// change.  It takes a *sql.Tx (or anything with database/sql's
// ExecContext) and pgx's Tx, Conn or pool (anything with pgx's Exec),
// without importing pgx: the package needs nothing outside the standard
// library.  InTx runs a function in a database/sql transaction with the
// tokens set.

package pgfence

import (
	"context"
	"database/sql"
	"reflect"
)

// SetTokensSQL sets fence.tokens, from its one parameter, for the current
// transaction: tx.Exec(ctx, pgfence.SetTokensSQL, lease.FenceTokens()).
const SetTokensSQL = "SELECT pg_catalog.set_config('fence.tokens', $1, true)"

type sqlExecer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

var (
	ctxType   = reflect.TypeOf((*context.Context)(nil)).Elem()
	errorType = reflect.TypeOf((*error)(nil)).Elem()
)

// SetTokens sets fence.tokens to "lease"'s tokens for the current
// transaction of "tx": a *sql.Tx or *sql.Conn (database/sql, any driver
// that takes $1), or pgx's Tx, Conn or pgxpool's Tx.  Call it in each
// transaction, after BEGIN: outside one it lasts a single statement.
func SetTokens(ctx context.Context, tx any, lease *Lease) error {
	if e, ok := tx.(sqlExecer); ok {
		_, err := e.ExecContext(ctx, SetTokensSQL, lease.FenceTokens())
		return Classify(err)
	}
	// pgx: Exec(ctx, sql string, args ...interface{}) (pgconn.CommandTag, error)
	m := reflect.ValueOf(tx).MethodByName("Exec")
	if m.IsValid() {
		t := m.Type()
		if t.NumIn() == 3 && t.IsVariadic() && t.In(0) == ctxType && t.In(1).Kind() == reflect.String &&
			t.NumOut() == 2 && t.Out(1) == errorType {
			out := m.CallSlice([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(SetTokensSQL),
				reflect.ValueOf([]any{lease.FenceTokens()})})
			err, _ := out[1].Interface().(error)
			return Classify(err)
		}
		if t.NumIn() == 2 && t.IsVariadic() && t.In(0).Kind() == reflect.String &&
			t.NumOut() == 2 && t.Out(1) == errorType {
			// database/sql's Exec without a context
			out := m.CallSlice([]reflect.Value{reflect.ValueOf(SetTokensSQL),
				reflect.ValueOf([]any{lease.FenceTokens()})})
			err, _ := out[1].Interface().(error)
			return Classify(err)
		}
	}
	return configError(reflect.TypeOf(tx).String() +
		" is neither a database/sql transaction (ExecContext) nor a pgx one (Exec with a context)")
}

// InTx runs "fn" in a transaction of "db" with fence.tokens set to
// "lease"'s tokens, and commits it when fn returns nil (rolls it back
// otherwise).  A stale-token refusal, from fn or the commit, comes back
// matching errors.Is(err, ErrStale).
func InTx(ctx context.Context, db *sql.DB, lease *Lease, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err = SetTokens(ctx, tx, lease); err == nil {
		if err = fn(tx); err == nil {
			return Classify(tx.Commit())
		}
	}
	tx.Rollback()
	return Classify(err)
}
