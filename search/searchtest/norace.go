//go:build !race

package searchtest

const raceEnabled = false
