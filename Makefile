# The README's commands. `make test` is what CI runs.
GO ?= go

.PHONY: test vet build demo bench fuzz

build:
	$(GO) build -o bin/wpsidecar ./cmd/wpsidecar

vet:
	gofmt -l . | tee /dev/stderr | (! read)
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...

# Short fuzzing runs of every fuzz target.
fuzz:
	$(GO) test ./config -run '^$$' -fuzz FuzzParseWPConfig -fuzztime 30s
	$(GO) test ./config -run '^$$' -fuzz FuzzParseDBHost -fuzztime 15s

bench:
	scripts/bench.sh
