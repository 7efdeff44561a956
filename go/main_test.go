// go/main_test.go: what every test of the package shares.  The tests run
// against the servers test/run.sh starts (suite "go"): the Redis in
// $FENCE_REDIS_URL and the PostgreSQL in the PG* variables, with the fence
// extension installable.  Servers of a test's own (a Redis to stop, one
// with an ACL) are started here on spare ports and stopped by their pid.
//
// The test binary is also the helper process some tests start (and
// SIGSTOP): with PGFENCE_HELPER=NAME it runs that helper instead of the
// tests.

package pgfence

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helpers run in a child process: PGFENCE_HELPER=NAME, arguments in
// PGFENCE_ARGS (tab-separated).
var helpers = map[string]func(args []string) int{}

func TestMain(m *testing.M) {
	if name := os.Getenv("PGFENCE_HELPER"); name != "" {
		h, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "no helper %q\n", name)
			os.Exit(2)
		}
		os.Exit(h(strings.Split(os.Getenv("PGFENCE_ARGS"), "\t")))
	}
	for _, v := range []string{"FENCE_REDIS_URL", "PGHOST", "PGPORT"} {
		if os.Getenv(v) == "" {
			fmt.Fprintf(os.Stderr, "pgfence tests: %s is not set: they need a Redis ($FENCE_REDIS_URL) and a PostgreSQL with the fence extension (PG*); test/run.sh starts both (FENCE_SUITES=go)\n", v)
			os.Exit(2)
		}
	}
	psqlMust("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS fence")
	os.Exit(m.Run())
}

// helper starts the test binary as helper "name" with "args".
func helper(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PGFENCE_HELPER="+name, "PGFENCE_ARGS="+strings.Join(args, "\t"))
	cmd.Stderr = os.Stderr
	return cmd
}

// resource is a resource name no other test (or run) uses.
func resource(t *testing.T) string {
	return fmt.Sprintf("go:%s:%08x", t.Name(), rand.New(rand.NewSource(time.Now().UnixNano())).Uint32())
}

// psql runs "sql" with psql, and gives its unaligned output.
func psql(sql string, db ...string) (string, error) {
	args := []string{"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql}
	if len(db) > 0 {
		args = append(args, "-d", db[0])
	}
	out, err := exec.Command("psql", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("psql %q: %v: %s", sql, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func psqlMust(sql string) string {
	out, err := psql(sql)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return out
}

func psqlT(t *testing.T, sql string) string {
	t.Helper()
	out, err := psql(sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newClient(t *testing.T, url string, opts ...ClientOption) *Client {
	t.Helper()
	c, err := NewClient(url, opts...)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func acquire(t *testing.T, c *Client, opts Options, resources ...string) *Lease {
	t.Helper()
	l, err := c.Acquire(context.Background(), resources, opts)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", resources, err)
	}
	return l
}

// redisServer is a redis-server of a test's own, on a spare port.
type redisServer struct {
	port int
	cmd  *exec.Cmd
	dir  string
}

func startRedis(t *testing.T, args ...string) *redisServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command("redis-server", append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log")}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &redisServer{port: port, cmd: cmd, dir: dir}
	t.Cleanup(r.stop)
	for i := 0; i < 100; i++ {
		if r.cli("PING") == "PONG" {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("redis-server on port %d did not start", port)
	return nil
}

func (r *redisServer) url() string { return fmt.Sprintf("redis://127.0.0.1:%d", r.port) }

func (r *redisServer) cli(args ...string) string {
	out, _ := exec.Command("redis-cli", append([]string{"-p", fmt.Sprint(r.port)}, args...)...).Output()
	return string(bytes.TrimSpace(out))
}

func (r *redisServer) stop() {
	if r.cmd.ProcessState == nil {
		r.cmd.Process.Signal(syscall.SIGCONT)
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
}
