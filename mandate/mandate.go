package mandate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FormatVersion is the "mandate:" format number this package reads and writes.
const FormatVersion = 1

// MaxTextSize bounds a mandate's YAML text; larger text is refused.
const MaxTextSize = 4 << 20

// Families of a mandate, in the order they are written and drawn.
const (
	FamilyTools     = "tools"
	FamilyPaths     = "paths"
	FamilyCommands  = "commands"
	FamilyHosts     = "hosts"
	FamilyMaxWrites = "max_writes_per_run"
	// FamilyRun is the failure family of a call blocked because its run's
	// mode could not be determined; no rule covers it.
	FamilyRun = "run"
)

// Families lists the rule families in their fixed order.
var Families = []string{FamilyTools, FamilyPaths, FamilyCommands, FamilyHosts}

// Rule is one allow rule and its evidence (how many observed calls it
// covered when it was written). Evidence is a review aid, never a weight.
type Rule struct {
	Value string `json:"value"`
	Seen  int    `json:"evidence"`
}

// Mandate is a parsed mandate. The zero value allows nothing.
type Mandate struct {
	Job             string
	Tools           []Rule
	Paths           []Rule
	Commands        []Rule
	Hosts           []Rule
	MaxWritesPerRun int
	// Notes are comment lines Compile writes about evidence that made no
	// rule (compileNotes); Load does not read them back.
	Notes []string
}

// family returns a pointer to the rule list of the named family.
func (m *Mandate) family(name string) *[]Rule {
	switch name {
	case FamilyTools:
		return &m.Tools
	case FamilyPaths:
		return &m.Paths
	case FamilyCommands:
		return &m.Commands
	case FamilyHosts:
		return &m.Hosts
	}
	return nil
}

// jobRe is compiled on first use, not at init (see cliTable).
var jobRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// ValidJob reports whether name is a usable job name: 1–64 characters of
// letters, digits, '.', '_' and '-', starting with a letter or digit.
func ValidJob(name string) bool { return jobRe().MatchString(name) }

// canonRule validates a rule value of a family and returns its canonical form.
func canonRule(family, v string) (string, error) {
	if !utf8.ValidString(v) {
		return "", fmt.Errorf("%s rule %q is not valid UTF-8", family, v)
	}
	switch family {
	case FamilyTools:
		if !validWord(v) {
			return "", fmt.Errorf("tool rule %q: a tool name is one word", v)
		}
		return v, nil
	case FamilyPaths:
		p, ro := PathMode(v)
		if name, _ := LiteralName(p); name == "" || strings.ContainsRune(p, 0) {
			return "", fmt.Errorf("path rule %q is empty or holds NUL", v)
		}
		return pathValue(p, ro), nil
	case FamilyHosts:
		if text, ok := strings.CutPrefix(v, "="); ok {
			if text == "" || strings.ContainsRune(text, 0) {
				return "", fmt.Errorf("host rule %q: an exact rule needs the argument's text after '='", v)
			}
			return v, nil
		}
		hp, port, hasPort := splitHostRule(v)
		h := hp
		if rest, ok := strings.CutPrefix(hp, "*."); ok {
			h = rest
		}
		if bh := bareHost(h); bh == "" || bh != strings.ToLower(h) || strings.Contains(h, "*") {
			return "", fmt.Errorf("host rule %q: want a host name, IP address or *.domain, optionally with :PORT ([IPv6]:PORT)", v)
		}
		if hasPort {
			return canonHostPort(v, strings.ToLower(hp), port)
		}
		return strings.ToLower(v), nil
	case FamilyCommands:
		r, err := parseCommandRule(v)
		if err != nil {
			return "", err
		}
		return r.String(), nil
	}
	return "", fmt.Errorf("unknown family %q", family)
}

// cmdRule is a parsed command rule.
type cmdRule struct {
	exact    string // opaque segment text, when isExact
	isExact  bool
	env      []string // sorted, unique
	head     []string
	flags    []string // sorted, unique
	anyFlags bool
}

func (r cmdRule) String() string {
	if r.isExact {
		return "=" + r.exact
	}
	var b strings.Builder
	if len(r.env) > 0 {
		b.WriteString("env ")
		b.WriteString(strings.Join(r.env, ","))
		b.WriteString(": ")
	}
	b.WriteString(strings.Join(r.head, " "))
	if r.anyFlags {
		b.WriteString(" -*")
	}
	for _, f := range r.flags {
		b.WriteByte(' ')
		b.WriteString(f)
	}
	return b.String()
}

func validEnvName(e string) bool {
	return validWord(e) && !strings.ContainsAny(e, ",:")
}

