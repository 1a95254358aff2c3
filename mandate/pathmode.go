package mandate

import "strings"

// Read-only paths
//
// A paths rule (and a paths fact, and the value of a paths failure) says
// whether it allows writing. "read:conf/**" allows reading beneath conf
// (opening files to read, listing directories, executing), not writing,
// truncating, creating, removing or renaming there; "conf/**" allows both,
// as every rule did before rules had modes, so an old mandate keeps its
// meaning. A fact "read:conf/a.ini" is a read, which any rule covering the
// path allows; a fact without the prefix is a write (or a path whose use
// the evidence does not tell, such as a command's argument), which only a
// rule without it allows. "rw:" spells a read-write value explicitly; only
// a path that itself begins with "read:" or "rw:" needs it.

// ReadOnlyPrefix marks a read-only paths value.
const ReadOnlyPrefix = "read:"

// rwPrefix marks a read-write paths value explicitly.
const rwPrefix = "rw:"

// PathMode splits a paths value into its path and whether it is read-only.
func PathMode(v string) (path string, readOnly bool) {
	if p, ok := strings.CutPrefix(v, ReadOnlyPrefix); ok {
		return p, true
	}
	if p, ok := strings.CutPrefix(v, rwPrefix); ok {
		return p, false
	}
	return v, false
}

// pathValue is the paths value of path p, read-only or read-write.
func pathValue(p string, readOnly bool) string {
	switch {
	case readOnly:
		return ReadOnlyPrefix + p
	case strings.HasPrefix(p, ReadOnlyPrefix) || strings.HasPrefix(p, rwPrefix):
		return rwPrefix + p
	}
	return p
}

// PathModeName names a paths value's mode for people: "read" or
// "read-write".
func PathModeName(v string) string {
	if _, ro := PathMode(v); ro {
		return "read"
	}
	return "read-write"
}

// ruleAccess is PathModeName of a rule of family fam, "" outside paths.
func ruleAccess(fam, v string) string {
	if fam != FamilyPaths {
		return ""
	}
	return PathModeName(v)
}

// mapPath applies f to the path of a paths value, keeping its mode.
func mapPath(v string, f func(string) string) string {
	p, ro := PathMode(v)
	return pathValue(f(p), ro)
}
