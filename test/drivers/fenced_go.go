// test/drivers/fenced_go.go: pgx v4 (Go) under the fence, built against
// Debian's golang-github-jackc-pgx-v4-dev in GOPATH mode (run.sh).
//
//	fenced_go fenced          fence.fenced_update, as fenced_python.py does
//	fenced_go probe MODE      under "fence run": what arrives of the token
//
// Connects with the PG* environment variables (pgx.ParseConfig("")).
// "fenced": DRV_RESOURCE, DRV_TOKEN and DRV_STALE as in fenced_python.py;
// exit 0 when the first write updated one row and the second was refused
// with LF001.  "probe": as in fenced_python.py, one guarded write of the
// row of PROBE_DRIVER in drv_guard, printing "write=ok" or
// "write=SQLSTATE"; MODE is "plain" (no change to the program), "options"
// (PGOPTIONS passed on as the startup parameter "options", which pgx does
// not read by itself) or "local" (the token set per transaction).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgx/v4"
)

const query = "UPDATE drv_stock SET qty = qty - $1 WHERE sku = $2 AND id = $3"

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func sqlstate(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return "error: " + err.Error()
}

func connect(ctx context.Context, mode string) *pgx.Conn {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		die("config: %v", err)
	}
	if mode == "options" {
		cfg.RuntimeParams["options"] = os.Getenv("PGOPTIONS")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		die("connect: %v", err)
	}
	return conn
}

// fenced: pgx asks the server for the parameter types (the VARIADIC text[]
// overload, as asyncpg) and encodes the values for them, so the
// statement's values go as strings.
func fenced(ctx context.Context) {
	resource := os.Getenv("DRV_RESOURCE")
	token, _ := strconv.ParseInt(os.Getenv("DRV_TOKEN"), 10, 64)
	stale, _ := strconv.ParseInt(os.Getenv("DRV_STALE"), 10, 64)
	conn := connect(ctx, "plain")
	defer conn.Close(ctx)
	sql := "SELECT fence.fenced_update($1, $2, $3, $4, $5, $6)"
	var rows int64
	if err := conn.QueryRow(ctx, sql, resource, token, query, "1", "widget", "7").Scan(&rows); err != nil {
		die("accepted write: %v", err)
	}
	if rows != 1 {
		die("accepted write updated %d rows, expected 1", rows)
	}
	err := conn.QueryRow(ctx, sql, resource, stale, query, "1", "widget", "7").Scan(&rows)
	if err == nil || sqlstate(err) != "LF001" {
		die("stale write: %v, expected LF001", err)
	}
	fmt.Printf("ok: 1 row with token %d, LF001 with token %d\n", token, stale)
}

func probe(ctx context.Context, mode string) {
	conn := connect(ctx, mode)
	defer conn.Close(ctx)
	write := "ok"
	err := conn.BeginFunc(ctx, func(tx pgx.Tx) error {
		if mode == "local" {
			if _, err := tx.Exec(ctx, "SELECT set_config('fence.resource', $1, true), set_config('fence.token', $2, true)",
				os.Getenv("FENCE_RESOURCE"), os.Getenv("FENCE_TOKEN")); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, "UPDATE drv_guard SET n = n + 1, "+
			"token_seen = current_setting('fence.token', true) WHERE driver = $1", os.Getenv("PROBE_DRIVER"))
		return err
	})
	if err != nil {
		write = sqlstate(err)
	}
	fmt.Printf("write=%s\n", write)
}

func main() {
	ctx := context.Background()
	switch {
	case len(os.Args) == 2 && os.Args[1] == "fenced":
		fenced(ctx)
	case len(os.Args) == 3 && os.Args[1] == "probe":
		probe(ctx, os.Args[2])
	default:
		die("usage: fenced_go fenced | fenced_go probe plain|options|local")
	}
}
