package runner

import (
	"path/filepath"
)

// Access is what one call of a batch will touch, for planning.
type Access struct {
	// Kind is the tool's kind. KindRead and KindWrite calls with known
	// paths may share a segment; every other kind is a barrier.
	Kind Kind
	// Paths are canonical absolute paths (symlinks resolved, relative to
	// the execution cwd). A read of a directory reserves its subtree.
	Paths []string
}

// Segment is a run of calls that may execute in parallel; the segments of
// a plan run one after another. Calls holds indexes into the batch, in
// call order.
type Segment struct {
	Calls []int
}

// reservation is a path held by a call of the segment being built.
type reservation struct {
	path  string
	write bool
}

// Plan splits a batch into ordered segments (gate 2). Reads and writes
// with known paths join the current segment unless they conflict with a
// reservation in it: two readers may share a subtree; a writer conflicts
// with any overlapping reservation, read or write. A conflict starts a new
// segment, so a later call never overtakes an earlier one it conflicts
// with. Terminal calls, interactive tools, tools of unknown effect and
// reads or writes whose paths are unknown are barriers: each runs alone,
// after everything before it and before everything after it. Executing
// the segments in order and putting results at their call index keeps
// result order equal to call order.
func Plan(calls []Access) []Segment {
	var segs []Segment
	var cur Segment
	var held []reservation
	flush := func() {
		if len(cur.Calls) > 0 {
			segs = append(segs, cur)
		}
		cur, held = Segment{}, nil
	}
	for i, a := range calls {
		parallel := (a.Kind == KindRead || a.Kind == KindWrite) && len(a.Paths) > 0
		if !parallel {
			flush()
			segs = append(segs, Segment{Calls: []int{i}})
			continue
		}
		write := a.Kind == KindWrite
		if conflicts(held, a.Paths, write) {
			flush()
		}
		cur.Calls = append(cur.Calls, i)
		for _, p := range a.Paths {
			held = append(held, reservation{path: filepath.Clean(p), write: write})
		}
	}
	flush()
	return segs
}

// conflicts reports whether reserving paths (for writing when write)
// conflicts with held.
func conflicts(held []reservation, paths []string, write bool) bool {
	for _, p := range paths {
		p = filepath.Clean(p)
		for _, h := range held {
			if (write || h.write) && overlaps(p, h.path) {
				return true
			}
		}
	}
	return false
}
