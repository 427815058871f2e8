# The README's commands. `make test` is what CI runs, then `make
# test-stacks` and `make test-packaging`.
GO ?= go

.PHONY: test test-short test-stacks test-packaging deps vet build demo bench fuzz soak package

build:
	$(GO) build -buildvcs=auto -o bin/wpsidecar ./cmd/wpsidecar

# Debian packages (amd64, arm64) in dist/: docs/deploy/debian.md.
package:
	scripts/package.sh

STATICCHECK ?= $(shell command -v staticcheck || echo $(HOME)/go/bin/staticcheck)

# The end-to-end suite (a real WordPress) builds only with -tags e2e: `go
# test ./...` alone needs nothing but MariaDB and Redis.
TAGS ?= e2e

# The soak harness (scripts/soak, tag soak) and the packaging checks (tag
# packaging, run by make test-packaging) are checked, not run, by make test.
vet:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet -tags $(TAGS),soak,packaging ./...
	@if [ -x "$(STATICCHECK)" ]; then $(STATICCHECK) -tags $(TAGS),soak,packaging ./...; else echo "staticcheck not installed: go install honnef.co/go/tools/cmd/staticcheck@latest"; fi

# What the tests need (MariaDB, WordPress, PHP, nginx, staticcheck …):
# installed when missing and run as root, else named.
deps:
	scripts/install-deps.sh

test: deps vet
	$(GO) test -race -count=1 -timeout 30m -tags $(TAGS) ./...
	cd deploy/kubernetes && $(GO) vet ./... && $(GO) test -count=1 ./...

# The tests that need no server (no MariaDB, Redis or WordPress): under a
# minute, on any machine with Go.
test-short:
	$(GO) test -short -count=1 -tags $(TAGS) ./...

# The database tests on MySQL 9.7 and MariaDB 11.8, the end-to-end tests on
# WordPress 7.1 (MySQL) and 6.8 (MariaDB), the companion plugin's on PHP 8.4:
# all from Debian's packages (sid, trixie) in a chroot under .cache/stacks,
# built on the first run (root; a few minutes) and reused after. A summary
# at the end; scripts/stacks.sh says how.
test-stacks:
	scripts/stacks.sh test

# What ships beside the binary (cmd/wpsidecar, tag packaging): the Debian
# packages built into a temporary folder and the amd64 one installed,
# checked and purged in the sid chroot of test-stacks (the chroot alone
# built when missing: root, about a minute), never on the machine; the
# Dockerfile's build command; the Compose files (docker-compose config).
test-packaging:
	scripts/stacks.sh chroot
	$(GO) test -count=1 -tags packaging -run '^TestPackaging_' ./cmd/wpsidecar/

# Short fuzzing runs of every fuzz target.
fuzz:
	$(GO) test ./config/wpconfig -run '^$$' -fuzz FuzzReadWPConfig -fuzztime 30s
	$(GO) test ./config/wpconfig -run '^$$' -fuzz FuzzParseDotenv -fuzztime 15s
	$(GO) test ./config -run '^$$' -fuzz FuzzParseDBHost -fuzztime 15s
	$(GO) test ./internal/phpserial -run '^$$' -fuzz FuzzUnserialize -fuzztime 30s
	$(GO) test ./internal/phpquery -run '^$$' -fuzz FuzzName -fuzztime 15s
	$(GO) test ./auth -run '^$$' -fuzz FuzzParseBasic -fuzztime 15s
	$(GO) test ./domain/wplogin -run '^$$' -fuzz FuzzSanitizeUserShortcut -fuzztime 15s
	$(GO) test ./auth -run '^$$' -fuzz FuzzCookie -fuzztime 20s
	$(GO) test ./web/proxy -run '^$$' -fuzz FuzzClientIP -fuzztime 15s
	$(GO) test ./domain/fieldgroup -run '^$$' -fuzz FuzzValidateConfig -fuzztime 20s
	$(GO) test ./domain/fieldgroup -run '^$$' -fuzz FuzzParseJSON -fuzztime 15s
	$(GO) test ./internal/phpserial -run '^$$' -fuzz FuzzFromJSON -fuzztime 20s
	$(GO) test ./domain/themeoption -run '^$$' -fuzz FuzzCheckValue -fuzztime 20s
	$(GO) test ./domain/themeoption -run '^$$' -fuzz FuzzParseConfig -fuzztime 15s
	$(GO) test ./internal/contentcoding -run '^$$' -fuzz FuzzNegotiate -fuzztime 15s
	$(GO) test ./web/restcache -run '^$$' -fuzz FuzzHasNonce -fuzztime 15s
	$(GO) test ./web/proxy -run '^$$' -fuzz FuzzForwardedKey -fuzztime 15s

demo:
	scripts/demo.sh

bench:
	scripts/bench.sh

# Ten minutes of load and faults; writes the table into docs/operations.md.
soak:
	scripts/soak.sh
