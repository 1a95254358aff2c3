package mandate

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tether-dev/tether/grammar"
	"github.com/tether-dev/tether/shellparse"
)

// ToolTerminal is the tool name of shell command calls.
const ToolTerminal = "terminal"

// Call is one tool call of a job's run, as the mandate sees it.
type Call struct {
	// Tool is the tool's name: ToolTerminal for shell commands, or a file
	// tool such as "read_file", "write_file", "patch".
	Tool string `json:"tool"`
	// Command is the shell command text of a terminal call.
	Command string `json:"command,omitempty"`
	// Paths are the paths a file tool reads or writes.
	Paths []string `json:"paths,omitempty"`
	// Wrote reports whether the call writes (a file tool that mutates, or a
	// terminal call the caller knows to write). Write redirections in a
	// command count as writes on their own.
	Wrote bool `json:"wrote,omitempty"`
	// Workspace is the directory paths are made relative to; empty leaves
	// relative paths as given and absolute paths absolute.
	Workspace string `json:"workspace,omitempty"`
	// Hosts are the hosts the call was seen contacting at run time (by
	// tether's egress proxy), as opposed to hosts guessed from the
	// command's arguments. They are normalised like argument hosts;
	// invalid names are dropped. When a call has any valid Hosts, they
	// replace the argument-derived hosts of that call: what the proxy saw
	// is the evidence, and a guess beside it would only add noise (a URL
	// in a comment string, a remote never contacted). A call without
	// Hosts keeps argument guessing. The egress proxy records a terminal
	// call with Hosts and no Command for each connection it allows (in
	// observe mode) or refuses for the mandate (in enforce mode).
	Hosts []string `json:"hosts,omitempty"`
	// HostsAtRunTime says the command runs behind tether's egress proxy,
	// which records the hosts it actually contacts as calls of their own
	// (see Hosts). Its hosts are then not guessed from its arguments, so
	// the hosts family holds run-time evidence only and nothing is counted
	// twice; the proxy enforces the mandate's hosts on every connection.
	HostsAtRunTime bool `json:"hosts_at_run_time,omitempty"`
	// Script is the analyser's result for Command when the caller already
	// has it; it is used only when its Source is exactly Command.
	Script *shellparse.Script `json:"-"`
}

// CommandFact is the structural summary of one simple command: what a
// command rule is matched against.
type CommandFact struct {
	Wrappers []string `json:"wrappers,omitempty"` // peeled wrapper programs other than env, outermost first
	Program  string   `json:"program"`            // normalised name, or the spelling when path-qualified
	Sub      []string `json:"sub,omitempty"`      // subcommand words
	Flags    []string `json:"flags,omitempty"`    // flag names used, sorted and unique
	Env      []string `json:"env,omitempty"`      // env names set and env options, sorted and unique
	// Assign are the operands that are assignments ("SHELL=/bin/bash" for
	// make, "of=/dev/sda" for dd), verbatim, sorted and unique: they
	// change what the program does, so a rule must name each one.
	Assign []string `json:"assign,omitempty"`
	// Risky are the options of the call that "-*" never covers: those the
	// command grammar says execute code, write a file or device, or change
	// where the program reads its configuration, and any option a program
	// the grammar knows does not have. Sorted and unique; each is also in
	// Flags.
	Risky []string `json:"risky,omitempty"`
}

// Facts is everything a mandate checks about one call. It is what the store
// records for an observed call and what compile and preview work from.
type Facts struct {
	Tool     string        `json:"tool"`
	Paths    []string      `json:"paths,omitempty"`
	Commands []CommandFact `json:"commands,omitempty"`
	Opaque   []string      `json:"opaque,omitempty"` // exact texts of opaque segments
	Hosts    []string      `json:"hosts,omitempty"`
	Wrote    bool          `json:"wrote,omitempty"`
	// Runtime marks the facts of what the kernel saw a call do
	// (Store.ObserveRuntime): paths and hosts evidence of a call whose
	// command was recorded on its own, so its tool is not counted again.
	Runtime bool `json:"runtime,omitempty"`
	// Missing counts, per directory (as paths rules name it), the names
	// an observed call tried to open that led to no file: never rules.
	Missing map[string]int `json:"missing,omitempty"`
	// Linked are files an observed call touched that have more than one
	// name (hard links), as paths rules name them: never rules.
	Linked []string `json:"linked,omitempty"`
}

