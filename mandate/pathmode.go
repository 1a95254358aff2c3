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

// Literal paths
//
// A paths rule is read as a pattern in three ways: a last element "**"
// is a tree ("DIR/**", "**"), a leading "~" or a "$" or "`" is shell text
// the text gate matched unexpanded ("~/x", "$HOME/x"). A name that comes
// from a file tool, a literal redirection, the kernel's record of an
// observed call or a path the kernel refused is a name, never a pattern:
// the sandboxed program chose it, and a failed open of "**" must not
// become a rule that allows everything. Such a name is written in the
// literal form "=NAME" (after the mode: "read:=secret/**") when its plain
// form would be read as a pattern or as literal form ("=x" is "==x");
// every other name is its own rule. A literal rule matches that one path
// and nothing beneath it; only Compile's collapse step makes a "DIR/**"
// rule.

// literalPrefix marks a paths rule's path (after its mode) as one name.
const literalPrefix = "="

// needsLiteral reports whether the name p, written plain, would be read
// as something else than that one name.
func needsLiteral(p string) bool {
	return p == "**" || strings.HasSuffix(p, "/**") || strings.HasPrefix(p, "~") ||
		strings.ContainsAny(p, "$`") || strings.HasPrefix(p, literalPrefix)
}

// literalPath is the rule path that allows exactly the name p.
func literalPath(p string) string {
	if needsLiteral(p) {
		return literalPrefix + p
	}
	return p
}

// LiteralName splits a rule's path (PathMode's first result) into the
// name it allows and whether it is in the literal form, which allows
// exactly that name.
func LiteralName(p string) (name string, literal bool) {
	return strings.CutPrefix(p, literalPrefix)
}

// treeDir returns DIR of a tree rule's path ("DIR/**"; "" for "/**"), and
// whether p is one. A literal rule is never a tree.
func treeDir(p string) (string, bool) {
	if _, lit := LiteralName(p); lit {
		return "", false
	}
	return strings.CutSuffix(p, "/**")
}

// beneath reports whether the rule path p (a name, literal or not) lies
// beneath the tree rule DIR/** given as prefix "DIR/". A literal name
// lies beneath a tree only through directories whose plain form is
// literal too: "=$HOME/x" (a directory named "$HOME" in the workspace)
// is not beneath "$HOME/**" (the home directory).
func beneath(p, prefix string) bool {
	name, lit := LiteralName(p)
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	return !lit || !needsLiteral(strings.TrimSuffix(prefix, "/"))
}

// nameValue is the paths value of the name p (a path the kernel, a file
// tool or a literal redirection named), read-only or read-write.
func nameValue(p string, readOnly bool) string {
	return pathValue(literalPath(p), readOnly)
}
