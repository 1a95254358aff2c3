package shellparse

import "testing"

// TestForkLoops checks which loops and functions are recorded as starting
// background jobs without bound, and that bounded or throttled ones and a
// single background job are not.
func TestForkLoops(t *testing.T) {
	for _, tc := range []struct {
		src       string
		loops     int
		selfSpawn bool
	}{
		{"while true; do sleep 1000 & done", 1, false},
		{"while :; do x & done", 1, false},
		{"while /bin/true; do x & done", 1, false},
		{"until false; do x & done", 1, false},
		{"for ((;;)); do x & done", 1, false},
		{"for ((i=0;;i++)); do x & done", 1, false},
		{"while ((1)); do x & done", 1, false},
		{"while [ 1 ]; do x & done", 1, false},
		{"while test y; do x & done", 1, false},
		{"while true; do (x &); done", 1, false},
		{"while true; do x & sleep 0.1; done", 1, false},
		{"bash -c 'while true; do x & done'", 1, false},
		{"while true; do while true; do x & done; done", 2, false},
		{"f(){ sleep 9 & f; }; f", 0, true},
		{"f(){ f & f; }", 0, true},

		{"while true; do x & wait; done", 0, false},
		{"while true; do x & sleep 5; done", 0, false},
		{"while true; do (x & wait); done", 0, false},
		{"while true; do x; done", 0, false},
		{"while read l; do x & done < f", 0, false},
		{"until true; do x & done", 0, false},
		{"while false; do x & done", 0, false},
		{"while ((0)); do x & done", 0, false},
		{"while [ \"\" ]; do x & done", 0, false},
		{"for i in 1 2 3; do x & done", 0, false},
		{"for ((i=0;i<10;i++)); do x & done", 0, false},
		{"while true; do f(){ x & }; done", 0, false},
		{"sleep 1000 &", 0, false},
		{"f(){ [ $1 -gt 0 ] && { x & f $(($1-1)); }; }; f 3", 0, false},
		{"f(){ x & }; f", 0, false},
	} {
		s, err := Parse(tc.src, Options{})
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if len(s.ForkLoops) != tc.loops {
			t.Errorf("%q: %d fork loops %v, want %d", tc.src, len(s.ForkLoops), s.ForkLoops, tc.loops)
		}
		spawn := false
		for _, f := range s.Functions {
			spawn = spawn || f.SelfSpawn
		}
		if spawn != tc.selfSpawn {
			t.Errorf("%q: SelfSpawn %v, want %v", tc.src, spawn, tc.selfSpawn)
		}
	}
}
