package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
)

// Limits of the file tools.
const (
	maxReadBytes    = 256 << 10 // read_file returns at most this much
	maxWriteBytes   = 8 << 20   // write_file and patch content
	maxSearchFiles  = 20000     // files search_files looks at
	maxSearchResult = 200       // matches search_files returns by default
	maxRegexpBytes  = 4 << 10
)

func pathArg(a map[string]any) []string { return []string{argString(a, "path")} }

func searchPaths(a map[string]any) []string {
	if p := argString(a, "path"); p != "" {
		return []string{p}
	}
	return []string{"."}
}

// The tool schemas are built on first use, not at init: init work runs in
// every tether process, including the container init that `tether run`
// re-executes.
var (
	schemaReadFile = sync.OnceValue(func() map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"path":   map[string]any{"type": "string", "description": "File path, relative to the workspace."},
				"offset": map[string]any{"type": "integer", "description": "First line to return (1-based).", "minimum": 1.0, "x-coerce-number": true},
				"limit":  map[string]any{"type": "integer", "description": "Number of lines to return.", "minimum": 1.0, "x-coerce-number": true},
			},
			"required":             []any{"path"},
			"additionalProperties": false,
		}
	})
	schemaWriteFile = sync.OnceValue(func() map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"path":    map[string]any{"type": "string", "description": "File path, relative to the workspace. Parent directories are created."},
				"content": map[string]any{"type": "string", "description": "The complete new content of the file."},
			},
			"required":             []any{"path", "content"},
			"additionalProperties": false,
		}
	})
	schemaPatch = sync.OnceValue(func() map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"path":        map[string]any{"type": "string", "description": "File to edit, relative to the workspace."},
				"old_string":  map[string]any{"type": "string", "description": "Exact text to replace; must occur exactly once unless replace_all is true."},
				"new_string":  map[string]any{"type": "string", "description": "Replacement text."},
				"replace_all": map[string]any{"type": "boolean", "description": "Replace every occurrence."},
			},
			"required":             []any{"path", "old_string", "new_string"},
			"additionalProperties": false,
		}
	})
	schemaSearch = sync.OnceValue(func() map[string]any {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"pattern":     map[string]any{"type": "string", "description": "Regular expression (RE2) to search file contents for."},
				"path":        map[string]any{"type": "string", "description": "Directory or file to search, relative to the workspace (default: the workspace)."},
				"glob":        map[string]any{"type": "string", "description": "Only files whose name matches this glob (e.g. *.go)."},
				"max_results": map[string]any{"type": "integer", "description": "Maximum matches to return (default 200).", "minimum": 1.0, "maximum": 5000.0, "x-coerce-number": true},
			},
			"required":             []any{"pattern"},
			"additionalProperties": false,
		}
	})
)

func fileTools() []Tool {
	return []Tool{
		{Name: "read_file", Toolset: "files", Kind: KindRead, Paths: pathArg, Schema: schemaReadFile(), Handler: readFile,
			Description: "Read a text file of the workspace, optionally a range of lines."},
		{Name: "write_file", Toolset: "files", Kind: KindWrite, Paths: pathArg, Schema: schemaWriteFile(), Handler: writeFile,
			Description: "Create or overwrite a file of the workspace. Returns bytes_written."},
		{Name: "patch", Toolset: "files", Kind: KindWrite, Paths: pathArg, Schema: schemaPatch(), Handler: patchFile,
			Description: "Edit a file of the workspace by replacing an exact string. Returns success."},
		{Name: "search_files", Toolset: "files", Kind: KindRead, Paths: searchPaths, Schema: schemaSearch(), Handler: searchFiles,
			Description: "Search file contents of the workspace with a regular expression."},
	}
}

// resolve resolves a path argument inside the workspace; forWrite also
// refuses protected paths. It returns the canonical relative path or a
// blocked result.
func (env *Env) resolve(p string, forWrite bool) (string, *Result) {
	if forWrite {
		// The path as written first: a protected path may be a sandbox's
		// reservation (a link that resolves nowhere) while one runs.
		lex := filepath.Clean(p)
		if filepath.IsAbs(lex) {
			lex, _ = filepath.Rel(env.Root, lex)
		}
		if why := protectedReason(env.Root, lex, env.Runner.protected()); why != "" && !strings.HasPrefix(lex, "..") {
			r := blocked("path.protected", fmt.Sprintf("%s: %s; nothing was written", p, why))
			return "", &r
		}
	}
	rel, err := resolveIn(env.Root, p)
	if err != nil {
		rule := "path.invalid"
		if errors.Is(err, ErrPathEscape) {
			rule = "path.escape"
		}
		r := blocked(rule, fmt.Sprintf("%v; nothing was read or written", err))
		return "", &r
	}
	if forWrite {
		if rel == "." {
			r := blocked("path.invalid", "the workspace root is not a file; nothing was written")
			return "", &r
		}
		if why := protectedReason(env.Root, rel, env.Runner.protected()); why != "" {
			r := blocked("path.protected", fmt.Sprintf("%s: %s; nothing was written", p, why))
			return "", &r
		}
	}
	return rel, nil
}