// parseFunc is the command analyser; a variable so tests can inject faults.
type parseFunc func(src string) (*shellparse.Script, error)

func defaultParse(src string) (*shellparse.Script, error) {
	return shellparse.Parse(src, shellparse.Options{})
}

// extract computes the facts of c using parse for terminal commands. An
// error means the call could not be analysed (it is too large, or the
// analyser failed); a command that merely does not parse becomes one opaque
// segment holding its whole text.
func extract(c Call, parse parseFunc) (Facts, error) {
	f := Facts{Tool: c.Tool, Wrote: c.Wrote}
	if c.Tool == "" {
		return f, fmt.Errorf("analysing call: tool name is empty")
	}
	for _, p := range c.Paths {
		if np := normName(p, c.Workspace); np != "" {
			// A file tool that does not write reads its paths, which
			// are names (the model chose them), never patterns.
			f.Paths = append(f.Paths, nameValue(np, !c.Wrote))
		}
	}
	if c.Tool == ToolTerminal || c.Command != "" {
		if err := extractCommand(&f, c, parse); err != nil {
			return f, err
		}
	}
	switch seen := observedHosts(c.Hosts); {
	case len(seen) > 0:
		f.Hosts = seen // run-time evidence replaces argument guessing
	case c.HostsAtRunTime:
		f.Hosts = nil // the proxy reports what the command contacts
	}
	f.Paths = uniqSorted(f.Paths)
	f.Hosts = uniqSorted(f.Hosts)
	f.Opaque = uniqSorted(f.Opaque)
	return f, nil
}

func extractCommand(f *Facts, c Call, parse parseFunc) error {
	s, err := c.Script, error(nil)
	if s == nil || s.Source != c.Command {
		s, err = parse(c.Command)
	}
	if err != nil {
		if errorsIsTooLarge(err) {
			return fmt.Errorf("analysing command: %w", err)
		}
		// Unparseable input is never reasoned about: only an exact
		// "=<text>" rule can allow it.
		f.Opaque = append(f.Opaque, c.Command)
		return nil
	}
	if s == nil {
		return fmt.Errorf("analysing command: analyser returned no result")
	}
	for _, cmd := range s.Commands {
		f.Commands = append(f.Commands, commandFact(cmd))
		for _, p := range outsidePaths(cmd, c.Workspace) {
			// The text does not say whether an argument is read or
			// written: it counts as both.
			f.Paths = append(f.Paths, pathValue(p, false))
		}
		for _, r := range cmd.Redirs {
			switch r.Mode {
			case shellparse.RedirDup, shellparse.RedirHeredoc:
				continue
			}
			t := r.Target.Value
			if !r.Target.Literal {
				t = r.Target.Raw
			}
			if isDevStream(t) {
				continue
			}
			// A literal target is a name ("> '**'" writes the file
			// "**"); another is its shell text, matched as written.
			switch ro := r.Mode == shellparse.RedirRead; {
			case !r.Target.Literal:
				if np := normPath(t, c.Workspace); np != "" {
					f.Paths = append(f.Paths, pathValue(np, ro))
				}
			default:
				if np := normName(t, c.Workspace); np != "" {
					f.Paths = append(f.Paths, nameValue(np, ro))
				}
			}
			if r.Mode != shellparse.RedirRead {
				f.Wrote = true
			}
		}
		f.Hosts = append(f.Hosts, commandHosts(cmd)...)
	}
	for _, o := range s.Opaque {
		f.Opaque = append(f.Opaque, o.Text)
	}
	if len(s.Commands) == 0 && len(s.Opaque) == 0 && strings.TrimSpace(c.Command) != "" {
		// Non-blank text with nothing found is not "nothing to check":
		// only its exact text can allow it.
		f.Opaque = append(f.Opaque, c.Command)
	}
	return nil
}

