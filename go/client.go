// go/client.go: a client, and its pool of libfence contexts.
//
// A fence_ctx is not thread-safe, and a goroutine may move between
// threads, so a Client keeps a small pool: every call takes a context for
// its duration and gives it back.  Each context may also hold a libpq
// connection to the PostgreSQL that announces go to.  A call that blocks
// in libfence (a wait for a busy lease) blocks only the thread it runs on:
// the Go runtime runs other goroutines on other threads meanwhile.

package pgfence

/*
#include <stdlib.h>
#include <fence.h>
*/
import "C"

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// DefaultURL is the Redis a client speaks to when neither its URL nor
// $FENCE_REDIS_URL names one.
const DefaultURL = "redis://127.0.0.1:6379"

const poolSize = 8

// A ClientOption sets up a Client (NewClient).
type ClientOption func(*Client)

// WithPG makes the client announce every lease's tokens to the PostgreSQL
// at "conninfo" (a libpq conninfo, "dbname=app" or a postgresql:// URI; ""
// for libpq's defaults, the PG* variables) before Acquire returns, so that
// every older token is refused from then on.  Without it nothing is
// announced, and the first fenced write moves the mark instead.
func WithPG(conninfo string) ClientOption {
	return func(c *Client) { c.pg, c.announce = conninfo, true }
}

// WithOwnerName puts "name" in front of the owner ids ("NAME/HEX"), so
// that who holds a lease shows in Redis, in fence.fences and in "fence
// list".
func WithOwnerName(name string) ClientOption {
	return func(c *Client) { c.ownerName = name }
}

// WithTimeouts sets how long connecting to Redis and each Redis command
// may take (default 5 s each).
func WithTimeouts(connect, command time.Duration) ClientOption {
	return func(c *Client) { c.connectMS, c.commandMS = connect.Milliseconds(), command.Milliseconds() }
}

// Client takes leases on one Redis topology.  Safe for concurrent use.
type Client struct {
	url       string
	pg        string
	announce  bool
	ownerName string
	connectMS int64
	commandMS int64

	mu     sync.Mutex
	free   []*slot
	closed bool
}

// slot is one libfence context and the PostgreSQL connection announces use
// on it; one goroutine at a time.
type slot struct {
	ctx *C.fence_ctx
	pg  *C.PGconn
}

// NewClient makes a client for the Redis at "redisURL": anything libfence
// takes, redis://, rediss:// (TLS), unix://, redis-sentinel://,
// redis-cluster://, or several URLs separated by whitespace for a quorum;
// "" means $FENCE_REDIS_URL, else DefaultURL.  It connects at once, so
// that a wrong URL (ErrConfig) or a Redis that is down (ErrUnreachable)
// shows here.
func NewClient(redisURL string, opts ...ClientOption) (*Client, error) {
	if redisURL == "" {
		redisURL = os.Getenv("FENCE_REDIS_URL")
	}
	if redisURL == "" {
		redisURL = DefaultURL
	}
	c := &Client{url: redisURL, connectMS: C.FENCE_DEFAULT_CONNECT_TIMEOUT_MS,
		commandMS: C.FENCE_DEFAULT_COMMAND_TIMEOUT_MS}
	for _, o := range opts {
		o(c)
	}
	s, err := c.newSlot()
	if err != nil {
		return nil, err
	}
	c.put(s)
	return c, nil
}

// URL is the client's Redis URL with its passwords masked.
func (c *Client) URL() string {
	in := C.CString(c.url)
	defer C.free(unsafe.Pointer(in))
	n := 2*len(c.url) + 4
	out := (*C.char)(C.malloc(C.size_t(n)))
	defer C.free(unsafe.Pointer(out))
	C.fence_mask_url(in, out, C.size_t(n))
	return C.GoString(out)
}

func (c *Client) newSlot() (*slot, error) {
	u := C.CString(c.url)
	defer C.free(unsafe.Pointer(u))
	ctx := C.fence_connect_timeout(u, C.long(c.connectMS), C.long(c.commandMS))
	if ctx == nil {
		return nil, newError(codeOOM, "out of memory", "")
	}
	s := &slot{ctx: ctx}
	if ctx.err == 0 && c.ownerName != "" {
		n := C.CString(c.ownerName)
		C.fence_set_owner_name(ctx, n)
		C.free(unsafe.Pointer(n))
	}
	if ctx.err != 0 {
		err := s.err()
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *slot) err() *Error {
	code := int(s.ctx.err)
	msg := C.GoString(&s.ctx.errstr[0])
	hint := ""
	if code == codePG {
		if h := C.fence_pg_hint(s.ctx); h != nil {
			hint = C.GoString(h)
		}
	}
	return newError(code, msg, hint)
}

func (s *slot) close() {
	if s.pg != nil {
		C.PQfinish(s.pg)
		s.pg = nil
	}
	if s.ctx != nil {
		C.fence_free(s.ctx)
		s.ctx = nil
	}
}

// get takes a context from the pool, or makes one.  A closed client
// takes no new leases ("taking"), but still gives back those it holds.
func (c *Client) get(taking bool) (*slot, error) {
	// Every call that takes a slot goes on to block in C, on Redis.  A
	// goroutine that does little else (a worker loop) is never descheduled
	// otherwise, and the Go scheduler's monitor takes one that has run
	// 10 ms without a reschedule for a goroutine that hogs its P: it then
	// takes the P away from each blocking cgo call after 20 us, hands it
	// to another thread and wakes that thread, every time (measured:
	// 1.3-1.7 more context switches per acquire + release cycle than
	// libfence in C makes, and a third more CPU).  A yield here, well
	// under a microsecond, counts as the reschedule.
	runtime.Gosched()
	c.mu.Lock()
	if c.closed && taking {
		c.mu.Unlock()
		return nil, &Error{Message: "client is closed"}
	}
	if n := len(c.free); n > 0 {
		s := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	return c.newSlot()
}

// put gives a context back; one whose Redis connection broke is not kept
// (the next call gets a new one).
func (c *Client) put(s *slot) {
	if s.ctx != nil {
		switch s.ctx.err {
		case codeIO, codeProtocol:
			s.close()
			return
		}
	}
	c.mu.Lock()
	if !c.closed && len(c.free) < poolSize && s.ctx != nil {
		c.free = append(c.free, s)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	s.close()
}

// pgconn is the slot's PostgreSQL connection, made or mended.
func (c *Client) pgconn(s *slot) (*C.PGconn, error) {
	if s.pg != nil && C.PQstatus(s.pg) != C.CONNECTION_OK {
		C.PQreset(s.pg)
	}
	if s.pg == nil {
		ci := C.CString(c.pg)
		s.pg = C.PQconnectdb(ci)
		C.free(unsafe.Pointer(ci))
		if s.pg == nil {
			return nil, newError(codeOOM, "PQconnectdb: out of memory", "")
		}
	}
	if C.PQstatus(s.pg) != C.CONNECTION_OK {
		msg := strings.TrimSpace(C.GoString(C.PQerrorMessage(s.pg)))
		C.PQfinish(s.pg)
		s.pg = nil
		return nil, &Error{Code: codePG, Message: "PostgreSQL: " + msg, kind: ErrUnreachable}
	}
	return s.pg, nil
}

// Close frees the client's idle connections; leases still held keep
// theirs and may still be released.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	free := c.free
	c.free = nil
	c.mu.Unlock()
	for _, s := range free {
		s.close()
	}
	return nil
}