// parseCommandRule parses "[env A,B: ]head... [flags...]" or "=text".
func parseCommandRule(s string) (cmdRule, error) {
	if text, ok := strings.CutPrefix(s, "="); ok {
		if text == "" || !utf8.ValidString(text) {
			return cmdRule{}, fmt.Errorf("command rule %q: an exact rule needs the segment's text after '='", s)
		}
		return cmdRule{exact: text, isExact: true}, nil
	}
	var r cmdRule
	rest := s
	if after, ok := strings.CutPrefix(s, "env "); ok {
		names, cmd, found := strings.Cut(after, ": ")
		if !found {
			return r, fmt.Errorf("command rule %q: write environment names as \"env A,B: command\"", s)
		}
		for _, e := range strings.Split(names, ",") {
			if !validEnvName(e) {
				return r, fmt.Errorf("command rule %q: bad environment name %q", s, e)
			}
			r.env = append(r.env, e)
		}
		r.env = uniqSorted(r.env)
		rest = cmd
	}
	for _, w := range strings.Split(rest, " ") {
		if !validWord(w) {
			return r, fmt.Errorf("command rule %q: words are separated by single spaces and hold no control characters", s)
		}
		if strings.HasPrefix(w, "-") {
			if w == "-*" {
				r.anyFlags = true
			} else {
				r.flags = append(r.flags, w)
			}
			continue
		}
		if len(r.flags) > 0 || r.anyFlags {
			return r, fmt.Errorf("command rule %q: word %q comes after a flag; subcommand words go before flags", s, w)
		}
		r.head = append(r.head, w)
	}
	if len(r.head) == 0 {
		return r, fmt.Errorf("command rule %q names no program", s)
	}
	if strings.HasPrefix(r.head[0], "=") {
		return r, fmt.Errorf("command rule %q: a program cannot start with '='", s)
	}
	// With "-*", the flags listed are the risky options it allows, by
	// their canonical grammar names ("sort -* -o" is "sort -* --output"),
	// as a call's risky options are named.
	if r.anyFlags {
		program, rest := ruleProgram(r)
		for i, f := range r.flags {
			r.flags[i] = canonicalOption(program, subOf(rest), f)
		}
	}
	r.flags = uniqSorted(r.flags)
	return r, nil
}

// factRule is the exact command rule that allows fact c.
func factRule(c CommandFact) cmdRule {
	head := make([]string, 0, len(c.Wrappers)+1+len(c.Sub)+len(c.Assign))
	head = append(head, c.Wrappers...)
	head = append(head, c.Program)
	head = append(head, c.Sub...)
	head = append(head, c.Assign...)
	return cmdRule{env: c.Env, head: head, flags: c.Flags}
}

// representable reports whether the exact rule for c round-trips through
// the text form (words with spaces, for example, cannot be written).
func representable(c CommandFact) (string, bool) {
	want := factRule(c)
	s := want.String()
	r, err := parseCommandRule(s)
	if err != nil || r.anyFlags || !slices.Equal(r.head, want.head) || !slices.Equal(r.env, want.env) ||
		!slices.Equal(r.flags, want.flags) {
		return "", false
	}
	return s, true
}

// Marshal writes m as canonical mandate YAML. Rules are sorted by value and
// each carries its "# seen Nx" comment; the output is a pure function of m.
func (m *Mandate) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "mandate: %d\n", FormatVersion)
	fmt.Fprintf(&b, "job: %s\n", yamlScalar(m.Job))
	for _, n := range m.Notes {
		fmt.Fprintf(&b, "# %s\n", strings.ToValidUTF8(strings.ReplaceAll(n, "\n", " "), "\uFFFD"))
	}
	for _, fam := range Families {
		rules := slices.Clone(*m.family(fam))
		sort.Slice(rules, func(i, j int) bool { return rules[i].Value < rules[j].Value })
		if len(rules) == 0 {
			fmt.Fprintf(&b, "%s: []\n", fam)
			continue
		}
		fmt.Fprintf(&b, "%s:\n", fam)
		for _, r := range rules {
			fmt.Fprintf(&b, "  - %s  # seen %dx\n", yamlScalar(r.Value), r.Seen)
		}
	}
	fmt.Fprintf(&b, "%s: %d\n", FamilyMaxWrites, m.MaxWritesPerRun)
	return b.Bytes()
}

// yamlSpecialWord reports whether a lower-case word reads as a YAML
// boolean or null when plain.
func yamlSpecialWord(s string) bool {
	switch s {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~":
		return true
	}
	return false
}

// yamlScalar writes s plain when that is unambiguously a string, else
// double-quoted with escapes.
func yamlScalar(s string) string {
	if plainSafe(s) {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError:
			b.WriteString(`\uFFFD`)
		case !unicode.IsPrint(r) || r == 0xFEFF:
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\U%08X`, r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func plainSafe(s string) bool {
	if s == "" || yamlSpecialWord(strings.ToLower(s)) {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '/') {
		return false
	}
	if s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("_./@+,=-*() ", c) >= 0:
			if c == ' ' && i > 0 && s[i-1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

var seenRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#\s*seen (\d{1,9})x$`) })

