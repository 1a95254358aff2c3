package mandate

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
)

// KernelRules is a paths family as a Landlock ruleset can hold it:
// absolute paths, read-write and read-only ("read:" rules) apart.
type KernelRules struct {
	// Trees and Files are the read-write rules: everything beneath a
	// tree; a file itself (a directory is listed, not opened).
	Trees, Files []string
	// ReadTrees and ReadFiles are the read-only rules: reading, listing
	// and executing, nothing that writes.
	ReadTrees, ReadFiles []string
	// Skipped are the rules the kernel cannot express (see KernelPaths).
	Skipped []string
}

// KernelPaths translates a paths family (rule values as written) into
// what a Landlock ruleset can hold, as absolute paths for a workspace at
// workspace: a "DIR/**" rule becomes a tree (everything beneath DIR), an
// exact rule a file (the file itself; a directory is listed, not
// opened), each read-only when the rule is ("read:"). Relative rules are
// inside the workspace; rules climbing out of it ("../x/**") or absolute
// stay where they point. A rule the kernel cannot express exactly is
// skipped, which only narrows: a non-literal rule ("$HOME/x", "~/x") is
// listed in Skipped; the kernel then refuses it, and the text gate still
// allows it. A literal rule ("=NAME", pathmode.go) is the file NAME.
func KernelPaths(rules []string, workspace string) KernelRules {
	var k KernelRules
	for _, v := range rules {
		r, ro := PathMode(v)
		name, literal := LiteralName(r)
		if !literal && (strings.ContainsAny(r, "$`") || strings.HasPrefix(r, "~")) || name == "" {
			k.Skipped = append(k.Skipped, v)
			continue
		}
		// A literal rule ("=NAME") is the one file NAME, whatever its
		// characters: never a tree, never shell text.
		dir, isTree := treeDir(r)
		switch {
		case literal:
			dir = name
		case r == "**":
			dir, isTree = ".", true
		case isTree && dir == "":
			dir = "/" // "/**": every absolute path
		}
		p := dir
		if !filepath.IsAbs(p) {
			if workspace == "" {
				k.Skipped = append(k.Skipped, v)
				continue
			}
			p = filepath.Join(workspace, p)
		}
		p = filepath.Clean(p)
		switch {
		case isTree && ro:
			k.ReadTrees = append(k.ReadTrees, p)
		case isTree:
			k.Trees = append(k.Trees, p)
		case ro:
			k.ReadFiles = append(k.ReadFiles, p)
		default:
			k.Files = append(k.Files, p)
		}
	}
	return k
}

// accessWord names what a refused paths value was: "read" or "write".
func accessWord(v string) string {
	if _, ro := PathMode(v); ro {
		return "read"
	}
	return "write"
}

// readBlockers are the Landlock rights a read-only rule grants: a refusal
// missing only these is a read, and its drift widens to a read-only rule.
var readBlockers = map[string]bool{"fs.read_file": true, "fs.read_dir": true, "fs.execute": true}

// refusedValue is the paths value a refusal of the name path (relative
// to the workspace when inside it) for the missing rights blockers (comma-separated Landlock names)
// widens to: read-only when every right it lacked is a read.
func refusedValue(path, blockers string) string {
	ro := blockers != ""
	for _, b := range strings.Split(blockers, ",") {
		if !readBlockers[strings.TrimSpace(b)] {
			ro = false
		}
	}
	return nameValue(path, ro)
}

// RecordPathRefused records an access the kernel refused to a sandbox of
// a call of run under the job's enforced mandate (a Landlock ruleset made
// from its paths family) as a blocked call with an open drift record in
// the paths family: path is where the kernel refused it (inside the
// workspace it becomes relative, as paths rules are), blockers the rights
// it lacked. Widening it covers that exact path: read-only when it lacked
// only read rights, else read-write (a write refused under a read-only
// rule is a write). op is what the refused call did when the mount plan
// refused it (unlink, chmod, rename, ...: sandbox.PathRefused.Op), empty
// for a Landlock refusal, whose access word (read, write) its blockers
// give; the drift's failure and reason carry it.
func (s *Store) RecordPathRefused(ctx context.Context, run Run, c Call, path, op, blockers string) (string, error) {
	var id string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.ensureJob(ctx, tx, run.Job); err != nil {
			return err
		}
		value := refusedValue(normName(path, c.Workspace), blockers)
		// One record a refused path (and operation): records fold by
		// call text, and two paths the same command was refused are two
		// rules to widen; a chmod and an rm of one path are two records
		// that say so.
		c.Command += "  # refused by the kernel: "
		if op != "" {
			c.Command += op + " "
		}
		c.Command += value
		callID, err := s.insertCall(ctx, tx, run, c, Facts{Tool: c.Tool, Paths: []string{value}}, "blocked")
		if err != nil {
			return err
		}
		word, by := accessWord(value), "Landlock"
		switch op {
		case "", "open", "open-write": // an open refused under the plan is a write: the word stays
		default:
			word = op
		}
		if op != "" {
			by = "mount"
		}
		id, err = s.insertDrift(ctx, tx, run, callID, c, []Failure{{Family: FamilyPaths, Value: value, Op: op}},
			"refused by the kernel: "+word+" "+redact(path)+" ("+by+": "+blockers+")", Block, "open")
		return err
	})
	if err != nil {
		return "", fmt.Errorf("recording the kernel's refusal of %s in %s: %w", path, run.Job, err)
	}
	return id, nil
}

// RecordConnectRefused records a TCP connect the kernel refused to a
// sandbox of a call of run under the job's enforced mandate (a Landlock
// ruleset made from its hosts family's ports, KernelPorts) as a blocked
// call with an open drift record in the hosts family: addr is the
// address the kernel refused ("IP:port"), and widening the record adds
// the rule for it, which allows that port (to every host, for the
// kernel: it knows ports, not addresses).
func (s *Store) RecordConnectRefused(ctx context.Context, run Run, c Call, addr string) (string, error) {
	value, err := canonRule(FamilyHosts, addr)
	if err != nil {
		return "", fmt.Errorf("recording the kernel's refusal of a connect to %q in %s: %w", addr, run.Job, err)
	}
	var id string
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.ensureJob(ctx, tx, run.Job); err != nil {
			return err
		}
		// One record a refused address: records fold by call text.
		c.Command += "  # refused by the kernel: connect " + value
		callID, err := s.insertCall(ctx, tx, run, c, Facts{Tool: c.Tool, Hosts: []string{value}}, "blocked")
		if err != nil {
			return err
		}
		id, err = s.insertDrift(ctx, tx, run, callID, c, []Failure{{Family: FamilyHosts, Value: value, Op: "connect"}},
			"refused by the kernel: connect to "+value+" (Landlock: net.connect_tcp)", Block, "open")
		return err
	})
	if err != nil {
		return "", fmt.Errorf("recording the kernel's refusal of a connect to %s in %s: %w", addr, run.Job, err)
	}
	return id, nil
}
