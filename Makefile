# Convenience targets. README.md's two commands stay plain `go` commands.
GO ?= go
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: test test-under-load race lint mutants bench vmtest ci

test:
	$(GO) test ./...

# The tests and the VM tests beside a busy loop per core and a build loop
# (.ci/load): timing assertions must hold on a busy machine too.
test-under-load:
	bash .ci/load

race:
	$(GO) test -race ./stats/ ./gsocheck/ ./spicelike/... ./transport/

lint:
	@out=$$(gofmt -l . | grep -v '^vendor/' || true); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@test -x $(STATICCHECK) || GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	$(STATICCHECK) ./...

# Apply deliberate breakages to stats and gsocheck one at a time; fail unless
# every one makes a test fail.
mutants:
	$(GO) run ./internal/mutants

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Boot Debian's stock kernel (which has sch_netem) under qemu and run the
# netem tests inside it.
vmtest:
	bash vmtest/run.sh

ci:
	bash .ci/run
