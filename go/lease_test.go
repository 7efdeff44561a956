// go/lease_test.go: leases and sets of leases against the real Redis and
// PostgreSQL, the context's deadline and cancellation, other goroutines
// while one waits, and each error for its cause.

package pgfence

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func mark(t *testing.T, resource string) string {
	return psqlT(t, fmt.Sprintf("SELECT token || ' ' || owner FROM fence.fences WHERE resource = '%s'", resource))
}

func TestLeaseGivesTokenOwnerAndAnnounces(t *testing.T) {
	c := newClient(t, "", WithPG(""))
	r := resource(t)
	l := acquire(t, c, Options{TTL: 5 * time.Second}, r)
	if l.Token() < 1 || len(l.Owner()) != 32 || l.Resources()[0] != r {
		t.Fatalf("token %d owner %q resources %q", l.Token(), l.Owner(), l.Resources())
	}
	if want := fmt.Sprintf("%s=%d/%s", r, l.Token(), l.Owner()); l.FenceTokens() != want {
		t.Fatalf("FenceTokens %q, want %q", l.FenceTokens(), want)
	}
	// announced before Acquire returned: PostgreSQL's mark is this token
	if got, want := mark(t, r), fmt.Sprintf("%d %s", l.Token(), l.Owner()); got != want {
		t.Fatalf("mark %q, want %q", got, want)
	}
	if l.State() != StateHeld {
		t.Fatalf("state %s", l.State())
	}
	first := l.Token()
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	select {
	case <-l.Lost():
		t.Fatal("a released lease reports lost")
	default:
	}
	again := acquire(t, c, Options{TTL: 5 * time.Second}, r)
	defer again.Release()
	if again.Token() <= first {
		t.Fatalf("token %d after %d", again.Token(), first)
	}
}

func TestReleaseLetsAWaiterInAndTokensGrow(t *testing.T) {
	c := newClient(t, "")
	r := resource(t)
	l := acquire(t, c, Options{}, r)
	got := make(chan int64, 1)
	go func() {
		l2, err := c.Acquire(context.Background(), []string{r}, Options{Wait: 10 * time.Second})
		if err != nil {
			t.Error(err)
			got <- 0
			return
		}
		got <- l2.Token()
		l2.Release()
	}()
	select {
	case <-got:
		t.Fatal("the waiter did not queue behind the holder")
	case <-time.After(300 * time.Millisecond):
	}
	l.Release()
	select {
	case tok := <-got:
		if tok <= l.Token() {
			t.Fatalf("waiter's token %d, holder's %d", tok, l.Token())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not woken by the release")
	}
}

func TestOwnerNameGoesInFrontOfTheOwnerID(t *testing.T) {
	c := newClient(t, "", WithOwnerName("billing-7"))
	l := acquire(t, c, Options{}, resource(t))
	defer l.Release()
	if !strings.HasPrefix(l.Owner(), "billing-7/") {
		t.Fatalf("owner %q", l.Owner())
	}
}

func TestHeartbeatRenewsPastTheTTL(t *testing.T) {
	c := newClient(t, "")
	l := acquire(t, c, Options{TTL: 300 * time.Millisecond}, resource(t))
	defer l.Release()
	time.Sleep(time.Second)
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if l.State() != StateHeld {
		t.Fatalf("state %s", l.State())
	}
}

func TestSetOfLeasesInCanonicalOrderOneOwner(t *testing.T) {
	c := newClient(t, "", WithPG(""))
	r := resource(t)
	a, b := r+":b", r+":a"
	l := acquire(t, c, Options{}, a, b)
	defer l.Release()
	toks := l.Tokens()
	if len(toks) != 2 || toks[0].Resource != b || toks[1].Resource != a || toks[0].Owner != toks[1].Owner {
		t.Fatalf("members %+v", toks)
	}
	want := fmt.Sprintf("%s=%d/%s,%s=%d/%s", b, toks[0].Token, l.Owner(), a, toks[1].Token, l.Owner())
	if l.FenceTokens() != want {
		t.Fatalf("FenceTokens %q, want %q", l.FenceTokens(), want)
	}
	for _, m := range toks {
		if got := mark(t, m.Resource); got != fmt.Sprintf("%d %s", m.Token, m.Owner) {
			t.Fatalf("mark of %s: %q", m.Resource, got)
		}
	}
	if tok, ok := l.TokenOf(a); !ok || tok != toks[1].Token {
		t.Fatalf("TokenOf(%s) = %d, %v", a, tok, ok)
	}
}

func TestBusyAndWaitRanOutAreNotAcquired(t *testing.T) {
	c := newClient(t, "")
	r := resource(t)
	l := acquire(t, c, Options{}, r)
	defer l.Release()
	var fe *Error
	_, err := c.Acquire(context.Background(), []string{r}, Options{})
	if !errors.Is(err, ErrNotAcquired) || !errors.As(err, &fe) || fe.Code != codeBusy {
		t.Fatalf("busy: %v", err)
	}
	t0 := time.Now()
	_, err = c.Acquire(context.Background(), []string{r}, Options{Wait: 400 * time.Millisecond})
	if el := time.Since(t0); !errors.Is(err, ErrNotAcquired) || !errors.As(err, &fe) || fe.Code != codeTimeout ||
		el < 300*time.Millisecond || el > 3*time.Second {
		t.Fatalf("wait ran out: %v after %v", err, el)
	}
	// a set gives back what it took
	_, err = c.Acquire(context.Background(), []string{r + ":0", r}, Options{Wait: 200 * time.Millisecond})
	if !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("set: %v", err)
	}
	acquire(t, c, Options{}, r+":0").Release()
}

