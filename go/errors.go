// go/errors.go: libfence's outcomes as Go errors.
//
// Every error this package returns is an *Error, which carries libfence's
// error kind (Code, one of fence.h's FENCE_ERR_* numbers; 0 for errors
// found in Go) and its message, and matches one of the sentinels below
// with errors.Is, sorted by what a caller does next:
//
//	ErrNotAcquired  BUSY, TIMEOUT, REPLICAS          try later, or wait longer
//	ErrLost         LOST                             stop writing; take a new lease
//	ErrUnreachable  IO, PROTOCOL, SUSPECT; PG down   retry once the server is back
//	ErrConfig       ARG, AUTH, TLS, STATE; database  fix the URL, ACL or grants
//	                not set up (Hint says what to run)
//	ErrStale        STALE; a driver's LF001          never retry with that token
//
// OVERFLOW, OOM and any other PostgreSQL error match none of them.

package pgfence

import (
	"errors"
	"reflect"
)

// fence.h's FENCE_ERR_* kinds.
const (
	codeIO       = 1
	codeProtocol = 2
	codeReply    = 3
	codeBusy     = 4
	codeTimeout  = 5
	codeLost     = 6
	codeSuspect  = 7
	codeStale    = 8
	codePG       = 9
	codeArg      = 10
	codeOverflow = 11
	codeOOM      = 12
	codeAuth     = 13
	codeState    = 14
	codeReplicas = 15
	codeTLS      = 16
)

// StaleSQLState is the SQLSTATE with which PostgreSQL refuses a stale
// fencing token.
const StaleSQLState = "LF001"

// The kinds of failure, for errors.Is.
var (
	// ErrNotAcquired: another owner holds the lease (no wait, or the wait
	// or the context's deadline ran out), or too few replicas
	// acknowledged it.
	ErrNotAcquired = errors.New("pgfence: lease not acquired")
	// ErrLost: the lease is not (or no longer) ours.
	ErrLost = errors.New("pgfence: lease lost")
	// ErrUnreachable: Redis or PostgreSQL could not be reached, or stopped
	// answering.
	ErrUnreachable = errors.New("pgfence: unreachable")
	// ErrConfig: refused by configuration: a bad URL, duration or resource
	// name, a login or ACL refusal, TLS refused, a database without the
	// extension or the grant.
	ErrConfig = errors.New("pgfence: configuration refused")
	// ErrStale: PostgreSQL refused the token (SQLSTATE LF001) because a
	// newer holder has announced.  Never retry with the same token.
	ErrStale = errors.New("pgfence: stale fencing token (LF001)")
)

// Error is a failure of a libfence call, or a driver's error that this
// package recognised (Classify).
type Error struct {
	Code    int    // fence.h's FENCE_ERR_* kind, 0 when found in Go
	Message string // libfence's message
	Hint    string // what to run when PostgreSQL is not set up for fence
	kind    error  // one of the Err* sentinels, or nil
	cause   error  // the driver's error or the context's, or nil
}

func (e *Error) Error() string {
	msg := "pgfence: " + e.Message
	if e.Hint != "" {
		msg += "\n" + e.Hint
	}
	return msg
}

// Is reports whether the error is of the kind "target" names.
func (e *Error) Is(target error) bool { return target != nil && target == e.kind }

// Unwrap gives the driver's error (errors.As to *pgconn.PgError works
// through it), or the context's error when a deadline or a cancellation
// ended the call.
func (e *Error) Unwrap() error { return e.cause }

func kindOf(code int) error {
	switch code {
	case codeBusy, codeTimeout, codeReplicas:
		return ErrNotAcquired
	case codeLost:
		return ErrLost
	case codeIO, codeProtocol, codeSuspect:
		return ErrUnreachable
	case codeArg, codeAuth, codeTLS, codeState:
		return ErrConfig
	case codeStale:
		return ErrStale
	}
	return nil
}

func newError(code int, message, hint string) *Error {
	e := &Error{Code: code, Message: message, Hint: hint, kind: kindOf(code)}
	if hint != "" {
		// PostgreSQL refused fence's own SQL: not set up (fence_pg_hint)
		e.kind = ErrConfig
	}
	return e
}

func configError(message string) *Error { return newError(codeArg, message, "") }

// SQLState is the SQLSTATE of a driver's error, or "": what a SQLState
// method says (pgx's *pgconn.PgError has one), else a five-character
// string field Code (lib/pq's *pq.Error; not tested here); wrapped errors
// are unwrapped.
func SQLState(err error) string {
	var s interface{ SQLState() string }
	if errors.As(err, &s) {
		return s.SQLState()
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		v := reflect.ValueOf(e)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() == reflect.Struct {
			if f := v.FieldByName("Code"); f.IsValid() && f.Kind() == reflect.String && len(f.String()) == 5 {
				return f.String()
			}
		}
	}
	return ""
}

// IsStale reports whether "err" is PostgreSQL refusing a stale fencing
// token: SQLSTATE LF001 from pgx, database/sql over pgx's stdlib or
// lib/pq, or libfence's own refusal of an announce.  Such a write must not
// be retried with the same token: take a new lease, read again, decide
// again.
func IsStale(err error) bool {
	return errors.Is(err, ErrStale) || SQLState(err) == StaleSQLState
}

// Classify returns "err" as an *Error that errors.Is(err, ErrStale)
// matches when it is a stale-token refusal from a driver, and "err"
// itself otherwise (nil stays nil).  errors.As still finds the driver's
// error inside.
func Classify(err error) error {
	if err == nil || errors.Is(err, ErrStale) || SQLState(err) != StaleSQLState {
		return err
	}
	return &Error{Code: codeStale, Message: err.Error(), kind: ErrStale, cause: err}
}
