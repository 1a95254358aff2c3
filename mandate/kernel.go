package mandate

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
)

// KernelPaths translates a paths family (rule values as written) into
// what a Landlock ruleset can hold, as absolute paths for a workspace at
// workspace: a "DIR/**" rule becomes a tree (everything beneath DIR), an
// exact rule a file (the file itself; a directory is listed, not
// opened). Relative rules are inside the workspace; rules climbing out of
// it ("../x/**") or absolute stay where they point. A rule the kernel
// cannot express exactly is skipped, which only narrows: a non-literal
// rule ("$HOME/x", "~/x") is listed in skipped; the kernel then refuses
// it, and the text gate still allows it.
func KernelPaths(rules []string, workspace string) (trees, files, skipped []string) {
	for _, r := range rules {
		if strings.ContainsAny(r, "$`") || strings.HasPrefix(r, "~") || r == "" {
			skipped = append(skipped, r)
			continue
		}
		dir, isTree := strings.CutSuffix(r, "/**")
		switch {
		case r == "**":
			dir, isTree = ".", true
		case isTree && dir == "":
			dir = "/" // "/**": every absolute path
		}
		p := dir
		if !filepath.IsAbs(p) {
			if workspace == "" {
				skipped = append(skipped, r)
				continue
			}
			p = filepath.Join(workspace, p)
		}
		p = filepath.Clean(p)
		if isTree {
			trees = append(trees, p)
		} else {
			files = append(files, p)
		}
	}
	return trees, files, skipped
}

// RecordPathRefused records an access the kernel refused to a sandbox of
// a call of run under the job's enforced mandate (a Landlock ruleset made
// from its paths family) as a blocked call with an open drift record in
// the paths family: path is where the kernel refused it (inside the
// workspace it becomes relative, as paths rules are), blockers the rights
// it lacked. Widening it covers that exact path.
func (s *Store) RecordPathRefused(ctx context.Context, run Run, c Call, path, blockers string) (string, error) {
	var id string
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.ensureJob(ctx, tx, run.Job); err != nil {
			return err
		}
		value := normPath(path, c.Workspace)
		// One record a refused path: records fold by call text, and two
		// paths the same command was refused are two rules to widen.
		c.Command += "  # refused by the kernel: " + value
		callID, err := s.insertCall(ctx, tx, run, c, Facts{Tool: c.Tool, Paths: []string{value}}, "blocked")
		if err != nil {
			return err
		}
		id, err = s.insertDrift(ctx, tx, run, callID, c, []Failure{{Family: FamilyPaths, Value: value}},
			"refused by the kernel (Landlock: "+blockers+"): "+redact(value), Block, "open")
		return err
	})
	if err != nil {
		return "", fmt.Errorf("recording the kernel's refusal of %s in %s: %w", path, run.Job, err)
	}
	return id, nil
}
