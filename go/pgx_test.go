//go:build pgx

// go/pgx_test.go: the package with pgx and database/sql (over pgx's
// stdlib), as Debian's golang-github-jackc-pgx-v4-dev provides them in
// GOPATH mode (the suite's "go test -tags pgx"): a worker under a lease
// writes, a stale writer is refused (LF001) from both, a transfer under
// two leases, a worker SIGSTOPped past its TTL, and a Go worker, "fence
// run" and a C worker taking turns on one resource.

package pgfence

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
	_ "github.com/jackc/pgx/v4/stdlib"
)

func pgxConnect(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// protected makes "table" (n int, who text) with one row, guarded by
// "resource".
func protected(t *testing.T, table, resource string) {
	psqlT(t, fmt.Sprintf("DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (n int NOT NULL, who text); "+
		"INSERT INTO %[1]s VALUES (0, NULL); SELECT fence.protect('%[1]s', '%[2]s')", table, resource))
}

func TestWorkerUnderALeaseWrites(t *testing.T) {
	ctx := context.Background()
	r := resource(t)
	protected(t, "go_worker", r)
	conn := pgxConnect(t)
	// without tokens, a write is refused (LF002)
	_, err := conn.Exec(ctx, "UPDATE go_worker SET n = n + 1")
	if SQLState(err) != "LF002" {
		t.Fatalf("unfenced write: %v", err)
	}
	c := newClient(t, "", WithPG(""))
	lease, err := c.Acquire(ctx, []string{r}, Options{TTL: 10 * time.Second, Wait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	for i := 0; i < 3; i++ {
		if err := lease.Check(); err != nil {
			t.Fatal(err)
		}
		err := conn.BeginFunc(ctx, func(tx pgx.Tx) error {
			if err := SetTokens(ctx, tx, lease); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT n FROM go_worker").Scan(&n); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE go_worker SET n = $1, who = 'go'", n+1)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := psqlT(t, "SELECT n FROM go_worker"); got != "3" {
		t.Fatalf("n = %s", got)
	}
}

func TestStaleWriterIsRefusedFromPgxAndDatabaseSQL(t *testing.T) {
	ctx := context.Background()
	r := resource(t)
	protected(t, "go_stale", r)
	c := newClient(t, "", WithPG(""))
	old, err := c.Acquire(ctx, []string{r}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	old.Release()
	lease, err := c.Acquire(ctx, []string{r}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if lease.Token() <= old.Token() {
		t.Fatalf("token %d after %d", lease.Token(), old.Token())
	}
	// pgx
	conn := pgxConnect(t)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetTokens(ctx, tx, old); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, "UPDATE go_stale SET n = n + 1")
	tx.Rollback(ctx)
	var pgErr *pgconn.PgError
	if !IsStale(err) || !errors.Is(Classify(err), ErrStale) || !errors.As(Classify(err), &pgErr) || pgErr.Code != "LF001" {
		t.Fatalf("pgx: %v", err)
	}
	// database/sql over pgx's stdlib, through InTx
	db, err := sql.Open("pgx", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = InTx(ctx, db, old, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE go_stale SET n = n + 1")
		return err
	})
	if !errors.Is(err, ErrStale) || !errors.As(err, &pgErr) {
		t.Fatalf("database/sql: %v", err)
	}
	// the live lease writes, from both
	err = InTx(ctx, db, lease, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE go_stale SET n = n + 1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.BeginFunc(ctx, func(tx pgx.Tx) error {
		if err := SetTokens(ctx, tx, lease); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE go_stale SET n = n + 1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := psqlT(t, "SELECT n FROM go_stale"); got != "2" {
		t.Fatalf("n = %s", got)
	}
	// other errors are not stale
	if IsStale(errors.New("x")) || IsStale(nil) || errors.Is(Classify(errors.New("x")), ErrStale) {
		t.Fatal("a plain error counts as stale")
	}
	if err := SetTokens(ctx, 42, lease); !errors.Is(err, ErrConfig) {
		t.Fatalf("SetTokens(int): %v", err)
	}
}

// Two goroutines move money both ways between two accounts, each under
// the leases of both (taken in one order whatever order they are asked
// in): no deadlock, and the sum stays.
func TestTransferUnderTwoLeases(t *testing.T) {
	ctx := context.Background()
	prefix := strings.ReplaceAll(resource(t), ":", "_") // key mode: no ":" in the prefix
	psqlT(t, fmt.Sprintf("DROP TABLE IF EXISTS go_accounts; CREATE TABLE go_accounts (id int PRIMARY KEY, balance numeric NOT NULL); "+
		"SELECT fence.protect('go_accounts', '%s', key_column => 'id')", prefix))
	c := newClient(t, "", WithPG(""))
	acct := func(id int) string { return fmt.Sprintf("%s:%d", prefix, id) }
	db, err := sql.Open("pgx", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	both, err := c.Acquire(ctx, []string{acct(1), acct(2)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := InTx(ctx, db, both, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO go_accounts VALUES (1, 100), (2, 100)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	both.Release()
	transfer := func(src, dst, amount int) error {
		l, err := c.Acquire(ctx, []string{acct(src), acct(dst)}, Options{TTL: 10 * time.Second, Wait: 10 * time.Second})
		if err != nil {
			return err
		}
		defer l.Release()
		return InTx(ctx, db, l, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, "UPDATE go_accounts SET balance = balance - $1 WHERE id = $2", amount, src); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "UPDATE go_accounts SET balance = balance + $1 WHERE id = $2", amount, dst)
			return err
		})
	}
	var wg sync.WaitGroup
	for _, d := range [][3]int{{1, 2, 7}, {2, 1, 3}} {
		wg.Add(1)
		go func(d [3]int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if err := transfer(d[0], d[1], d[2]); err != nil {
					t.Error(err)
					return
				}
			}
		}(d)
	}
	wg.Wait()
	if got := psqlT(t, "SELECT string_agg(balance::int::text, ' ' ORDER BY id) FROM go_accounts"); got != "60 140" {
		t.Fatalf("balances %s", got)
	}
}

func init() {
	// A worker: takes the lease (1 s TTL), says its token, waits for a
	// line on stdin, then writes under its token and reports what
	// PostgreSQL said, whether Lost() closed (within 3 s of the write) and
	// what its release said.
	helpers["paused"] = func(args []string) int {
		ctx := context.Background()
		resource, table := args[0], args[1]
		c, err := NewClient("", WithPG(""))
		if err != nil {
			fmt.Println("client", err)
			return 1
		}
		lease, err := c.Acquire(ctx, []string{resource}, Options{TTL: time.Second})
		if err != nil {
			fmt.Println("acquire", err)
			return 1
		}
		fmt.Println("token", lease.Token())
		bufio.NewReader(os.Stdin).ReadString('\n')
		conn, err := pgx.Connect(ctx, "")
		if err != nil {
			fmt.Println("connect", err)
			return 1
		}
		outcome := "written"
		err = conn.BeginFunc(ctx, func(tx pgx.Tx) error {
			if err := SetTokens(ctx, tx, lease); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "UPDATE "+table+" SET n = n + 1, who = 'paused'")
			return err
		})
		if err != nil {
			outcome = "refused " + SQLState(err)
			if errors.Is(Classify(err), ErrStale) {
				outcome += " stale"
			}
		}
		lost := "not-lost"
		select {
		case <-lease.Lost():
			lost = "lost"
		case <-time.After(3 * time.Second):
		}
		released := "released"
		if err := lease.Release(); errors.Is(err, ErrLost) {
			released = "not-ours"
		} else if err != nil {
			released = err.Error()
		}
		fmt.Println(outcome, lost, released)
		return 0
	}
}

func TestPausedWorkerIsRefusedLF001AndSeesLost(t *testing.T) {
	ctx := context.Background()
	r := resource(t)
	protected(t, "go_paused", r)
	w := helper("paused", r, "go_paused")
	stdin, _ := w.StdinPipe()
	stdout, _ := w.StdoutPipe()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		w.Process.Signal(syscall.SIGCONT)
		w.Process.Kill()
		w.Wait()
	}()
	out := bufio.NewReader(stdout)
	line, _ := out.ReadString('\n')
	var old int64
	if _, err := fmt.Sscanf(line, "token %d", &old); err != nil {
		t.Fatalf("worker said %q", line)
	}
	w.Process.Signal(syscall.SIGSTOP)
	time.Sleep(1500 * time.Millisecond) // past the TTL: the lease expires in Redis
	c := newClient(t, "", WithPG(""))
	lease, err := c.Acquire(ctx, []string{r}, Options{TTL: 10 * time.Second, Wait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if lease.Token() <= old {
		t.Fatalf("token %d after %d", lease.Token(), old)
	}
	conn := pgxConnect(t)
	if err := conn.BeginFunc(ctx, func(tx pgx.Tx) error {
		if err := SetTokens(ctx, tx, lease); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE go_paused SET n = n + 1, who = 'new'")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	w.Process.Signal(syscall.SIGCONT)
	fmt.Fprintln(stdin, "go")
	line, _ = out.ReadString('\n')
	if got := strings.Fields(line); strings.Join(got, " ") != "refused LF001 stale lost not-ours" {
		t.Fatalf("the paused worker said %q", line)
	}
	// the new holder's lease is untouched by the old one's release
	if lease.State() != StateHeld {
		t.Fatalf("new holder's state %s", lease.State())
	}
	if got := psqlT(t, "SELECT n || ' ' || who FROM go_paused"); got != "1 new" {
		t.Fatalf("row %q", got)
	}
}

// A Go worker, "fence run" (psql under the lease) and a C worker
// (python/tests/c_worker.c, libfence from C) take turns on one resource,
// 12 read-modify-writes each: tokens strictly increase in commit order,
// and the counter equals the writes (no lost update).
func TestGoFenceRunAndCWorkerTakeTurns(t *testing.T) {
	ctx := context.Background()
	r := resource(t)
	psqlT(t, "DROP TABLE IF EXISTS mix_counter, mix_log; CREATE TABLE mix_counter (n int NOT NULL); "+
		"INSERT INTO mix_counter VALUES (0); CREATE TABLE mix_log (seq bigserial PRIMARY KEY, who text, token bigint); "+
		"SELECT fence.protect('mix_counter', '"+r+"')")
	top, _ := filepath.Abs("..")
	clientDir := filepath.Join(top, "client")
	worker := filepath.Join(t.TempDir(), "c_worker")
	inc, err := exec.Command("pg_config", "--includedir").Output()
	if err != nil {
		t.Fatal(err)
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "-I", clientDir, "-I", strings.TrimSpace(string(inc)),
		"-o", worker, filepath.Join(top, "python/tests/c_worker.c"), filepath.Join(clientDir, "libfence.so.2"),
		"-lpq", "-Wl,-rpath,"+clientDir).CombinedOutput(); err != nil {
		t.Fatalf("c_worker: %v: %s", err, out)
	}
	fence := os.Getenv("FENCE_BIN")
	if fence == "" {
		fence = filepath.Join(clientDir, "fence")
	}
	const n = 12
	runSQL := "UPDATE mix_counter SET n = (SELECT n FROM mix_counter) + 1; " +
		"INSERT INTO mix_log (who, token) VALUES ('fence-run', current_setting('fence.token')::bigint)"
	errs := make(chan error, 3)
	go func() {
		for i := 0; i < n; i++ {
			if out, err := exec.Command(fence, "run", r, "--ttl", "5s", "--wait", "60s", "--pg", "", "--",
				"psql", "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-c", runSQL).CombinedOutput(); err != nil {
				errs <- fmt.Errorf("fence run: %v: %s", err, out)
				return
			}
		}
		errs <- nil
	}()
	go func() {
		out, err := exec.Command(worker, r, fmt.Sprint(n)).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("c_worker: %v: %s", err, out)
		}
		errs <- err
	}()
	go func() {
		errs <- func() error {
			c, err := NewClient("", WithPG(""))
			if err != nil {
				return err
			}
			defer c.Close()
			conn, err := pgx.Connect(ctx, "")
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			for i := 0; i < n; i++ {
				lease, err := c.Acquire(ctx, []string{r}, Options{TTL: 5 * time.Second, Wait: 60 * time.Second})
				if err != nil {
					return err
				}
				err = conn.BeginFunc(ctx, func(tx pgx.Tx) error {
					if err := SetTokens(ctx, tx, lease); err != nil {
						return err
					}
					var v int
					if err := tx.QueryRow(ctx, "SELECT n FROM mix_counter").Scan(&v); err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, "UPDATE mix_counter SET n = $1", v+1); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, "INSERT INTO mix_log (who, token) VALUES ('go', $1)", lease.Token())
					return err
				})
				lease.Release()
				if err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	who := psqlT(t, "SELECT string_agg(DISTINCT who, ' ' ORDER BY who) FROM mix_log")
	if who != "c fence-run go" {
		t.Fatalf("writers %q", who)
	}
	if got := psqlT(t, "SELECT count(*) || ' ' || (SELECT n FROM mix_counter) FROM mix_log"); got != fmt.Sprintf("%d %d", 3*n, 3*n) {
		t.Fatalf("writes and counter: %s", got)
	}
	if bad := psqlT(t, "SELECT count(*) FROM (SELECT token <= lag(token) OVER (ORDER BY seq) AS down FROM mix_log) s WHERE down"); bad != "0" {
		t.Fatalf("%s tokens did not increase: %s", bad, psqlT(t, "SELECT string_agg(token::text, ' ' ORDER BY seq) FROM mix_log"))
	}
}

// The recipes of docs/go.md, run as written: each ```sql block with psql
// and each Go block marked <!-- go test --> with "go run", in a GOPATH of
// its own in which "pgfence" is this package (and pgx is Debian's).
func TestDocsRecipes(t *testing.T) {
	dir, _ := os.Getwd()
	text, err := os.ReadFile(filepath.Join(dir, "..", "docs", "go.md"))
	if err != nil {
		t.Fatal(err)
	}
	gopath := t.TempDir()
	os.MkdirAll(filepath.Join(gopath, "src"), 0o755)
	if err := os.Symlink(dir, filepath.Join(gopath, "src", "pgfence")); err != nil {
		t.Fatal(err)
	}
	psqlT(t, "DROP TABLE IF EXISTS inventory, accounts")
	env := append(os.Environ(), "GO111MODULE=off", "GOFLAGS=",
		"GOPATH="+gopath+string(os.PathListSeparator)+"/usr/share/gocode")
	blocks := strings.Split(string(text), "\n```")
	ran := 0
	for i := 1; i < len(blocks); i += 2 {
		body := blocks[i]
		switch {
		case strings.HasPrefix(body, "sql\n"):
			psqlT(t, strings.TrimPrefix(body, "sql\n"))
		case strings.HasPrefix(body, "go\n") && strings.HasSuffix(blocks[i-1], "<!-- go test -->"):
			ran++
			pkg := fmt.Sprintf("recipe%d", ran)
			os.MkdirAll(filepath.Join(gopath, "src", pkg), 0o755)
			os.WriteFile(filepath.Join(gopath, "src", pkg, "main.go"), []byte(strings.TrimPrefix(body, "go\n")), 0o644)
			cmd := exec.Command("go", "run", pkg)
			cmd.Env, cmd.Dir = env, gopath
			out, err := cmd.CombinedOutput()
			t.Logf("%s:\n%s", pkg, out)
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			if ran == 3 && !strings.Contains(string(out), "sum 200") {
				t.Fatalf("the transfers lost money")
			}
			if ran == 4 && !strings.Contains(string(out), "impatient: true true") {
				t.Fatalf("the impatient caller did not give up at its deadline")
			}
		}
	}
	if ran != 4 {
		t.Fatalf("%d recipes found, want 4", ran)
	}
	if got := psqlT(t, "SELECT qty FROM inventory"); got != "91" {
		t.Fatalf("qty %s after 3 + 6 sold", got)
	}
}
