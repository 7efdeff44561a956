// go/cost_test.go: what a cycle costs the process beside its two round
// trips.  Counted, not timed: the context switches of all the process's
// threads, which a loaded machine changes far less than it changes rates.
// libfence in C makes at most two a cycle (its thread sleeps once for each
// round trip); the binding must not add the Go scheduler's own hand-offs.

package pgfence

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// switches is the number of context switches the process's threads have
// made, voluntary (a thread went to sleep: the hand-offs) or not (counted
// too: the hand-offs also show as preemptions of the one CPU's threads),
// from /proc.
func switches() (int64, error) {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err == nil && len(tasks) == 0 {
		err = errors.New("no threads")
	}
	if err != nil {
		return 0, err
	}
	var n int64
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasSuffix(strings.SplitN(line, ":", 2)[0], "ctxt_switches") {
				v, _ := strconv.ParseInt(strings.TrimSpace(strings.SplitN(line, ":", 2)[1]), 10, 64)
				n += v
			}
		}
	}
	return n, nil
}

// cycles (helper): "n" acquire + release cycles on "resource" after
// 100 ms of them, with a background context or ("wait") one with a
// deadline and a wait; prints the process's context switches per cycle.
func init() {
	helpers["cycles"] = func(args []string) int {
		mode, r := args[0], args[1]
		c, err := NewClient("")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		opts := Options{NoHeartbeat: true}
		if mode == "wait" {
			opts.Wait = time.Second
		}
		cycle := func() error {
			ctx, cancel := context.Background(), func() {}
			if mode == "wait" {
				ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
			}
			defer cancel()
			l, err := c.Acquire(ctx, []string{r}, opts)
			if err != nil {
				return err
			}
			return l.Release()
		}
		// past the monitor's 10 ms, with every thread the loop needs started
		for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
			if err := cycle(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		const n = 2000
		before, err := switches()
		for i := 0; i < n && err == nil; i++ {
			err = cycle()
		}
		after, serr := switches()
		if err == nil {
			err = serr
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%.2f\n", float64(after-before)/n)
		return 0
	}
}

// A worker loop that does nothing but take and give back leases used to
// have its P taken away by the scheduler's monitor at every blocking call
// once it had run 10 ms without a reschedule (each hand-off wakes another
// thread, and the monitor ticks every 20 us meanwhile: 3.0-3.4 switches a
// cycle here, at a load average of 12, where the loop now makes 2.0-2.1);
// and an Acquire with a cancellable context and a wait started a goroutine
// per call to watch it, run on another thread (6.3-7.7).  The loop runs in a helper process
// pinned to one CPU, so that every wake-up of another thread is a switch
// counted (Redis runs elsewhere: a round trip's answer may come before the
// caller sleeps), with GOMAXPROCS 2, as on a machine of two cores.
func TestCycleAddsNoThreadWakeups(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset")
	}
	if _, err := switches(); err != nil {
		t.Skipf("no /proc/self/task: %v", err)
	}
	// the first CPU this process may run on (a container's cpuset may not
	// hold CPU 0)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	cpu := ""
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "Cpus_allowed_list:") {
			if f := strings.FieldsFunc(strings.TrimSpace(line[len("Cpus_allowed_list:"):]),
				func(r rune) bool { return r == '-' || r == ',' }); len(f) > 0 {
				cpu = f[0]
			}
		}
	}
	if cpu == "" {
		t.Skip("no Cpus_allowed_list in /proc/self/status")
	}
	for _, mode := range []string{"background", "wait"} {
		t.Run(mode, func(t *testing.T) {
			cmd := helper("cycles", mode, resource(t))
			cmd.Args = append([]string{"taskset", "-c", cpu}, cmd.Args...)
			cmd.Path = taskset
			cmd.Env = append(cmd.Env, "GOMAXPROCS=2")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper: %v", err)
			}
			per, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				t.Fatalf("helper said %q", out)
			}
			t.Logf("%.2f context switches a cycle", per)
			if per > 2.6 {
				t.Fatalf("%.2f context switches a cycle: libfence's two round trips make 2 at most", per)
			}
		})
	}
}
