# The README's commands. `make test` runs every test, as CI does.
.PHONY: test demo bench

test:
	go vet ./...
	go test -race -shuffle=on -count=1 ./...

demo:
	go run ./cmd/polite demo

bench:
	go test -run '^$$' -bench . -benchmem ./...