// Load parses mandate YAML strictly: unknown keys, duplicate keys, wrong
// types, aliases, anchors, tags, extra documents and invalid rules are
// errors (wrapping ErrInvalidMandate), never ignored. Rules are returned in
// canonical form; duplicates after canonicalisation are merged.
func Load(text []byte) (*Mandate, error) {
	m, err := load(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMandate, err)
	}
	return m, nil
}

func load(text []byte) (*Mandate, error) {
	if len(text) > MaxTextSize {
		return nil, fmt.Errorf("text is %d bytes, limit %d", len(text), MaxTextSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parsing YAML: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("want one YAML mapping")
	}
	top := doc.Content[0]
	if err := plainNode(top, yaml.MappingNode, "!!map"); err != nil {
		return nil, fmt.Errorf("top level: %w", err)
	}
	m := &Mandate{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if err := plainNode(k, yaml.ScalarNode, "!!str"); err != nil {
			return nil, fmt.Errorf("line %d: key: %w", k.Line, err)
		}
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "mandate":
			if err := plainNode(v, yaml.ScalarNode, "!!int"); err != nil || v.Value != strconv.Itoa(FormatVersion) {
				return nil, fmt.Errorf("line %d: mandate: want format %d", v.Line, FormatVersion)
			}
		case "job":
			if err := plainNode(v, yaml.ScalarNode, "!!str"); err != nil {
				return nil, fmt.Errorf("line %d: job: %w", v.Line, err)
			}
			if !ValidJob(v.Value) {
				return nil, fmt.Errorf("line %d: job %q is not a valid job name", v.Line, v.Value)
			}
			m.Job = v.Value
		case FamilyTools, FamilyPaths, FamilyCommands, FamilyHosts:
			rules, err := loadRules(k.Value, v)
			if err != nil {
				return nil, err
			}
			*m.family(k.Value) = rules
		case FamilyMaxWrites:
			if err := plainNode(v, yaml.ScalarNode, "!!int"); err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", v.Line, FamilyMaxWrites, err)
			}
			n, err := strconv.Atoi(v.Value)
			if err != nil || n < 0 || n > 1_000_000 || strconv.Itoa(n) != v.Value {
				return nil, fmt.Errorf("line %d: %s: want a whole number from 0 to 1000000", v.Line, FamilyMaxWrites)
			}
			m.MaxWritesPerRun = n
		default:
			return nil, fmt.Errorf("line %d: unknown key %q (known: mandate, job, tools, paths, commands, hosts, max_writes_per_run)", k.Line, k.Value)
		}
	}
	for _, req := range []string{"mandate", "job", FamilyMaxWrites} {
		if !seen[req] {
			return nil, fmt.Errorf("missing key %q", req)
		}
	}
	return m, nil
}

// plainNode checks n's kind and resolved tag and that it carries no anchor.
func plainNode(n *yaml.Node, kind yaml.Kind, tag string) error {
	if n.Kind == yaml.AliasNode {
		return errors.New("aliases are not allowed")
	}
	if n.Anchor != "" {
		return errors.New("anchors are not allowed")
	}
	if n.Kind != kind || n.ShortTag() != tag {
		return fmt.Errorf("want %s, got %s", tagName(tag), tagName(n.ShortTag()))
	}
	return nil
}

func tagName(tag string) string {
	switch tag {
	case "!!map":
		return "a mapping"
	case "!!seq":
		return "a list"
	case "!!str":
		return "a string"
	case "!!int":
		return "a whole number"
	}
	return strings.TrimPrefix(tag, "!!")
}

func loadRules(fam string, v *yaml.Node) ([]Rule, error) {
	if err := plainNode(v, yaml.SequenceNode, "!!seq"); err != nil {
		return nil, fmt.Errorf("line %d: %s: %w", v.Line, fam, err)
	}
	idx := map[string]int{}
	var rules []Rule
	for _, it := range v.Content {
		if err := plainNode(it, yaml.ScalarNode, "!!str"); err != nil {
			return nil, fmt.Errorf("line %d: %s rule: %w", it.Line, fam, err)
		}
		val, err := canonRule(fam, it.Value)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", it.Line, err)
		}
		seen := 0
		if sm := seenRe().FindStringSubmatch(strings.TrimSpace(it.LineComment)); sm != nil {
			seen, _ = strconv.Atoi(sm[1])
		}
		if i, ok := idx[val]; ok {
			rules[i].Seen += seen
			continue
		}
		idx[val] = len(rules)
		rules = append(rules, Rule{Value: val, Seen: seen})
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].Value < rules[j].Value })
	return rules, nil
}
