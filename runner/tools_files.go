package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-dev/tether/config"
	"github.com/tether-dev/tether/internal/dirlist"
)

// Limits of the file tools. Every call has a deadline; search_files has
// budgets of its own, so that one call cannot hold the daemon (the file
// tools run in tether itself, outside any sandbox or cgroup).
const (
	maxReadBytes    = 256 << 10 // read_file returns at most this much
	maxWriteBytes   = 8 << 20   // write_file and patch content
	maxSearchFiles  = 20000     // files search_files looks at
	maxSearchResult = 200       // matches search_files returns by default
	maxRegexpBytes  = 4 << 10
	// maxRegexpInsts bounds the compiled pattern: RE2's cost per byte
	// grows with the program (a{1000}{…} repeated in 4 KiB of pattern is
	// half a million instructions).
	maxRegexpInsts = 10000
	// maxSearchBytes is the file content one search reads in all.
	maxSearchBytes = 64 << 20
	// maxSearchPiece is the longest text matched at once: longer lines are
	// matched piece by piece, so the budgets are checked between pieces.
	maxSearchPiece = 64 << 10
	// maxSearchDepth bounds directory nesting (one descriptor per level).
	maxSearchDepth = 128
	// fileToolTimeout is the deadline of read_file, write_file and patch.
	fileToolTimeout = 30 * time.Second
	// searchTimeout and searchCPU bound a search in wall-clock and CPU
	// time; it stops with what it found so far.
	searchTimeout = 20 * time.Second
	searchCPU     = 5 * time.Second
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

// resolve resolves a path argument inside the workspace (symlinks inside
// it followed, as a shell would) and refuses tether's own config and state
// for any access and, forWrite, every protected path. It returns the
// canonical relative path or a blocked result. The file is then opened by
// that symlink-free path alone (wsFS.open), so nothing swapped in after
// this check is followed.
func (env *Env) resolve(p string, forWrite bool) (string, *Result) {
	if forWrite {
		// The path as written first: a protected path may be a sandbox's
		// reservation (a link that resolves nowhere) while one runs.
		lex := filepath.Clean(p)
		if filepath.IsAbs(lex) {
			lex, _ = filepath.Rel(env.Root, lex)
		}
		if why := protectedSet(env.Root, env.Runner.protected()).Reason(lex); why != "" && !strings.HasPrefix(lex, "..") {
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
	if why := hiddenReason(env.Root, rel, env.Runner.protected()); why != "" {
		r := blocked("path.protected", fmt.Sprintf("%s: %s; nothing was read or written", p, why))
		return "", &r
	}
	if forWrite {
		if rel == "." {
			r := blocked("path.invalid", "the workspace root is not a file; nothing was written")
			return "", &r
		}
		if why := protectedSet(env.Root, env.Runner.protected()).Reason(rel); why != "" {
			r := blocked("path.protected", fmt.Sprintf("%s: %s; nothing was written", p, why))
			return "", &r
		}
	}
	return rel, nil
}

// fileAccess is what a file tool does with the path it opens.
type fileAccess int

const (
	accessRead   fileAccess = iota // read_file
	accessWrite                    // write_file, patch
	accessSearch                   // search_files: the path rules judge each file it reads
)

// open is the common gate of the file tools: resolve path inside the
// workspace (write: also refuse protected paths), check the job's mandate
// (which records the call), apply the profile's path rules (asking a
// person where one says ask, for as long as ctx allows; not for a search,
// which applies them to each file), and open the workspace root. id is
// the identity of the object the rules judged (zero when none existed):
// a reader must refuse an object it opens that is not that one. The
// caller must close ws when bad is nil.
func (env *Env) open(ctx context.Context, tool, path string, how fileAccess) (rel string, ws *wsFS, id fileID, bad *Result) {
	write := how == accessWrite
	if rel, bad = env.resolve(path, write); bad != nil {
		return "", nil, id, bad
	}
	mctx, cancel := context.WithTimeout(ctx, fileToolTimeout)
	bad = env.checkMandate(mctx, tool, []string{rel}, write)
	cancel()
	if bad != nil {
		return "", nil, id, bad
	}
	if how != accessSearch {
		if id, bad = env.checkPathRules(ctx, tool, path, rel); bad != nil {
			return "", nil, id, bad
		}
	}
	ws, err := openWS(env.Root)
	if err != nil {
		r := failed(fmt.Sprintf("%v; nothing was read or written", cleanErr(err, env.Root)), nil)
		r.Ran = false
		return "", nil, id, &r
	}
	if write {
		// Git directories no name gives away (a bare repository, a
		// nested one's, one a nested .git file names), judged on the
		// opened directories, before anything is read or made.
		if err := ws.checkControl(filepath.Dir(rel), filepath.Base(rel)); err != nil {
			ws.Close()
			r := blocked("path.protected", fmt.Sprintf("%s: %v; nothing was written", path, cleanErr(err, env.Root)))
			if !errors.Is(err, ErrProtectedPath) {
				r = failedNoRun(fileErr("checking", path, err, env.Root) + "; nothing was written")
			}
			return "", nil, id, &r
		}
	}
	return rel, ws, id, nil
}

// sameObject returns ErrPathChanged unless got, the object a tool opened
// at rel, is want, the one the path rules judged.
func sameObject(rel string, want, got fileID) error {
	if want != got {
		return fmt.Errorf("%w: %s is not the file that was checked", ErrPathChanged, rel)
	}
	return nil
}

// fileErr is the message for a failed file operation on p.
func fileErr(what, p string, err error, root string) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s %s: the call ran out of time (%s)", what, p, fileToolTimeout)
	}
	return fmt.Sprintf("%s %s: %s", what, p, cleanErr(err, root))
}

func readFile(ctx context.Context, env *Env, c *Call) Result {
	p := argString(c.Args, "path")
	rel, ws, want, bad := env.open(ctx, c.Name, p, accessRead)
	if bad != nil {
		return *bad
	}
	defer ws.Close()
	// The deadline starts once a person has answered (a path rule may ask).
	ctx, cancel := context.WithTimeout(ctx, fileToolTimeout)
	defer cancel()
	f, got, err := ws.openRead(rel)
	if err == nil {
		if err = sameObject(rel, want, got); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return failed(fileErr("reading", p, err, env.Root), nil)
	}
	defer f.Close()
	offset, hasOff := argInt(c.Args, "offset")
	if !hasOff {
		offset = 1
	}
	limit, hasLimit := argInt(c.Args, "limit")
	var buf bytes.Buffer
	sc := bufio.NewScanner(ctxReader{ctx, f})
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
		return failed(fileErr("reading", p, err, env.Root), nil)
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
	// A write replaces the name (never writes through a hard link), so
	// the object the rules judged need not be the one replaced.
	rel, ws, _, bad := env.open(ctx, c.Name, p, accessWrite)
	if bad != nil {
		return *bad
	}
	defer ws.Close()
	n, err := ws.replace(rel, []byte(content), true, nil)
	if errors.Is(err, ErrProtectedPath) {
		return blocked("path.protected", fmt.Sprintf("%s: %v; nothing was written", p, err))
	}
	if err != nil {
		// replace renames into place last: on error the file is unchanged.
		return failedNoRun(fileErr("writing", p, err, env.Root) + "; nothing was written")
	}
	return succeeded(fmt.Sprintf("wrote %d bytes to %s", n, p), map[string]any{"path": rel, "bytes_written": n})
}

func patchFile(ctx context.Context, env *Env, c *Call) Result {
	p := argString(c.Args, "path")
	old, repl := argString(c.Args, "old_string"), argString(c.Args, "new_string")
	if old == "" {
		return failedNoRun("old_string is empty: give the exact text to replace; nothing was changed")
	}
	rel, ws, want, bad := env.open(ctx, c.Name, p, accessWrite)
	if bad != nil {
		return *bad
	}
	defer ws.Close()
	ctx, cancel := context.WithTimeout(ctx, fileToolTimeout)
	defer cancel()
	// patch reads: whether old_string is found tells the model about the
	// content, so the object read must be the one the rules judged.
	data, id, err := ws.readAll(ctx, rel, maxWriteBytes+1)
	if err == nil {
		err = sameObject(rel, want, id)
	}
	if err != nil {
		return failedNoRun(fileErr("reading", p, err, env.Root) + "; nothing was changed")
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
	if err := ctx.Err(); err != nil {
		return failedNoRun(fileErr("patching", p, err, env.Root) + "; nothing was changed")
	}
	_, err = ws.replace(rel, []byte(out), false, &id)
	if errors.Is(err, ErrProtectedPath) {
		return blocked("path.protected", fmt.Sprintf("%s: %v; nothing was changed", p, err))
	}
	if err != nil {
		return failedNoRun(fileErr("writing", p, err, env.Root) + "; nothing was changed")
	}
	return succeeded(fmt.Sprintf("replaced %d occurrence(s) in %s", n, p), map[string]any{"path": rel, "success": true, "replacements": n})
}

// failedNoRun is a failure that changed nothing (checked before writing).
func failedNoRun(msg string) Result {
	r := failed(msg, map[string]any{"success": false})
	return r
}

type match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// compileSearch compiles a search pattern, refusing one whose program is
// too large to run within the search's budgets.
func compileSearch(pat string) (*regexp.Regexp, error) {
	if len(pat) > maxRegexpBytes {
		return nil, fmt.Errorf("the pattern is over %d bytes", maxRegexpBytes)
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, err
	}
	parsed, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, err
	}
	if len(prog.Inst) > maxRegexpInsts {
		return nil, fmt.Errorf("the pattern is too complex (%d instructions, at most %d): use fewer or smaller counted repetitions", len(prog.Inst), maxRegexpInsts)
	}
	return re, nil
}

// search is one search_files call: its pattern, budgets and findings.
// It runs on one locked OS thread (its CPU clock is the thread's).
type search struct {
	ctx     context.Context
	re      *regexp.Regexp
	glob    string
	max     int
	hidden  map[fileID]bool // tether's own config and state: skipped
	cpuEnd  time.Duration   // thread CPU time at which to stop
	bytes   int64           // content read so far
	checked int64           // bytes when the clocks were last read
	calls   int             // calls of more
	files   int
	matches []match
	stopped string // why the search ended early; "" when it did not
	dirMax  int    // names listed of one directory at most (dirlist.MaxEntries)

	// The path rules: a file they cover (by name, or as another hard link
	// of a covered file) is not read; it is counted in skipped.
	rules   config.Files
	links   func() (map[fileID]ruledLink, bool) // computed once, on the first file with several links
	skipped []string                            // the first few skipped files
	nskip   int
}

// maxSkippedListed is how many files skipped by the path rules a search
// names in its result.
const maxSkippedListed = 20

// ruled reports whether the path rules keep the search out of the regular
// file rel (st its status), recording it as skipped. Unlike read_file,
// a search never asks: asking file by file would be a flood of questions,
// so the result names the files and read_file asks for each.
func (s *search) ruled(rel string, st *unix.Stat_t) bool {
	_, hit := s.rules.Match(rel)
	if !hit && st.Nlink > 1 && s.links != nil {
		links, complete := s.links()
		_, hit = links[idOf(st)]
		hit = hit || !complete
	}
	if hit {
		s.nskip++
		if len(s.skipped) < maxSkippedListed {
			s.skipped = append(s.skipped, rel)
		}
	}
	return hit
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// more reports whether the search may go on, recording why not. The
// clocks are read every 64 calls or 64 KiB read, whichever comes first;
// between two readings the search matches at most that much.
func (s *search) more() bool {
	s.calls++
	return s.check(s.calls%64 == 0 || s.bytes-s.checked >= maxSearchPiece)
}

// check is more's decision; clocks says whether to read the clocks.
func (s *search) check(clocks bool) bool {
	if clocks {
		s.checked = s.bytes
	}
	switch {
	case s.stopped != "":
	case clocks && s.ctx.Err() != nil:
		s.stopped = fmt.Sprintf("time (%s)", searchTimeout)
	case clocks && threadCPU() > s.cpuEnd:
		s.stopped = fmt.Sprintf("CPU time (%s)", searchCPU)
	case s.bytes >= maxSearchBytes:
		s.stopped = fmt.Sprintf("bytes read (%d MiB)", maxSearchBytes>>20)
	case len(s.matches) >= s.max:
		s.stopped = fmt.Sprintf("results (%d)", s.max)
	case s.files > maxSearchFiles:
		s.stopped = fmt.Sprintf("files (%d)", maxSearchFiles)
	}
	return s.stopped == ""
}

// walk searches the directory dirfd, at rel, without following symlinks:
// every entry is opened relative to its parent's descriptor.
func (s *search) walk(dirfd int, rel string, depth int) {
	if depth > maxSearchDepth {
		return
	}
	// Listed dirlist.Batch names at a time, the budgets checked between
	// batches; a directory past dirMax names stops the search.
	entries, err := dirlist.Read(dirfd, rel, s.dirMax, func() bool { return s.check(true) })
	if errors.Is(err, dirlist.ErrTooLarge) {
		s.stopped = fmt.Sprintf("directory entries (%s has more than %d)", rel, s.dirMax)
	}
	for _, e := range entries {
		name := e.Name()
		if !s.more() {
			return
		}
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || s.hidden[idOf(&st)] {
			continue
		}
		child := path.Join(rel, name)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if name == ".git" {
				continue
			}
			fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			var now unix.Stat_t
			if unix.Fstat(fd, &now) == nil && idOf(&now) == idOf(&st) {
				s.walk(fd, child, depth+1)
			}
			unix.Close(fd)
		case unix.S_IFREG:
			if s.glob != "" {
				if ok, _ := path.Match(s.glob, name); !ok {
					continue
				}
			}
			if s.ruled(child, &st) {
				continue
			}
			s.files++
			if s.files > maxSearchFiles {
				return
			}
			s.file(dirfd, name, child, idOf(&st))
		}
		// FIFOs, sockets, devices and symlinks are not searched.
	}
}

// file searches the regular file name of dirfd, opened O_PATH first (no
// side effect whatever it became since it was listed) and read only if it
// is still the regular file listed.
func (s *search) file(dirfd int, name, rel string, id fileID) {
	pfd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(pfd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || idOf(&st) != id {
		unix.Close(pfd)
		return
	}
	fd, err := unix.Open(fdProcPath(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	unix.Close(pfd)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	s.scan(f, rel)
}

func fdProcPath(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }

// scan matches the lines of r, in pieces of at most maxSearchPiece bytes
// (a match spanning two pieces of one long line is not found), checking
// the budgets between pieces.
func (s *search) scan(r io.Reader, rel string) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxWriteBytes), maxSearchPiece)
	line, first := 1, true
	for s.more() {
		piece, err := br.ReadSlice('\n')
		s.bytes += int64(len(piece))
		if first && bytes.IndexByte(piece, 0) >= 0 {
			return // binary
		}
		first = false
		text := bytes.TrimSuffix(piece, []byte("\n"))
		if len(piece) > 0 && s.re.Match(text) {
			if len(text) > 500 {
				text = text[:500]
			}
			s.matches = append(s.matches, match{Path: rel, Line: line, Text: string(text)})
		}
		switch {
		case err == bufio.ErrBufferFull:
			// The line goes on in the next piece.
		case err != nil:
			return
		default:
			line++
		}
	}
}

func searchFiles(ctx context.Context, env *Env, c *Call) Result {
	re, err := compileSearch(argString(c.Args, "pattern"))
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
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	rel, ws, _, bad := env.open(ctx, c.Name, start, accessSearch)
	if bad != nil {
		return *bad
	}
	defer ws.Close()
	fd, err := ws.open(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	isDir := err == nil
	if errors.Is(err, unix.ENOTDIR) {
		fd, err = ws.open(rel, unix.O_PATH)
	}
	if err != nil {
		return failedNoRun(fileErr("searching", start, err, env.Root))
	}
	defer unix.Close(fd)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	hidden := hiddenIDs(env.Runner.protected())
	s := &search{ctx: ctx, re: re, glob: glob, max: max, hidden: hidden, cpuEnd: threadCPU() + searchCPU,
		rules: env.Profile.Files, dirMax: dirlist.MaxEntries}
	s.links = sync.OnceValues(func() (map[fileID]ruledLink, bool) { return ruledLinks(ws, s.rules, hidden) })
	if isDir {
		s.walk(fd, rel, 0)
	} else {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return failedNoRun(fileErr("searching", start, kindError(rel, st.Mode), env.Root))
		}
		if _, asWritten := s.rules.Match(ruleNames(env.Root, start, rel)...); asWritten {
			s.nskip, s.skipped = 1, []string{rel}
		} else if !s.ruled(rel, &st) {
			s.files = 1
			s.file(ws.fd, rel, rel, idOf(&st))
		}
	}
	if len(s.matches) > max {
		s.matches = s.matches[:max]
	}
	list := make([]any, len(s.matches))
	for i, m := range s.matches {
		list[i] = map[string]any{"path": m.Path, "line": m.Line, "text": m.Text}
	}
	out := map[string]any{"matches": list, "count": len(s.matches), "truncated": s.stopped != "", "bytes_searched": s.bytes}
	msg := fmt.Sprintf("%d matches in %d files", len(s.matches), min(s.files, maxSearchFiles))
	if s.stopped != "" {
		out["stopped_by"] = s.stopped
		msg += "; stopped early: out of " + s.stopped
	}
	if s.nskip > 0 {
		list := make([]any, len(s.skipped))
		for i, p := range s.skipped {
			list[i] = p
		}
		out["skipped_by_path_rules"] = list
		out["skipped_count"] = s.nskip
		msg += fmt.Sprintf("; %d files not searched: the profile's path rules (files.deny, files.ask, secret files) cover them "+
			"(read_file asks the user for one where a rule says ask)", s.nskip)
	}
	return succeeded(msg, out)
}

// hiddenIDs identifies tether's own config and state (the paths that
// exist), so a search skips them by what they are, whatever they are
// called in the workspace.
func hiddenIDs(paths []string) map[fileID]bool {
	ids := map[fileID]bool{}
	for _, p := range paths {
		var st unix.Stat_t
		if p != "" && unix.Lstat(p, &st) == nil {
			ids[idOf(&st)] = true
		}
	}
	return ids
}

// cleanErr removes the workspace's host path from an error shown to the
// model.
func cleanErr(err error, root string) string {
	return strings.ReplaceAll(err.Error(), root+"/", "")
}
