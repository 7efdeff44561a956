// bench/go_cycles: scenario 19, acquire + release cycles per second from
// Go, on one connection and one resource, for as many seconds as asked.
//
//	go_cycles pgfence|pgfence-heartbeat|pgfence-wait|resp SECONDS
//
// pgfence: client.Acquire with NoHeartbeat, then Release: the same two
// round trips as bench/fence_cycles (one EVALSHA each way), through cgo;
// pgfence-heartbeat: the default, which also starts and stops the renewal
// thread on a Redis connection of its own; pgfence-wait: as pgfence, each
// Acquire with a context of a 5 s deadline and a Wait of 1 s (the lease
// is free: what a service's call costs when nobody holds it); resp: what a Go program
// without a lock library writes by hand (redsync's shape, with no module
// to fetch): SET key value NX PX 10000 with a random value, then a Lua
// compare-and-delete by EVALSHA, over a minimal RESP client below on one
// TCP connection.  Prints cycles_per_s=N.  Redis: $FENCE_REDIS_URL (one
// node, redis://HOST:PORT).
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"pgfence"
)

func cycles(one func() error, seconds float64) (float64, error) {
	n := 0
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for {
		for i := 0; i < 100; i++ {
			if err := one(); err != nil {
				return 0, err
			}
		}
		n += 100
		if !time.Now().Before(end) {
			return float64(n) / seconds, nil
		}
	}
}

// resp is a minimal RESP2 client: commands as arrays of bulk strings,
// replies read as far as these commands need (simple strings, errors,
// integers, bulk strings, nil).
type resp struct {
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
}

func dial(url string) (*resp, error) {
	addr := strings.TrimPrefix(url, "redis://")
	if i := strings.LastIndex(addr, "@"); i >= 0 {
		addr = addr[i+1:]
	}
	addr = strings.TrimSuffix(addr, "/")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c.(*net.TCPConn).SetNoDelay(true)
	return &resp{conn: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}, nil
}

// do sends a command and reads its reply: the text of a simple string,
// bulk string or integer; ok false for a nil reply.
func (c *resp) do(args ...string) (string, bool, error) {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.w.Flush(); err != nil {
		return "", false, err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", false, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '+', ':':
		return line[1:], true, nil
	case '-':
		return "", false, fmt.Errorf("redis: %s", line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", false, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return "", false, err
		}
		return string(buf[:n]), true, nil
	}
	return "", false, fmt.Errorf("redis: unexpected reply %q", line)
}

const compareAndDelete = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`

func main() {
	variant := os.Args[1]
	seconds, _ := strconv.ParseFloat(os.Args[2], 64)
	url := os.Getenv("FENCE_REDIS_URL")
	ctx := context.Background()
	var one func() error
	switch variant {
	case "pgfence-wait":
		// what a service's call looks like: a context with a deadline,
		// and a wait for a busy lease (the lease is free: no waiting)
		client, err := pgfence.NewClient(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		opts := pgfence.Options{TTL: 10 * time.Second, Wait: time.Second, NoHeartbeat: true}
		res := []string{"bench:go"}
		one = func() error {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			l, err := client.Acquire(cctx, res, opts)
			if err != nil {
				return err
			}
			return l.Release()
		}
	case "pgfence", "pgfence-heartbeat":
		client, err := pgfence.NewClient(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		opts := pgfence.Options{TTL: 10 * time.Second, NoHeartbeat: variant == "pgfence"}
		res := []string{"bench:go"}
		one = func() error {
			l, err := client.Acquire(ctx, res, opts)
			if err != nil {
				return err
			}
			return l.Release()
		}
	case "resp":
		c, err := dial(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sha, _, err := c.do("SCRIPT", "LOAD", compareAndDelete)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		value := make([]byte, 16)
		one = func() error {
			if _, err := rand.Read(value); err != nil {
				return err
			}
			v := hex.EncodeToString(value)
			if _, ok, err := c.do("SET", "bench:go-resp", v, "NX", "PX", "10000"); err != nil || !ok {
				return fmt.Errorf("SET NX: not acquired (%v)", err)
			}
			if n, _, err := c.do("EVALSHA", sha, "1", "bench:go-resp", v); err != nil || n != "1" {
				return fmt.Errorf("compare-and-delete: %s (%v)", n, err)
			}
			return nil
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown variant", variant)
		os.Exit(2)
	}
	if err := one(); err != nil { // connect, load the scripts
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r, err := cycles(one, seconds)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("cycles_per_s=%.0f\n", r)
}
