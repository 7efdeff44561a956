# pgfence: top-level build.  The extension is built with PGXS in extension/,
# the client library and the fence command in client/.
#
#   make            build both
#   make install    install the extension into PostgreSQL, libfence + fence
#   make uninstall  remove what "make install" put there (same variables)
#   make test       install what is missing, build, start throwaway servers, run every suite
#   make test-matrix
#                   "make test" in Debian chroots of every tested platform
#                   (PostgreSQL 13 to 18, Redis 6.0 to 8.0, Valkey 8.1 and 9.1;
#                   test/matrix.sh), one line each; as root
#   make demo       the same set-up, then a stale writer being fenced off
#   make bench      benchmarks against baselines measured in the same run
#   make dist       pgfence-VERSION.tar.gz from git (DIST_REF=v0.3.0 for a tag)
#   make build/fence_pg_tle.sql
#                   the SQL edition (sql/hosted/) as a pg_tle extension, for
#                   hosted PostgreSQL that offers pg_tle (untested here)
#   make check-packaging
#                   META.json, man page, completion, install layout, make dist,
#                   and the Debian packages built with dpkg-buildpackage
#
# Strict builds (as CI does): make test PG_CFLAGS=-Werror FENCE_CFLAGS=-Werror
#
# Where "make install" (and so test, demo and bench) installs: as root, into
# the system's PostgreSQL and /usr/local; as any other user, or with
# PGTREE=DIR, into a private PostgreSQL tree in DIR (test/lib/pgtree.sh: a
# relocated copy of the server's binaries, the rest linked), where the
# throwaway servers of the tests run from and nothing of the system's is
# touched.

PG_CONFIG ?= pg_config
export PG_CONFIG

ifneq ($(shell id -u),0)
PGTREE ?= $(CURDIR)/build/pgtree
endif
export PGTREE

.PHONY: all extension client install uninstall deps deps-demo deps-packaging test test-matrix demo bench python-hint \
	dist check-packaging clean

all: extension client

extension:
	$(MAKE) -C extension

client:
	$(MAKE) -C client

ifeq ($(PGTREE),)
install: all
	@echo "install: into the system's PostgreSQL ($$($(PG_CONFIG) --pkglibdir)) and /usr/local (make PGTREE=DIR for a private tree)"
	$(MAKE) -C extension install
	$(MAKE) -C client install
	@$(MAKE) -s python-hint
else
install: all
	@tree_config=$$(PG_CONFIG_SYSTEM=$(PG_CONFIG) test/lib/pgtree.sh $(PGTREE)) && \
	echo "install: into the private tree $(PGTREE)" && \
	$(MAKE) -C extension install PG_CONFIG=$$tree_config && \
	$(MAKE) -C client install PREFIX=$(PGTREE)/usr/local
	@$(MAKE) -s python-hint
endif

# The Python package (python/), the Node.js package (node/) and the Go
# package (go/) are bindings over the libfence just installed; pip
# installs the first, offline, with Debian's setuptools, npm the second
# (koffi from the npm registry); the third finds libfence with pkg-config
# when a program is built.
python-hint:
	@echo "install: for Python, pip install --no-build-isolation --no-index ./python (docs/python.md)"
	@echo "install: for Node.js, from your project: npm install $(CURDIR)/node (docs/node.md)"
	@echo "install: for Go, import \"pgfence\" from ./go (replace directive; cgo finds libfence with pkg-config: docs/go.md)"

ifeq ($(PGTREE),)
uninstall:
	@echo "uninstall: from the system's PostgreSQL ($$($(PG_CONFIG) --pkglibdir)) and /usr/local"
	$(MAKE) -C extension uninstall
	$(MAKE) -C client uninstall
else
uninstall:
	@tree_config=$$(PG_CONFIG_SYSTEM=$(PG_CONFIG) test/lib/pgtree.sh $(PGTREE)) && \
	echo "uninstall: from the private tree $(PGTREE)" && \
	$(MAKE) -C extension uninstall PG_CONFIG=$$tree_config && \
	$(MAKE) -C client uninstall PREFIX=$(PGTREE)/usr/local
endif

deps:
	@test/lib/deps.sh

deps-demo:
	@test/lib/deps.sh demo

deps-packaging:
	@test/lib/deps.sh packaging

test: deps
	$(MAKE) install
	test/run.sh

test-matrix:
	test/matrix.sh

demo: deps-demo
	$(MAKE) install
	test/demo.sh

bench: deps
	$(MAKE) install
	bench/run.sh

# The release tarball: what git tracks at DIST_REF, under pgfence-VERSION/
# (the version of fence.h there), less what .gitattributes marks
# export-ignore, into DIST_DIR.  It is also the .orig.tar.gz of the Debian
# source package.  A release tag (CHANGELOG.md: vX.Y.Z) must hold version
# X.Y.Z.
DIST_REF ?= HEAD
DIST_DIR ?= .
dist:
	@version=$$(git show $(DIST_REF):client/fence.h | sed -n 's/^\#define FENCE_VERSION "\(.*\)"/\1/p') && \
	[ -n "$$version" ] || { echo "dist: no FENCE_VERSION in $(DIST_REF):client/fence.h" >&2; exit 1; } && \
	case "$(DIST_REF)" in v[0-9]*) [ "v$$version" = "$(DIST_REF)" ] || \
		{ echo "dist: tag $(DIST_REF) holds version $$version (client/fence.h)" >&2; exit 1; } ;; esac && \
	git archive --format=tar.gz --prefix=pgfence-$$version/ \
		-o $(DIST_DIR)/pgfence-$$version.tar.gz $(DIST_REF) && \
	echo $(DIST_DIR)/pgfence-$$version.tar.gz

check-packaging: deps deps-packaging all
	test/packaging/run.sh

# The SQL edition wrapped in pgtle.install_extension(): psql's own
# commands (\set) dropped, the rest as it is.
build/fence_pg_tle.sql: sql/hosted/fence_hosted.sql
	@mkdir -p build
	@version=$$(sed -n 's/^\#define FENCE_VERSION "\(.*\)"/\1/p' client/fence.h) && \
	{ echo "-- the SQL edition of fence as a pg_tle extension; generated from $<"; \
	  echo "SELECT pgtle.install_extension('fence', '$$version',"; \
	  echo "    'Fencing tokens for leases: the SQL edition for hosted PostgreSQL', \$$_fence_pg_tle_\$$"; \
	  grep -v '^\\' $<; \
	  echo "\$$_fence_pg_tle_\$$);"; } >$@
	@echo $@

clean:
	$(MAKE) -C extension clean
	$(MAKE) -C client clean
