//go:build race

package runner

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
