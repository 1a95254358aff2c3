package config

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/tether-dev/tether/internal/fspath"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the text of the embedded default configuration.
func DefaultYAML() []byte { return bytes.Clone(defaultYAML) }

// EnvConfig is the environment variable naming the config file.
const EnvConfig = "TETHER_CONFIG"

// SystemPath is the system-wide config file, the last one Find tries.
const SystemPath = "/etc/tether/config.yaml"

// ErrNotFound is returned by Find for an explicitly named file (flag or
// $TETHER_CONFIG) that does not exist. An explicit name never falls back.
var ErrNotFound = errors.New("config file not found")

// Problem is one thing wrong with a config file.
type Problem struct {
	File string `json:"file"`
	Line int    `json:"line"` // 0 when the problem has no line (an unreadable file)
	Msg  string `json:"message"`
	err  error  // the cause, for errors.Is (an unreadable file)
}

// String returns "file:line: message" (or "file: message" without a line).
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// InvalidError lists every problem found in a config file, in line order.
type InvalidError struct {
	Problems []Problem
}

// Unwrap returns the causes of the problems that have one, so that
// errors.Is(err, ErrUntrustedFile) works on a refused file.
func (e *InvalidError) Unwrap() []error {
	var out []error
	for _, p := range e.Problems {
		if p.err != nil {
			out = append(out, p.err)
		}
	}
	return out
}

// Error returns one problem per line.
func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Find returns the config file to load: explicit (a --config flag) if
// non-empty, else $TETHER_CONFIG, else the first existing of
// $XDG_CONFIG_HOME/tether/config.yaml (~/.config/tether/config.yaml) and
// SystemPath. It returns "" and no error when none exists (use Default).
// A file named by the flag or the variable must exist (ErrNotFound).
func Find(explicit string) (string, error) {
	for _, p := range []string{explicit, os.Getenv(EnvConfig)} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("%w: %s", ErrNotFound, p)
			}
			return "", fmt.Errorf("checking config file %s: %w", p, err)
		}
		return p, nil
	}
	var candidates []string
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		candidates = append(candidates, filepath.Join(x, "tether", "config.yaml"))
	} else if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "tether", "config.yaml"))
	}
	candidates = append(candidates, SystemPath)
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("checking config file %s: %w", p, err)
		}
	}
	return "", nil
}

// Resolve finds and loads the configuration (see Find), falling back to
// the embedded default when no file exists.
func Resolve(explicit string) (*Config, error) {
	path, err := Find(explicit)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return Default()
	}
	return Load(path)
}

// Default returns the embedded default configuration.
func Default() (*Config, error) {
	return Parse(EmbeddedSource, defaultYAML, "")
}

// Load reads and validates the config file at path.
func Load(path string) (*Config, error) {
	data, err := ReadTrusted(path, "config file", MaxConfigSize)
	if err != nil {
		return nil, &InvalidError{Problems: []Problem{{File: path, Msg: err.Error(), err: err}}}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving config path %s: %w", path, err)
	}
	return Parse(path, data, filepath.Dir(abs))
}

// The regexps are compiled on first use, not at init: init work runs in
// every tether process, including the container init that `tether run`
// re-executes.
var unknownField = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^field (\S+) not found in type config\.(\w+)$`)
})

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`) })

// Parse decodes and validates data as a config file. name is used in error
// messages and as Config.Source; relative paths in the file are resolved
// against baseDir (the process's working directory when empty). Every
// error is an *InvalidError.
func Parse(name string, data []byte, baseDir string) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	cfg := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		return nil, &InvalidError{Problems: []Problem{{File: name, Line: line, Msg: "only one YAML document is allowed"}}}
	}
	v := validator{file: name, root: &root}
	cfg.Source = name
	if baseDir == "" {
		baseDir, _ = os.Getwd()
	}
	v.check(cfg, baseDir)
	if len(v.problems) > 0 {
		sort.SliceStable(v.problems, func(i, j int) bool { return v.problems[i].Line < v.problems[j].Line })
		return nil, &InvalidError{Problems: v.problems}
	}
	return cfg, nil
}

// yamlError turns a yaml error ("yaml: line 3: …" or a TypeError listing
// "line 3: …" entries) into an *InvalidError with file:line problems.
func yamlError(name string, err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	ie := &InvalidError{}
	for _, m := range msgs {
		p := Problem{File: name, Msg: strings.TrimPrefix(m, "yaml: ")}
		if sm := yamlLine().FindStringSubmatch(m); sm != nil {
			p.Line, _ = strconv.Atoi(sm[1])
			p.Msg = sm[2]
		}
		if sm := unknownField().FindStringSubmatch(p.Msg); sm != nil {
			p.Msg = fmt.Sprintf("unknown key %q in %s (see config/example.yaml for every key)", sm[1], strings.ToLower(sm[2]))
		}
		ie.Problems = append(ie.Problems, p)
	}
	sort.SliceStable(ie.Problems, func(i, j int) bool { return ie.Problems[i].Line < ie.Problems[j].Line })
	return ie
}

// OwnPaths returns tether's own files and directories for cfg (nil for
// none loaded): its state directory, the file it was loaded from, and
// the places Find looks for a configuration ($XDG_CONFIG_HOME/tether or
// ~/.config/tether, and /etc/tether). No sandboxed command and no file
// tool may read or write them: they hold approvals, the audit log and
// perhaps secrets, and the next tether trusts them.
//
// Each path is listed as given and, when a symlink on the way leads
// elsewhere, as where it really is: a ~/.config/tether, config file or
// state directory linked into a dotfiles checkout is that checkout's file,
// and a workspace holding the checkout must not reach it.
func OwnPaths(cfg *Config) []string {
	var out []string
	if cfg != nil {
		out = append(out, cfg.StateDir)
		if cfg.Source != "" && cfg.Source != EmbeddedSource {
			if abs, err := filepath.Abs(cfg.Source); err == nil {
				out = append(out, abs)
			}
		}
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		out = append(out, filepath.Join(x, "tether"))
	} else if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".config", "tether"))
	}
	out = append(out, filepath.Dir(SystemPath))
	for _, p := range out {
		if p == "" {
			continue
		}
		if r := fspath.Real(p); r != filepath.Clean(p) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