// observedHosts normalises a call's run-time hosts, dropping invalid ones
// and "=TEXT" spellings (which only argument guessing produces).
func observedHosts(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if strings.HasPrefix(h, "=") {
			continue
		}
		if nh := bareHost(h); nh != "" {
			out = append(out, nh)
		}
	}
	return out
}

// withHosts appends a call's run-time hosts to its text for people:
// "terminal (contacted github.com, proxy.golang.org)".
func withHosts(text string, hosts []string) string {
	seen := observedHosts(hosts)
	if len(seen) == 0 {
		return text
	}
	return text + " (contacted " + strings.Join(uniqSorted(seen), ", ") + ")"
}

func errorsIsTooLarge(err error) bool { return errors.Is(err, shellparse.ErrTooLarge) }

func isDevStream(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty":
		return true
	}
	return false
}

// wordText is a word's value when literal, else its source text, so a
// non-literal word only ever matches the same text.
func wordText(w shellparse.Word) string {
	if w.Literal {
		return w.Value
	}
	return w.Raw
}

func commandFact(cmd shellparse.Command) CommandFact {
	cf := CommandFact{Program: cmd.Program}
	if strings.Contains(cmd.Spelling, "/") {
		cf.Program = cmd.Spelling
	}
	for _, w := range cmd.Wrappers {
		if w.Program == "env" {
			continue
		}
		cf.Wrappers = append(cf.Wrappers, wrapperWord(w))
	}
	for _, a := range cmd.Env {
		cf.Env = append(cf.Env, a.Name)
	}
	for _, e := range cmd.EnvFlags {
		cf.Env = append(cf.Env, strings.Join(strings.Fields(e), ""))
	}
	cf.Env = uniqSorted(cf.Env)
	spec := cliTable()[cmd.Program]
	if strings.Contains(cmd.Spelling, "/") {
		spec = nil // a path-qualified program is not the known CLI
	}
	var positional []string
	afterDashes := false
	skipNext := false
	for _, a := range cmd.Args {
		t := wordText(a)
		if skipNext {
			skipNext = false
			continue
		}
		if afterDashes {
			positional = append(positional, t)
			continue
		}
		if t == "--" {
			afterDashes = true
			continue
		}
		if len(t) > 1 && t[0] == '-' {
			name := t
			if strings.HasPrefix(t, "--") {
				if i := strings.IndexByte(t, '='); i > 0 {
					name = t[:i]
				}
			}
			cf.Flags = append(cf.Flags, name)
			if spec != nil && len(positional) < spec.maxWords() && name == t && slices.Contains(spec.valueFlags, t) {
				skipNext = true
			}
			continue
		}
		positional = append(positional, t)
	}
	if !strings.Contains(cmd.Spelling, "/") && grammar.Lookup(cmd.Program) != nil {
		// The grammar knows how the program reads its arguments: which
		// words are option values, and each option's canonical name.
		words := make([]string, len(cmd.Args))
		for i, a := range cmd.Args {
			words[i] = wordText(a)
		}
		inv := grammar.Parse(cmd.Program, words)
		cf.Flags = canonicalFlags(cmd.Program, words)
		positional = append(positional[:0], inv.Sub...)
		for _, op := range inv.Operands {
			positional = append(positional, op.Value)
		}
		afterDashes = inv.DashDash >= 0
	}
	if spec != nil {
		cf.Sub = spec.subWords(positional, afterDashes)
	}
	cf.Flags = uniqSorted(cf.Flags)
	words := make([]string, len(cmd.Args))
	for i, a := range cmd.Args {
		words[i] = wordText(a)
	}
	inv := invocation(cmd.Program, words)
	cf.Assign = assignments(inv)
	if !strings.Contains(cmd.Spelling, "/") {
		cf.Risky = riskyOptions(inv)
	} else {
		// A path-qualified program is not the one the grammar describes:
		// none of its options is known to be harmless.
		cf.Risky = slices.Clone(cf.Flags)
	}
	return cf
}

