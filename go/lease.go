// go/lease.go: a lease on one or several resources.
//
// Acquire takes it (queueing in Redis while another owner holds it, for at
// most Options.Wait and never past the context's deadline), announces its
// tokens to PostgreSQL, and starts libfence's heartbeat thread, which
// renews it every TTL/3 and closes Lost() when it cannot.  Release gives
// it back.  Several resources are held together, all or none, taken in
// the bytewise order of their names whatever order the caller gives, so
// that two callers asking for {a, b} and {b, a} cannot deadlock.

package pgfence

/*
#include <stdint.h>
#include <stdlib.h>
#include "pgfence.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// DefaultTTL is the TTL of a lease whose Options give none.
const DefaultTTL = 10 * time.Second

// WaitForever as Options.Wait queues without a limit of its own (the
// context's deadline and cancellation still end the wait).
const WaitForever time.Duration = -1

// maxMS is fence.h's FENCE_MAX_TTL_MS: the longest TTL, and wait.
const maxMS = int64(C.FENCE_MAX_TTL_MS)

// Options of Acquire; the zero value is a 10 s lease, no waiting,
// announced (when the client has WithPG), with a heartbeat.
type Options struct {
	// TTL: how long Redis keeps the lease without renewal (the heartbeat
	// renews it every TTL/3).  0: DefaultTTL.
	TTL time.Duration
	// Wait: how long to queue for a lease another owner holds (0: not at
	// all, ErrNotAcquired at once; WaitForever: until the context ends).
	// The context's deadline shortens it.
	Wait time.Duration
	// NoAnnounce: do not announce to the client's PostgreSQL.
	NoAnnounce bool
	// NoHeartbeat: no renewal thread, for work that surely ends well
	// within the TTL; Lost() then closes only when State finds the lease
	// past its TTL by the local clock, or Release finds it gone.
	NoHeartbeat bool
}

// Token is one member of a lease: its resource, fencing token and owner.
type Token struct {
	Resource string
	Token    int64
	Owner    string
}

// lostSignal is what the heartbeat's callback reaches through a
// cgo.Handle: not the Lease itself, so that an abandoned Lease can still
// be collected (its finalizer stops the heartbeat).  Its channel is made
// when Lost() first asks for it: most leases end without anyone asking,
// and making a channel is the dearest allocation of a cycle.
type lostSignal struct {
	mu    sync.Mutex
	fired bool
	ch    chan struct{}
}

func (s *lostSignal) fire() {
	s.mu.Lock()
	if !s.fired {
		s.fired = true
		if s.ch != nil {
			close(s.ch)
		}
	}
	s.mu.Unlock()
}

func (s *lostSignal) channel() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
		if s.fired {
			close(s.ch)
		}
	}
	return s.ch
}

func (s *lostSignal) isFired() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired
}

// Lease is a lease on one resource, or on several held together.
type Lease struct {
	client *Client
	one    *C.fence_lease  // a lease on one resource, or
	set    *C.fence_leases // several
	tokens []Token         // canonical order
	value  string          // fence.tokens, made when first asked for
	once   sync.Once
	ttl    int64
	lost   *lostSignal
	handle cgo.Handle // 0 without a heartbeat

	mu       sync.Mutex // Release, Extend and the finalizer
	released bool
}

// Acquire takes a lease on "resources" (one or more; the same name twice
// is ErrConfig): waits for it as opts.Wait says, bounded by ctx's
// deadline; cancelling ctx ends the wait within about half a second (a
// lease taken meanwhile is given back) and returns an error that matches
// both ErrNotAcquired and ctx.Err().  Then announces its tokens (WithPG)
// and starts its heartbeat.
func (c *Client) Acquire(ctx context.Context, resources []string, opts Options) (*Lease, error) {
	l, _, err := c.acquire(ctx, resources, opts, nil)
	return l, err
}

// acquire is Acquire, whose first attempt also gives "old" back when it
// is not nil (fence_release_acquire: one round trip where one Redis
// master holds both); the release's outcome is the second result (nil
// when there was nothing to give back).
func (c *Client) acquire(ctx context.Context, resources []string, opts Options, old *Lease) (*Lease, error, error) {
	if len(resources) == 0 {
		return nil, nil, configError("no resource to acquire")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, &Error{Message: "not acquired: " + err.Error(), kind: ErrNotAcquired, cause: err}
	}
	// a context whose deadline has passed is over, whether or not its
	// timer has fired yet (on a loaded machine it fires late)
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		err := context.DeadlineExceeded
		return nil, nil, &Error{Message: "not acquired: " + err.Error(), kind: ErrNotAcquired, cause: err}
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	ttlMS := ttl.Milliseconds()
	waitMS := opts.Wait.Milliseconds()
	if opts.Wait < 0 {
		waitMS = maxMS
	}
	capped := false // the deadline, not opts.Wait, bounds the wait
	if d, ok := ctx.Deadline(); ok && waitMS > 0 {
		if left := time.Until(d).Milliseconds(); left < waitMS {
			waitMS, capped = left, true
			if waitMS < 1 {
				waitMS = 1
			}
		}
	}
	s, err := c.get(true)
	if err != nil {
		return nil, nil, err
	}
	l := &Lease{client: c, ttl: ttlMS, lost: &lostSignal{}}
	var released error
	cancelled := c.take(ctx, s, l, resources, ttlMS, waitMS, old, &released)
	if cancelled {
		// fence_cancel_wait also cancels the next wait on a context when
		// it comes too late for this one: this context is not reused
		defer s.close()
	} else {
		defer c.put(s)
	}
	if l.one == nil && l.set == nil {
		err := s.err()
		if cancelled || ctx.Err() != nil || (capped && err.Code == codeTimeout) {
			// the wait may end a moment before the deadline passes: it
			// has passed when this returns, so that the context is over
			// for the caller's next call too
			err.kind, err.cause = ErrNotAcquired, ctx.Err()
			if err.cause == nil {
				err.cause = context.DeadlineExceeded
				if d, ok := ctx.Deadline(); ok {
					time.Sleep(time.Until(d))
				}
			}
		}
		return nil, released, err
	}
	if cancelled {
		// the wait was cut short, and took the lease at its end
		err := ctx.Err()
		l.giveBack(s)
		return nil, released, &Error{Code: codeTimeout, Message: "not acquired: " + err.Error(), kind: ErrNotAcquired, cause: err}
	}
	if err := c.start(s, l, opts); err != nil {
		l.giveBack(s)
		return nil, released, err
	}
	l.record(resources)
	runtime.SetFinalizer(l, (*Lease).finalize)
	return l, released, nil
}

// ReleaseAcquire is a worker loop's step: it gives this lease back and
// takes one on "resource" (as Client.Acquire with "opts" and ctx).  On a
// single Redis node, Sentinel, or a Cluster master that serves both, the
// release and the first attempt go out in one write: one round trip where
// Release and then Acquire make two; elsewhere (a quorum, a set of
// leases) it is those two calls.  The release always runs first.  It
// returns the new lease and the acquire's error as Acquire does, and the
// release's outcome apart, whatever the acquire's: nil, an ErrLost error
// when this lease had expired or passed to another owner (its Lost() is
// closed: what it guarded may have been written by someone else), or
// ErrUnreachable when the outcome is unknown.
func (l *Lease) ReleaseAcquire(ctx context.Context, resource string, opts Options) (next *Lease, released error, err error) {
	l.mu.Lock()
	if l.released || l.one == nil {
		l.mu.Unlock()
		released = l.Release()
		next, err = l.client.Acquire(ctx, []string{resource}, opts)
		return next, released, err
	}
	defer l.mu.Unlock()
	l.released = true
	runtime.SetFinalizer(l, nil)
	next, released, err = l.client.acquire(ctx, []string{resource}, opts, l)
	if l.one != nil {
		// the release never went out (no connection): give it back alone
		released = nil
		if s, gerr := l.client.get(false); gerr != nil {
			released = gerr
		} else {
			if C.fence_release(s.ctx, l.one) != C.FENCE_OK {
				released = s.err()
			}
			l.client.put(s)
		}
		l.free()
	}
	if errors.Is(released, ErrLost) {
		l.lost.fire()
	}
	return next, released, err
}

// watchAfter: how long an acquire that may wait runs before a goroutine
// starts watching its context for cancellation.
const watchAfter = 10 * time.Millisecond

// take runs the acquire on "s", watching ctx meanwhile when it can end
// (fence_cancel_wait on its cancellation).  Returns whether ctx ended the
// wait.
//
// The watcher starts from a timer, only once the call has run watchAfter:
// most acquires find the lease free and return in a round trip, and a
// goroutine started for each would cost more than the round trip (the
// scheduler wakes another thread to run it, and again to end it: three
// more context switches per cycle, twice the CPU, measured).  A timer
// stopped before it fires wakes nobody.  A cancellation then ends the wait
// watchAfter later at most, beside libfence's half a second.
func (c *Client) take(ctx context.Context, s *slot, l *Lease, resources []string, ttlMS, waitMS int64,
	old *Lease, released *error) bool {
	var watch *time.Timer
	var done chan struct{}
	var watched chan bool
	if ctx.Done() != nil && waitMS > 0 {
		done, watched = make(chan struct{}), make(chan bool, 1)
		cctx := s.ctx
		watch = time.AfterFunc(watchAfter, func() {
			select {
			case <-ctx.Done():
				C.fence_cancel_wait(cctx)
				watched <- true
			case <-done:
				watched <- false
			}
		})
	}
	if old != nil {
		// old.one is given back by libfence, then freed here
		var rc C.int
		r := C.CString(resources[0])
		l.one = C.fence_release_acquire(s.ctx, old.one, r, C.longlong(ttlMS), C.longlong(waitMS), &rc)
		C.free(unsafe.Pointer(r))
		switch rc {
		case C.FENCE_OK:
			old.free()
		case C.FENCE_ERR_ARG:
			// nothing was sent: the caller gives it back alone
		default:
			*released = newError(int(rc), "release of the lease on "+old.names()+": "+
				C.GoString(C.fence_strerror(rc)), "")
			old.free()
		}
	} else if len(resources) == 1 {
		// one call into C, on Go memory (libfence copies the name): each
		// cgo call is a pass through the Go scheduler, and a lease on one
		// resource is what a worker loop takes thousands of a second
		r := make([]byte, len(resources[0])+1)
		copy(r, resources[0])
		a := C.pgfence_acquire(s.ctx, (*C.char)(unsafe.Pointer(&r[0])), C.longlong(ttlMS),
			C.longlong(waitMS))
		if l.one = a.lease; l.one != nil {
			l.tokens = []Token{{Resource: resources[0], Token: int64(a.token), Owner: C.GoString(a.owner)}}
		}
	} else {
		n := C.size_t(len(resources))
		names := C.pgfence_strings(n)
		for i, r := range resources {
			C.pgfence_string_set(names, C.size_t(i), C.CString(r))
		}
		l.set = C.fence_acquire_many_wait(s.ctx, names, n, C.longlong(ttlMS), C.longlong(waitMS))
		C.pgfence_strings_free(names, n)
	}
	if watch == nil || watch.Stop() {
		// no watcher ran, nor will: nothing cancelled the wait
		return false
	}
	close(done)
	return <-watched
}

// start announces (WithPG) and starts the heartbeat.
func (c *Client) start(s *slot, l *Lease, opts Options) error {
	if c.announce && !opts.NoAnnounce {
		pg, err := c.pgconn(s)
		if err != nil {
			return err
		}
		var rc C.int
		if l.one != nil {
			rc = C.fence_announce(s.ctx, l.one, pg)
		} else {
			rc = C.fence_leases_announce(s.ctx, l.set, pg)
		}
		if rc != C.FENCE_OK {
			return s.err()
		}
		if l.one != nil && l.tokens != nil {
			// the announce may have healed the token
			l.tokens[0].Token = int64(C.fence_lease_token(l.one))
		}
	}
	if !opts.NoHeartbeat {
		l.handle = cgo.NewHandle(l.lost)
		var rc C.int
		if l.one != nil {
			rc = C.pgfence_heartbeat_start(s.ctx, l.one, C.uintptr_t(l.handle))
		} else {
			rc = C.pgfence_leases_heartbeat_start(s.ctx, l.set, C.uintptr_t(l.handle))
		}
		if rc != C.FENCE_OK {
			return s.err()
		}
	}
	return nil
}

// record keeps the members' names, tokens and owner: they change only
// when an announce heals a token, which ran before this.  A lease on one
// resource that take acquired has them already (start refreshed the
// token); one from fence_release_acquire costs two calls into C here: its
// name is the one asked for.
func (l *Lease) record(resources []string) {
	if l.tokens != nil {
		return
	}
	if l.one != nil {
		l.tokens = []Token{{Resource: resources[0], Token: int64(C.fence_lease_token(l.one)),
			Owner: C.GoString(C.fence_lease_owner(l.one))}}
		return
	}
	n := int(C.fence_leases_count(l.set))
	l.tokens = make([]Token, n)
	for i := 0; i < n; i++ {
		l.tokens[i] = member(C.fence_leases_member(l.set, C.size_t(i)))
	}
}

func member(m *C.fence_lease) Token {
	return Token{
		Resource: C.GoString(C.fence_lease_resource(m)),
		Token:    int64(C.fence_lease_token(m)),
		Owner:    C.GoString(C.fence_lease_owner(m)),
	}
}

// formatTokens is fence_format_tokens: the one writer of the format.
func formatTokens(tokens []Token) string {
	n := C.size_t(len(tokens))
	res, own := C.pgfence_strings(n), C.pgfence_strings(n)
	defer C.pgfence_strings_free(res, n)
	defer C.pgfence_strings_free(own, n)
	toks := (*C.longlong)(C.malloc(C.size_t(C.sizeof_longlong) * (n + 1)))
	defer C.free(unsafe.Pointer(toks))
	arr := unsafe.Slice(toks, len(tokens))
	for i, t := range tokens {
		C.pgfence_string_set(res, C.size_t(i), C.CString(t.Resource))
		C.pgfence_string_set(own, C.size_t(i), C.CString(t.Owner))
		arr[i] = C.longlong(t.Token)
	}
	v := C.fence_format_tokens(n, res, toks, own)
	defer C.free(unsafe.Pointer(v))
	return C.GoString(v)
}

// giveBack releases what a failed Acquire took, whatever else fails.
func (l *Lease) giveBack(s *slot) {
	if l.one != nil {
		C.fence_release(s.ctx, l.one)
	} else {
		C.fence_leases_release(s.ctx, l.set)
	}
	l.free()
}

// free stops the heartbeat (joining its thread) and frees the C lease.
func (l *Lease) free() {
	if l.one != nil {
		C.fence_lease_free(l.one)
		l.one = nil
	}
	if l.set != nil {
		C.fence_leases_free(l.set)
		l.set = nil
	}
	if l.handle != 0 {
		l.handle.Delete()
		l.handle = 0
	}
}

// finalize: an abandoned lease stops its heartbeat and lets its TTL run
// out.
func (l *Lease) finalize() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.released {
		l.released = true
		l.free()
	}
}

// Lost is closed when the lease is lost: by the heartbeat thread when a
// renewal finds it gone (or Redis unreachable past the lease's deadline),
// or when Release, Extend, State or Check find it so.  Stop writing under
// it then; PostgreSQL refuses its writes anyway once a newer holder has
// announced.
func (l *Lease) Lost() <-chan struct{} { return l.lost.channel() }

// Tokens lists the members, in canonical (bytewise) order of their names.
func (l *Lease) Tokens() []Token { return append([]Token(nil), l.tokens...) }

// Token is the fencing token of the first member (the only one of a lease
// on one resource).
func (l *Lease) Token() int64 { return l.tokens[0].Token }

// TokenOf is the token of member "resource", and whether it is one.
func (l *Lease) TokenOf(resource string) (int64, bool) {
	for _, t := range l.tokens {
		if t.Resource == resource {
			return t.Token, true
		}
	}
	return 0, false
}

// Owner is the owner id the members share ("NAME/HEX" WithOwnerName).
func (l *Lease) Owner() string { return l.tokens[0].Owner }

// Resources are the members' names, in canonical order.
func (l *Lease) Resources() []string {
	r := make([]string, len(l.tokens))
	for i, t := range l.tokens {
		r[i] = t.Resource
	}
	return r
}

// FenceTokens is the value for the fence.tokens setting naming every
// member, RESOURCE=TOKEN/OWNER joined by commas (SetTokens puts it into a
// transaction).
func (l *Lease) FenceTokens() string {
	l.once.Do(func() { l.value = formatTokens(l.tokens) })
	return l.value
}

// Lease states (State).
const (
	StateHeld    = "held"    // the last renewal (or the acquire) worked
	StateSuspect = "suspect" // Redis unreachable since, deadline not passed yet
	StateLost    = "lost"    // gone for good, or released
)

// State is StateHeld, StateSuspect or StateLost, which closes Lost().
func (l *Lease) State() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return StateLost
	}
	var st C.int
	if l.one != nil {
		st = C.fence_lease_state(l.one)
	} else {
		st = C.fence_leases_state(l.set)
	}
	switch st {
	case C.FENCE_LEASE_HELD:
		return StateHeld
	case C.FENCE_LEASE_SUSPECT:
		return StateSuspect
	}
	l.lost.fire()
	return StateLost
}

// Check returns an ErrLost error when the lease is lost (or released):
// call it between units of work, before starting the next one.
func (l *Lease) Check() error {
	if !l.lost.isFired() && l.State() != StateLost {
		return nil
	}
	return &Error{Code: codeLost, Message: "lease on " + l.names() + " is lost", kind: ErrLost}
}

func (l *Lease) names() string {
	s := ""
	for i, t := range l.tokens {
		if i > 0 {
			s += ", "
		}
		s += `"` + t.Resource + `"`
	}
	return s
}

// Extend renews the lease now for "ttl" (0: its TTL); the heartbeat does
// this by itself every TTL/3.
func (l *Lease) Extend(ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return &Error{Code: codeLost, Message: "lease on " + l.names() + " is not held", kind: ErrLost}
	}
	ms := l.ttl
	if ttl > 0 {
		ms = ttl.Milliseconds()
	}
	s, err := l.client.get(false)
	if err != nil {
		return err
	}
	defer l.client.put(s)
	var rc C.int
	if l.one != nil {
		rc = C.fence_extend(s.ctx, l.one, C.longlong(ms))
	} else {
		rc = C.fence_leases_extend(s.ctx, l.set, C.longlong(ms))
	}
	if rc != C.FENCE_OK {
		e := s.err()
		if errors.Is(e, ErrLost) {
			l.lost.fire()
		}
		return e
	}
	l.ttl = ms
	return nil
}

// Release stops the heartbeat and gives the lease back.  An ErrLost error
// when it was no longer ours (someone else may have written since; Lost()
// is closed); ErrUnreachable when Redis did not answer (the lease then
// ends with its TTL).  Releasing twice does nothing.
func (l *Lease) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	runtime.SetFinalizer(l, nil)
	s, err := l.client.get(false)
	if err != nil {
		l.free()
		return err
	}
	defer l.client.put(s)
	var rc C.int
	if l.one != nil {
		rc = C.pgfence_release_free(s.ctx, l.one) // one call into C, not two
		l.one = nil
	} else {
		rc = C.fence_leases_release(s.ctx, l.set)
	}
	l.free()
	if rc != C.FENCE_OK {
		e := s.err()
		if errors.Is(e, ErrLost) {
			l.lost.fire()
		}
		return e
	}
	return nil
}
