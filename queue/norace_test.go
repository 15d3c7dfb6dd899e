//go:build !race

package queue

// raceEnabled reports a -race build; see race_test.go.
const raceEnabled = false
