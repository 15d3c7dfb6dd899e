// Package bleve benchmarks AgentCraft's search engines (search/memory and
// search/sqlite) against github.com/blevesearch/bleve/v2 on the same corpus
// in the same `go test -bench` run. It is a separate module so that bleve
// never enters the product's go.mod. Run it with
//
//	cd bench/bleve && go test -run '^$' -bench . -benchtime 2s -timeout 60m
//
// See README.md for what each benchmark measures and the measured numbers.
package bleve
