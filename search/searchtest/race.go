//go:build race

package searchtest

// raceEnabled shortens MatchesMemory and skips Quality: under the race
// detector indexing and 5,000 depth-1000 queries take minutes and check
// nothing about races that Run's concurrent subtest does not.
const raceEnabled = true