// isAssignment reports whether an operand is an assignment NAME=VALUE
// (a make variable, a dd operand).
func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := w[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

// outsidePaths returns the arguments of cmd that name paths outside the
// workspace (absolute after cleaning, climbing out with "..", or starting
// at the home directory), also as a value: after the "=" of "--opt=PATH"
// or of an assignment ("CFLAGS+=…", "of=…"), or attached to a short option
// ("-o/etc/x"). Reading or writing there is part of what the paths family
// must allow. URLs, "host:path" operands and the standard streams are not
// paths.
func outsidePaths(cmd shellparse.Command, workspace string) []string {
	var out []string
	for _, a := range cmd.Args {
		t := a.Value // "$HOME/x" keeps its expansion text
		var cands []string
		switch {
		case strings.HasPrefix(t, "--"):
		case strings.HasPrefix(t, "-") && len(t) > 2:
			cands = append(cands, t[2:]) // "-o/etc/x"
		case !strings.HasPrefix(t, "-"):
			cands = append(cands, t)
		}
		if i := strings.IndexByte(t, '='); i >= 0 {
			cands = append(cands, t[i+1:])
		}
		for _, c := range cands {
			if p, ok := outsidePath(c, workspace); ok {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func outsidePath(t, workspace string) (string, bool) {
	if t == "" || strings.Contains(t, "://") || isDevStream(t) {
		return "", false
	}
	home := strings.HasPrefix(t, "~") || strings.HasPrefix(t, "$HOME") || strings.HasPrefix(t, "${HOME}")
	if !home && !strings.HasPrefix(t, "/") && t != ".." && !strings.HasPrefix(t, "../") {
		if !strings.Contains(t, "/..") {
			return "", false
		}
	}
	p := normPath(t, workspace)
	if home || strings.HasPrefix(p, "/") || climbs(p) {
		return p, true
	}
	return "", false
}

// normName is normPath of a name that is not shell text (a file tool's
// path, the kernel's): "$" and "~" are characters of it. Its paths value
// is nameValue's.
func normName(p, workspace string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) && workspace != "" {
		p = filepath.Join(workspace, p)
	}
	p = filepath.Clean(p)
	if workspace != "" {
		if rel, err := filepath.Rel(filepath.Clean(workspace), p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return p
}

// normPath cleans p and makes it relative to workspace when inside it.
// Non-literal paths (containing "$" or a leading "~") are kept verbatim.
func normPath(p, workspace string) string {
	if p == "" {
		return ""
	}
	if strings.ContainsAny(p, "$`") || strings.HasPrefix(p, "~") {
		return p
	}
	if !filepath.IsAbs(p) {
		if workspace == "" {
			return path.Clean(p)
		}
		p = filepath.Join(workspace, p)
	}
	p = filepath.Clean(p)
	if workspace != "" {
		ws := filepath.Clean(workspace)
		if rel, err := filepath.Rel(ws, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return p
}

// hostPrograms take a host as their first operand. The map is built on
// first use, not at init (see cliTable).
var hostPrograms = sync.OnceValue(func() map[string][]string {
	return map[string][]string{ // program → flags that take a value
		"ssh":      {"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w"},
		"mosh":     {"-p", "--ssh", "--port"},
		"telnet":   {"-l", "-n"},
		"nc":       {"-p", "-s", "-w", "-i", "-q", "-x", "-X"},
		"ncat":     {"-p", "-s", "-w", "-i", "-x"},
		"ping":     {"-c", "-i", "-I", "-s", "-t", "-W", "-w"},
		"ping6":    {"-c", "-i", "-I", "-s", "-t", "-W", "-w"},
		"dig":      {"-p", "-t", "-c", "-x", "-b", "-q"},
		"nslookup": nil,
		"host":     {"-t", "-c", "-W"},
	}
})

// fetchProgram reports whether program treats a bare "name.tld/…" operand
// as an http URL.
func fetchProgram(program string) bool {
	switch program {
	case "curl", "wget", "http", "https", "xh":
		return true
	}
	return false
}

// scpProgram reports whether program accepts "host:path" operands.
func scpProgram(program string) bool {
	switch program {
	case "scp", "rsync", "sftp":
		return true
	}
	return false
}

func commandHosts(cmd shellparse.Command) []string {
	var hosts []string
	valueFlags, hostProg := hostPrograms()[cmd.Program]
	fetch := fetchProgram(cmd.Program)
	if fetch {
		valueFlags = fetchValueFlags
	}
	firstOperand := hostProg
	skip := false
	for _, a := range cmd.Args {
		if skip {
			skip = false
			continue
		}
		v := a.Value
		if !a.Literal {
			// A host that cannot be known statically is recorded as its
			// source text ("=$URL"): only an exact rule allows it.
			if (fetch || firstOperand) && !strings.HasPrefix(a.Raw, "-") {
				hosts = append(hosts, "="+a.Raw)
			}
			firstOperand = false
			continue
		}
		if strings.HasPrefix(v, "-") {
			if i := strings.IndexByte(v, '='); i > 0 {
				if h := hostOf(v[i+1:], cmd.Program, false); h != "" {
					hosts = append(hosts, h)
				}
			}
			if slices.Contains(valueFlags, v) {
				skip = true
			}
			continue
		}
		if firstOperand {
			firstOperand = false
			if h := bareHost(v[strings.LastIndexByte(v, '@')+1:]); h != "" {
				hosts = append(hosts, h)
				continue
			}
		}
		if h := hostOf(v, cmd.Program, true); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// fetchValueFlags are curl and wget options whose separate value is not a
// URL (a proxy, -x, is deliberately absent: its value is a host).
var fetchValueFlags = []string{"-H", "--header", "-d", "--data", "--data-raw", "--data-binary",
	"--data-urlencode", "-o", "--output", "-u", "--user", "-A", "--user-agent", "-e", "--referer",
	"-b", "--cookie", "-c", "--cookie-jar", "-F", "--form", "-T", "--upload-file", "-X", "--request",
	"-w", "--write-out", "-m", "--max-time", "--connect-timeout", "-K", "--config", "-E", "--cert",
	"--key", "--cacert", "-r", "--range", "--retry", "-O", "-a", "-P", "--password", "-t", "-U",
	"--post-data", "--post-file", "--body-data", "--output-document", "--directory-prefix"}

// hostOf returns the host named by v, or "".
func hostOf(v, program string, operand bool) string {
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			return ""
		}
		return bareHost(u.Hostname())
	}
	// user@host, user@host:path (scp-like git remotes)
	if at := strings.LastIndexByte(v, '@'); at > 0 && !strings.ContainsAny(v[:at], "/:") {
		rest := v[at+1:]
		if i := strings.IndexByte(rest, ':'); i >= 0 {
			rest = rest[:i]
		}
		return bareHost(rest)
	}
	if scpProgram(program) && operand {
		if i := strings.IndexByte(v, ':'); i > 0 && !strings.Contains(v[:i], "/") {
			return bareHost(v[:i])
		}
	}
	if fetchProgram(program) && operand {
		h := v
		if i := strings.IndexAny(h, "/?#"); i >= 0 {
			h = h[:i]
		}
		if i := strings.LastIndexByte(h, ':'); i > 0 {
			h = h[:i]
		}
		if strings.Contains(h, ".") {
			return bareHost(h)
		}
	}
	return ""
}

// bareHost validates and normalises a host name or IP literal.
func bareHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "" || len(h) > 253 {
		return ""
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == ':' || r == '_') {
			return ""
		}
	}
	return h
}

func uniqSorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	s = slices.Clone(s)
	sort.Strings(s)
	return slices.Compact(s)
}

// validWord reports whether w can appear as one word of a command rule.
func validWord(w string) bool {
	if w == "" || !utf8.ValidString(w) {
		return false
	}
	for _, r := range w {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// wrapperWord writes a peeled wrapper as one rule word, binding its
// arguments: "sudo(-u,bob)", "timeout(60)", "nohup". Arguments holding
// whitespace, ',', '(' or ')' cannot be written; the word then holds a space,
// so no rule can ever match it and Compile leaves the command out.
func wrapperWord(w shellparse.Wrapper) string {
	if len(w.Args) == 0 {
		return w.Program
	}
	for _, a := range w.Args {
		if a == "" || !validWord(a) || strings.ContainsAny(a, ",()") {
			return w.Program + "(unrepresentable arguments)"
		}
	}
	return w.Program + "(" + strings.Join(w.Args, ",") + ")"
}