// open is the common gate of the file tools: resolve path inside the
// workspace (write: also refuse protected paths), check the job's mandate
// (which records the call), and open the workspace root. The caller must
// close root when bad is nil.
func (env *Env) open(ctx context.Context, tool, path string, write bool) (rel string, root *os.Root, bad *Result) {
	if rel, bad = env.resolve(path, write); bad != nil {
		return "", nil, bad
	}
	if bad = env.checkMandate(ctx, tool, []string{rel}, write); bad != nil {
		return "", nil, bad
	}
	if root, bad = env.openRoot(); bad != nil {
		return "", nil, bad
	}
	return rel, root, nil
}

func (env *Env) openRoot() (*os.Root, *Result) {
	root, err := os.OpenRoot(env.Root)
	if err != nil {
		r := failed(fmt.Sprintf("opening the workspace: %v", err), nil)
		r.Ran = false
		return nil, &r
	}
	return root, nil
}

func readFile(ctx context.Context, env *Env, c *Call) Result {
	p := argString(c.Args, "path")
	rel, root, bad := env.open(ctx, c.Name, p, false)
	if bad != nil {
		return *bad
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return failed(fmt.Sprintf("reading %s: %v", p, cleanErr(err, env.Root)), nil)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return failed(fmt.Sprintf("reading %s: it is a directory", p), nil)
	}
	offset, hasOff := argInt(c.Args, "offset")
	if !hasOff {
		offset = 1
	}
	limit, hasLimit := argInt(c.Args, "limit")
	var buf bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxReadBytes)
	line, returned, truncated := 0, 0, false
	for sc.Scan() {
		line++
		if line < offset || (hasLimit && returned >= limit) {
			continue
		}
		if buf.Len()+len(sc.Bytes())+1 > maxReadBytes {
			truncated = true
			continue
		}
		buf.Write(sc.Bytes())
		buf.WriteByte('\n')
		returned++
	}
	if err := sc.Err(); err != nil {
		return failed(fmt.Sprintf("reading %s: %v", p, err), nil)
	}
	return succeeded(fmt.Sprintf("read %d lines of %s", returned, p), map[string]any{
		"path": rel, "content": buf.String(), "lines": returned, "total_lines": line, "truncated": truncated})
}

func writeFile(ctx context.Context, env *Env, c *Call) Result {
	p := argString(c.Args, "path")
	content := argString(c.Args, "content")
	if len(content) > maxWriteBytes {
		return blocked("path.too-large", fmt.Sprintf("the content is over %d bytes; nothing was written", maxWriteBytes))
	}
	rel, root, bad := env.open(ctx, c.Name, p, true)
	if bad != nil {
		return *bad
	}
	defer root.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			r := failed(fmt.Sprintf("creating the directories of %s: %v; nothing was written", p, cleanErr(err, env.Root)), nil)
			r.Ran = false
			return r
		}
	}
	n, err := writeNoFollow(root, rel, []byte(content))
	if err != nil {
		return failed(fmt.Sprintf("writing %s: %v", p, cleanErr(err, env.Root)), map[string]any{"path": rel})
	}
	return succeeded(fmt.Sprintf("wrote %d bytes to %s", n, p), map[string]any{"path": rel, "bytes_written": n})
}

// writeNoFollow replaces the file rel with data, refusing to follow a
// symlink in its last component (one planted after resolution).
func writeNoFollow(root *os.Root, rel string, data []byte) (int, error) {
	mode := fs.FileMode(0o644)
	if fi, err := root.Lstat(rel); err == nil {
		if !fi.Mode().IsRegular() {
			return 0, fmt.Errorf("not a regular file")
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			// Another name for the same file may lie outside the
			// workspace or be protected: writing would change it too.
			return 0, fmt.Errorf("the file has %d hard links; refusing to write through them", st.Nlink)
		}
		mode = fi.Mode().Perm()
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return 0, err
	}
	n, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	return n, errors.Join(werr, serr, cerr)
}

