//go:build race

package cli

// raceEnabled skips the SciFact run under the race detector: indexing 5,183
// documents is ten times slower there and checks no concurrency.
const raceEnabled = true
