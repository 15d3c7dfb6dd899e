//go:build race

package postgres_test

// raceEnabled skips the collection tests: under the race detector indexing
// and 5,000 depth-1000 queries take minutes and check nothing about races
// that TestConformance's concurrent subtest does not.
const raceEnabled = true
