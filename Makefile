# pgfence: top-level build.  The extension is built with PGXS in extension/,
# the client library and the fence command in client/.
#
#   make            build both
#   make install    install the extension into PostgreSQL, libfence + fence
#   make test       install what is missing, build, start throwaway servers, run every suite
#   make demo       the same set-up, then a stale writer being fenced off
#   make bench      benchmarks against baselines measured in the same run
#
# Strict builds (as CI does): make test PG_CFLAGS=-Werror FENCE_CFLAGS=-Werror

PG_CONFIG ?= pg_config
export PG_CONFIG

.PHONY: all extension client install deps test demo bench clean

all: extension client

extension:
	$(MAKE) -C extension

client:
	$(MAKE) -C client

install: all
	$(MAKE) -C extension install
	$(MAKE) -C client install

deps:
	@test/lib/deps.sh

test: deps
	$(MAKE) install
	test/run.sh

demo: deps
	$(MAKE) install
	test/demo.sh

bench: deps
	$(MAKE) install
	bench/run.sh

clean:
	$(MAKE) -C extension clean
	$(MAKE) -C client clean