func patchFile(ctx context.Context, env *Env, c *Call) Result {
	p := argString(c.Args, "path")
	old, repl := argString(c.Args, "old_string"), argString(c.Args, "new_string")
	if old == "" {
		return failedNoRun("old_string is empty: give the exact text to replace; nothing was changed")
	}
	rel, root, bad := env.open(ctx, c.Name, p, true)
	if bad != nil {
		return *bad
	}
	defer root.Close()
	data, err := readNoFollow(root, rel)
	if err != nil {
		return failedNoRun(fmt.Sprintf("reading %s: %v; nothing was changed", p, cleanErr(err, env.Root)))
	}
	n := strings.Count(string(data), old)
	switch {
	case n == 0:
		return failedNoRun(fmt.Sprintf("old_string was not found in %s; nothing was changed", p))
	case n > 1 && !argBool(c.Args, "replace_all"):
		return failedNoRun(fmt.Sprintf("old_string occurs %d times in %s; give more context or set replace_all; nothing was changed", n, p))
	}
	out := strings.Replace(string(data), old, repl, -1)
	if len(out) > maxWriteBytes {
		return failedNoRun(fmt.Sprintf("the patched file would be over %d bytes; nothing was changed", maxWriteBytes))
	}
	if _, err := writeNoFollow(root, rel, []byte(out)); err != nil {
		return failed(fmt.Sprintf("writing %s: %v", p, cleanErr(err, env.Root)), map[string]any{"success": false})
	}
	return succeeded(fmt.Sprintf("replaced %d occurrence(s) in %s", n, p), map[string]any{"path": rel, "success": true, "replacements": n})
}

// failedNoRun is a failure that changed nothing (checked before writing).
func failedNoRun(msg string) Result {
	r := failed(msg, map[string]any{"success": false})
	return r
}

func readNoFollow(root *os.Root, rel string) ([]byte, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxWriteBytes+1))
}

type match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

func searchFiles(ctx context.Context, env *Env, c *Call) Result {
	pat := argString(c.Args, "pattern")
	if len(pat) > maxRegexpBytes {
		return failedNoRun("the pattern is too long")
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return failedNoRun(fmt.Sprintf("invalid pattern: %v", err))
	}
	glob := argString(c.Args, "glob")
	if _, err := path.Match(glob, "x"); err != nil {
		return failedNoRun(fmt.Sprintf("invalid glob: %v", err))
	}
	max := maxSearchResult
	if n, ok := argInt(c.Args, "max_results"); ok {
		max = n
	}
	start := argString(c.Args, "path")
	if start == "" {
		start = "."
	}
	rel, root, bad := env.open(ctx, c.Name, start, false)
	if bad != nil {
		return *bad
	}
	defer root.Close()
	fsys := root.FS()
	var matches []match
	files, truncated := 0, false
	err = fs.WalkDir(fsys, filepath.ToSlash(rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != filepath.ToSlash(rel) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if glob != "" {
			if ok, _ := path.Match(glob, d.Name()); !ok {
				return nil
			}
		}
		files++
		if files > maxSearchFiles || len(matches) >= max {
			truncated = true
			return fs.SkipAll
		}
		f, err := fsys.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(io.LimitReader(f, maxWriteBytes))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			if n == 1 && bytes.IndexByte(line, 0) >= 0 {
				return nil // binary
			}
			if re.Match(line) {
				text := string(line)
				if len(text) > 500 {
					text = text[:500]
				}
				matches = append(matches, match{Path: p, Line: n, Text: text})
				if len(matches) >= max {
					truncated = true
					return fs.SkipAll
				}
			}
		}
		return nil
	})
	if err != nil {
		return failed(fmt.Sprintf("searching %s: %v", start, err), nil)
	}
	list := make([]any, len(matches))
	for i, m := range matches {
		list[i] = map[string]any{"path": m.Path, "line": m.Line, "text": m.Text}
	}
	return succeeded(fmt.Sprintf("%d matches in %d files", len(matches), files), map[string]any{
		"matches": list, "count": len(matches), "truncated": truncated})
}

// cleanErr removes the workspace's host path from an error shown to the
// model.
func cleanErr(err error, root string) string {
	return strings.ReplaceAll(err.Error(), root+"/", "")
}
