//go:build race

package store

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = true