func TestContextDeadlineBoundsTheWait(t *testing.T) {
	c := newClient(t, "")
	r := resource(t)
	l := acquire(t, c, Options{}, r)
	defer l.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := c.Acquire(ctx, []string{r}, Options{Wait: 30 * time.Second})
	if el := time.Since(t0); !errors.Is(err, ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) ||
		el > 3*time.Second {
		t.Fatalf("%v after %v", err, el)
	}
	// an ended context takes nothing
	_, err = c.Acquire(ctx, []string{r + ":free"}, Options{})
	if !errors.Is(err, ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ended context: %v", err)
	}
	// nor one whose deadline has passed and whose timer has not fired yet
	// (late on a loaded machine: the wait above once ended a moment before
	// its deadline, and this took the lease)
	late := lateTimer{context.Background(), time.Now().Add(-time.Millisecond)}
	if l2, err := c.Acquire(late, []string{r + ":free"}, Options{}); !errors.Is(err, ErrNotAcquired) ||
		!errors.Is(err, context.DeadlineExceeded) {
		if l2 != nil {
			l2.Release()
		}
		t.Fatalf("a deadline passed, its timer not fired: %v", err)
	}
}

// lateTimer: a context whose deadline has passed but whose timer has not
// fired (Err is still nil), as on a machine too loaded to run it yet.
type lateTimer struct {
	context.Context
	d time.Time
}

func (c lateTimer) Deadline() (time.Time, bool) { return c.d, true }

func TestContextCancellationEndsTheWait(t *testing.T) {
	c := newClient(t, "")
	r := resource(t)
	l := acquire(t, c, Options{}, r)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	t0 := time.Now()
	_, err := c.Acquire(ctx, []string{r}, Options{Wait: 20 * time.Second})
	if el := time.Since(t0); !errors.Is(err, ErrNotAcquired) || !errors.Is(err, context.Canceled) ||
		el > 2*time.Second {
		t.Fatalf("%v after %v", err, el)
	}
	// the holder still holds it, and the client's next wait is not cut
	// short by the cancellation of the last one
	if l.State() != StateHeld {
		t.Fatalf("holder's state %s", l.State())
	}
	go func() { time.Sleep(300 * time.Millisecond); l.Release() }()
	l2, err := c.Acquire(context.Background(), []string{r}, Options{Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("the next wait: %v", err)
	}
	l2.Release()
}

// A goroutine ticking every 10 ms on one P (GOMAXPROCS 1) while another
// waits a second in libfence: the cgo call blocks its thread, not the
// scheduler.
func TestOtherGoroutinesRunWhileOneWaits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	c := newClient(t, "")
	r := resource(t)
	l := acquire(t, c, Options{}, r)
	defer l.Release()
	stop := make(chan struct{})
	var ticks []time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case now := <-tk.C:
				ticks = append(ticks, now)
			case <-stop:
				return
			}
		}
	}()
	t0 := time.Now()
	_, err := c.Acquire(context.Background(), []string{r}, Options{Wait: time.Second})
	waited := time.Since(t0)
	close(stop)
	wg.Wait()
	if !errors.Is(err, ErrNotAcquired) || waited < 900*time.Millisecond {
		t.Fatalf("the wait: %v after %v", err, waited)
	}
	var gap time.Duration
	for i := 1; i < len(ticks); i++ {
		if d := ticks[i].Sub(ticks[i-1]); d > gap {
			gap = d
		}
	}
	if len(ticks) < 40 || gap > 250*time.Millisecond {
		t.Fatalf("%d ticks in %v, longest gap %v", len(ticks), waited, gap)
	}
}

func TestRedisDownIsUnreachable(t *testing.T) {
	s := startRedis(t)
	c, err := NewClient(s.url(), WithTimeouts(time.Second, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acquire(t, c, Options{}, resource(t)).Release()
	s.stop()
	if _, err := c.Acquire(context.Background(), []string{resource(t)}, Options{}); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("acquire: %v", err)
	}
	if _, err := NewClient(s.url(), WithTimeouts(time.Second, time.Second)); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("NewClient: %v", err)
	}
}

func TestACLRefusalIsConfig(t *testing.T) {
	s := startRedis(t)
	// a user that may log in but not run scripts: the lease is refused
	s.cli("ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "+@all", "-@scripting")
	c, err := NewClient(fmt.Sprintf("redis://noscripts:pw@127.0.0.1:%d", s.port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var fe *Error
	if _, err := c.Acquire(context.Background(), []string{resource(t)}, Options{}); !errors.Is(err, ErrConfig) ||
		!errors.As(err, &fe) || fe.Code != codeAuth {
		t.Fatalf("acquire: %v", err)
	}
	// a wrong password is refused at login, and not shown
	_, err = NewClient(fmt.Sprintf("redis://noscripts:wrongpw@127.0.0.1:%d", s.port))
	if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "wrongpw") {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestBadArgumentsAreConfig(t *testing.T) {
	c := newClient(t, "")
	r := resource(t)
	for name, err := range map[string]error{
		"bad URL":        func() error { _, err := NewClient("http://nope"); return err }(),
		"owner name":     func() error { _, err := NewClient("", WithOwnerName("has/slash")); return err }(),
		"empty resource": func() error { _, err := c.Acquire(context.Background(), []string{""}, Options{}); return err }(),
		"no resource":    func() error { _, err := c.Acquire(context.Background(), nil, Options{}); return err }(),
		"twice":          func() error { _, err := c.Acquire(context.Background(), []string{r, r}, Options{}); return err }(),
		"TTL too short": func() error {
			_, err := c.Acquire(context.Background(), []string{r}, Options{TTL: time.Millisecond})
			return err
		}(),
	} {
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDatabaseWithoutTheExtensionIsConfigWithHint(t *testing.T) {
	psqlT(t, "DROP DATABASE IF EXISTS go_noext")
	psqlT(t, "CREATE DATABASE go_noext")
	defer psql("DROP DATABASE go_noext")
	c := newClient(t, "", WithPG("dbname=go_noext"))
	r := resource(t)
	_, err := c.Acquire(context.Background(), []string{r}, Options{})
	var fe *Error
	if !errors.Is(err, ErrConfig) || !errors.As(err, &fe) || !strings.Contains(fe.Hint, "CREATE EXTENSION") {
		t.Fatalf("%v", err)
	}
	c.Close()
	// given back: free at once
	acquire(t, newClient(t, ""), Options{}, r).Release()
}

func TestPostgresDownIsUnreachable(t *testing.T) {
	c := newClient(t, "", WithPG("host=127.0.0.1 port=1 connect_timeout=2"))
	if _, err := c.Acquire(context.Background(), []string{resource(t)}, Options{}); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("%v", err)
	}
}

func TestLostClosesTheChannelAndReleaseSaysLost(t *testing.T) {
	s := startRedis(t)
	c := newClient(t, s.url())
	r := resource(t)
	l := acquire(t, c, Options{TTL: 600 * time.Millisecond}, r)
	// another owner's doing, as Redis sees it: the lock is gone
	if got := s.cli("DEL", "fence:{"+r+"}:lock"); got != "1" {
		t.Fatalf("DEL: %q", got)
	}
	select {
	case <-l.Lost():
	case <-time.After(3 * time.Second):
		t.Fatal("the heartbeat did not report the loss")
	}
	if err := l.Check(); !errors.Is(err, ErrLost) {
		t.Fatalf("Check: %v", err)
	}
	if st := l.State(); st != StateLost {
		t.Fatalf("state %s", st)
	}
	if err := l.Release(); !errors.Is(err, ErrLost) {
		t.Fatalf("Release: %v", err)
	}
}

// A worker loop's step: ReleaseAcquire gives the lease back and takes
// the next (one round trip on a single node), and tells the release's
// outcome apart: a lease lost meanwhile is ErrLost (its Lost() closed)
// while the next one is still taken, or refused, as Acquire would.
func TestReleaseAcquireIsAWorkerLoopStep(t *testing.T) {
	s := startRedis(t)
	c := newClient(t, s.url())
	r1 := resource(t)
	r2 := r1 + ":next"
	l := acquire(t, c, Options{NoHeartbeat: true}, r1)
	next, released, err := l.ReleaseAcquire(context.Background(), r2, Options{NoHeartbeat: true})
	if err != nil || released != nil {
		t.Fatalf("step: %v, release: %v", err, released)
	}
	if got := s.cli("EXISTS", "fence:{"+r1+"}:lock"); got != "0" {
		t.Fatalf("r1's lock after the step: EXISTS %q", got)
	}
	if got := s.cli("GET", "fence:{"+r2+"}:lock"); got != next.Owner() {
		t.Fatalf("r2's lock %q, want %q", got, next.Owner())
	}
	if err := l.Release(); err != nil {
		t.Fatalf("Release after the step: %v", err)
	}

	// lost meanwhile: the release says so, touches nothing, the acquire holds
	s.cli("SET", "fence:{"+r2+"}:lock", "someone-else", "PX", "5000")
	third, released, err := next.ReleaseAcquire(context.Background(), r1, Options{})
	if err != nil {
		t.Fatalf("step after a loss: %v", err)
	}
	defer third.Release()
	if !errors.Is(released, ErrLost) {
		t.Fatalf("release of a lost lease: %v", released)
	}
	select {
	case <-next.Lost():
	default:
		t.Fatal("Lost() of the lease given back lost is open")
	}
	if got := s.cli("GET", "fence:{"+r2+"}:lock"); got != "someone-else" {
		t.Fatalf("the other owner's lock: %q", got)
	}
	if third.Token() < 2 {
		t.Fatalf("token %d", third.Token())
	}

	// the next lease busy (r2 is still someone else's): not acquired, and
	// the old one given back all the same
	none, released, err := third.ReleaseAcquire(context.Background(), r2, Options{})
	if none != nil || !errors.Is(err, ErrNotAcquired) || released != nil {
		t.Fatalf("busy next: %v %v %v", none, err, released)
	}
	if got := s.cli("EXISTS", "fence:{"+r1+"}:lock"); got != "0" {
		t.Fatalf("r1's lock after a busy step: EXISTS %q", got)
	}
}

func TestGoroutinesShareOneClientTokensUnique(t *testing.T) {
	c := newClient(t, "")
	r := resource(t)
	var mu sync.Mutex
	var tokens []int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				l, err := c.Acquire(context.Background(), []string{r}, Options{TTL: 5 * time.Second, Wait: 30 * time.Second})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				tokens = append(tokens, l.Token())
				mu.Unlock()
				l.Release()
			}
		}()
	}
	wg.Wait()
	if len(tokens) != 60 {
		t.Fatalf("%d tokens", len(tokens))
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("tokens not increasing in the order they were held: %v", tokens)
		}
	}
}

func TestQuorumOfThreeNodes(t *testing.T) {
	nodes := []*redisServer{startRedis(t), startRedis(t), startRedis(t)}
	c := newClient(t, nodes[0].url()+" "+nodes[1].url()+" "+nodes[2].url())
	r := resource(t)
	l := acquire(t, c, Options{}, r)
	held := 0
	for _, n := range nodes {
		if n.cli("EXISTS", "fence:{"+r+"}:lock") == "1" {
			held++
		}
	}
	if held < 2 {
		t.Fatalf("lock on %d of 3 nodes", held)
	}
	first := l.Token()
	l.Release()
	nodes[0].stop() // a majority is enough
	l = acquire(t, c, Options{}, r)
	defer l.Release()
	if l.Token() <= first {
		t.Fatalf("token %d after %d", l.Token(), first)
	}
}
