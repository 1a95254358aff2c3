package shellparse

import (
	"errors"
	"strings"
)

// Limits applied when Options leaves them zero.
const (
	// DefaultMaxBytes is the largest input Parse accepts. Larger input is
	// refused with ErrTooLarge; it is never truncated and analysed in part.
	DefaultMaxBytes = 128 << 10
	// DefaultMaxDepth bounds recursive parsing of literal payloads
	// (bash -c '…', su -c, env -S). Deeper payloads become opaque segments.
	DefaultMaxDepth = 4
)

// ErrTooLarge is returned by Parse for input over the size limit.
var ErrTooLarge = errors.New("shellparse: command is larger than the size limit")

// Options tunes Parse. The zero value is valid and uses the defaults above.
type Options struct {
	MaxBytes int // input size limit in bytes; 0 means DefaultMaxBytes
	MaxDepth int // payload recursion limit; 0 means DefaultMaxDepth
}

// Span is a half-open byte range [Start, End) in the top-level source given to
// Parse. Commands found inside a nested payload (bash -c '…') carry the span of
// the outermost word that held them when the exact inner offsets cannot be
// mapped back.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Script is the analysis of one command string.
type Script struct {
	Source    string     `json:"source"`
	Commands  []Command  `json:"commands"`
	Opaque    []Opaque   `json:"opaque,omitempty"`
	Functions []Function `json:"functions,omitempty"`
	// ForkLoops are the loops that start background jobs without bound
	// (see forkloop.go).
	ForkLoops []Span `json:"fork_loops,omitempty"`

	div divergence // the arithmetic half of the divergence check
	// files are the writes of the line to files (dataflow.go); stdins the
	// known standard input of commands, by index in Commands.
	files  *fileStore
	stdins map[int]*feed
	// untracked is set once the script did something after which no
	// variable's value is known (eval, source, a nameref …; see vars.go).
	untracked bool
	// aliases is set once the script defines an alias: a later command
	// name may run its text (see commandOutput).
	aliases bool
	// history are the entries the script added to bash's history list,
	// historyOpen set once entries not known may be there (history.go).
	history     []string
	historyOpen bool
	// aliasDefs are the aliases defined with known values, expanding
	// those being expanded (alias.go).
	aliasDefs map[string]string
	expanding map[string]bool
	// cdableVars is set once shopt may have set cdable_vars; dirSplits
	// counts the dirChoices walks open, payloads' included (cwd.go).
	cdableVars bool
	dirSplits  int
	// visited are the directories the walk has seen bash in, cdSure set
	// once a cd surely succeeded (cwd.go).
	visited []string
	cdSure  bool
}

// Command is one simple command reachable in the script, after wrappers have
// been peeled off.
type Command struct {
	// Program is the effective program's normalised name: quotes and
	// backslashes removed, directory stripped ("/usr/bin/rm", "./rm", "r\m"
	// and "'r'm" are all "rm").
	Program string `json:"program"`
	// Spelling is the program word as written, after quote removal
	// ("/usr/bin/rm", "./rm", "rm").
	Spelling string `json:"spelling"`
	// Args are the arguments after the program, in order.
	Args []Word `json:"args,omitempty"`
	// Env holds assignments that apply to the command: "X=1 cmd" and those
	// given to an env wrapper.
	Env []Assign `json:"env,omitempty"`
	// EnvFlags records env wrapper options that change the environment
	// (for example "-i", "-u NAME").
	EnvFlags []string `json:"env_flags,omitempty"`
	// Redirs are the command's redirections.
	Redirs []Redir `json:"redirs,omitempty"`
	// Wrappers are the peeled wrapper programs, outermost first, each with
	// its own arguments as written (for example {"sudo", ["-u","bob"]}).
	Wrappers []Wrapper `json:"wrappers,omitempty"`
	// Context says where in the script the command sits.
	Context Context `json:"context"`
	// Dirs are the directories bash may run the command in, after the
	// cd, pushd and popd before it (cwd.go): "" is the directory the
	// script started in, a relative name is relative to it, "~" is the
	// home. Several when which one is not known statically (a cd that
	// may fail, a branch). Nil is the start directory alone.
	Dirs []string `json:"dirs,omitempty"`
	// AnyDir reports that bash's directory is not known at all (a cd to
	// a computed directory, eval, a popd of a stack not known): the
	// command may run anywhere.
	AnyDir bool `json:"any_dir,omitempty"`
	// Text is the exact source text of the simple command (in the source it
	// was parsed from; for payload commands, the payload's source).
	Text string `json:"text"`
	// Span locates the command in the top-level source.
	Span Span `json:"span"`
	// NonASCII reports whether the program word holds characters outside
	// printable ASCII: fullwidth or homoglyph letters ("ｒｍ" is not the rm
	// binary, so Program keeps them as written) or control characters.
	NonASCII bool `json:"non_ascii,omitempty"`
}

// Word is one argument or target.
type Word struct {
	// Value is the word after quote removal. Parts that are not literal
	// (parameter expansions, substitutions) keep their source text, so
	// "$HOME/.aws" stays "$HOME/.aws" and "~/.ssh" stays "~/.ssh".
	Value string `json:"value"`
	// Literal reports whether the word is fully static: no expansion of any
	// kind (a leading unquoted "~" counts as an expansion, as does one after
	// the "=" of an assignment-like word such as "of=~/x", which bash expands;
	// unquoted glob and brace patterns do too, see Glob).
	Literal bool `json:"literal"`
	// Raw is the word's exact source text.
	Raw string `json:"raw"`
	// Glob reports whether the word holds unquoted pathname or brace
	// expansion characters (*, ?, [, extended globs, {a,b}, {1..3}); such a
	// word is not Literal, and Value keeps the pattern as written.
	Glob bool `json:"glob,omitempty"`
	// Unknown reports whether the value holds an expansion whose result is
	// not known statically: a parameter the script did not assign a known
	// value before (see vars.go; $HOME and ~ are the user's home, not
	// unknown), a command, process or arithmetic substitution. Value keeps
	// the expansion's source text.
	Unknown bool `json:"unknown,omitempty"`
}

// Assign is an environment assignment NAME=VALUE.
type Assign struct {
	Name  string `json:"name"`
	Value Word   `json:"value"`
}

// Wrapper is a peeled wrapper program with its own arguments.
type Wrapper struct {
	Program string   `json:"program"`
	Args    []string `json:"args,omitempty"`
}

// HasShortFlag reports whether the wrapper was given the single-letter option
// f, alone ("-S") or inside a cluster ("-nS"). Only words that precede the
// wrapped command are in Args, so operands like a user name never match
// unless they look like options.
func (w Wrapper) HasShortFlag(f byte) bool {
	for _, a := range w.Args {
		if a == "--" {
			return false
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			continue
		}
		if strings.IndexByte(a[1:], f) >= 0 {
			return true
		}
	}
	return false
}

// RedirMode is what a redirection does.
type RedirMode string

// Redirection modes.
const (
	RedirRead      RedirMode = "read"      // <
	RedirWrite     RedirMode = "write"     // >, >|, &>
	RedirAppend    RedirMode = "append"    // >>, &>>
	RedirReadWrite RedirMode = "readwrite" // <>
	RedirDup       RedirMode = "dup"       // >&, <&
	RedirHeredoc   RedirMode = "heredoc"   // <<, <<-, <<<
)

// Redir is one redirection.
type Redir struct {
	Fd     string    `json:"fd,omitempty"` // explicit fd ("2"), empty for default
	Mode   RedirMode `json:"mode"`
	Target Word      `json:"target"`
	// Body holds a heredoc's or here-string's text.
	Body string `json:"body,omitempty"`
}

// Context says where a command sits in the script.
type Context struct {
	Pipeline     int    `json:"pipeline,omitempty"`     // 1-based position in a pipeline; 0 when not piped
	PipelineLen  int    `json:"pipeline_len,omitempty"` // commands in that pipeline
	Background   bool   `json:"background,omitempty"`   // runs under &
	Subshell     bool   `json:"subshell,omitempty"`     // inside ( … )
	Function     string `json:"function,omitempty"`     // enclosing function name
	Loop         bool   `json:"loop,omitempty"`         // inside for/while/until
	Substitution bool   `json:"substitution,omitempty"` // inside $( ), ` `, <( ) or >( )
	Payload      int    `json:"payload,omitempty"`      // payload nesting depth (bash -c '…' = 1)
	// ExtraArgs reports whether the program receives arguments that are not
	// in Args, supplied at run time by a wrapper (xargs, parallel,
	// find -exec … {} +), or whether it is in a shell's -c script given
	// arguments after the script (bash -c 'rm "$1"' _ x: $0, $1 …).
	ExtraArgs bool `json:"extra_args,omitempty"`
}

// OpaqueKind names why a segment could not be analysed.
type OpaqueKind string

// Kinds of opaque segment.
const (
	OpaqueDynamicProgram OpaqueKind = "dynamic-program"        // $(echo rm), "$CMD"
	OpaqueEval           OpaqueKind = "eval"                   // eval …
	OpaqueSource         OpaqueKind = "source"                 // source/. of a computed path
	OpaquePayload        OpaqueKind = "payload"                // bash -c "$x", python -c …, node -e …
	OpaquePipedShell     OpaqueKind = "piped-to-interpreter"   // curl … | sh, base64 -d | bash
	OpaqueHeredoc        OpaqueKind = "heredoc-to-interpreter" // python <<EOF … EOF
	OpaqueDepth          OpaqueKind = "depth-limit"            // payload nested past MaxDepth
	OpaqueWritten        OpaqueKind = "written-file"           // curl -o x …; ./x: a file the line wrote, content unknown
	// OpaqueDivergence marks text that mvdan.cc/sh and bash may read
	// differently (see divergence.go): the analysis cannot trust its parse.
	OpaqueDivergence OpaqueKind = "parser-divergence"
	// OpaquePartialExpansion marks a list expansion whose known elements
	// are read but whose element 0 may hold a value from the environment
	// (a[1]=rm; ${a[*]}: a[0] may be set before the line runs).
	OpaquePartialExpansion OpaqueKind = "partial-expansion"
)

// Opaque is a segment whose effect cannot be known statically. Text is its
// exact source text: what a mandate's "=<exact text>" rule matches.
type Opaque struct {
	Kind    OpaqueKind `json:"kind"`
	Program string     `json:"program,omitempty"` // the shell or interpreter involved, if any
	Text    string     `json:"text"`
	Span    Span       `json:"span"`
}

// Function is a shell function defined in the script.
type Function struct {
	Name string `json:"name"`
	// SelfPipe reports whether the body runs the function itself in a
	// pipeline, directly or through functions that call it back (then some
	// call on that cycle is piped).
	SelfPipe bool `json:"self_pipe,omitempty"`
	// SelfBackground reports the same for a call with &.
	SelfBackground bool `json:"self_background,omitempty"`
	// SelfSpawn reports whether the body starts a background job and calls
	// the function itself unconditionally (f(){ sleep 9 & f; }).
	SelfSpawn bool `json:"self_spawn,omitempty"`
	// Recursive reports whether the body calls the function at all,
	// directly or through other functions defined in the script.
	Recursive bool `json:"recursive,omitempty"`
	// Invoked reports whether the script calls the function after defining it.
	Invoked bool `json:"invoked,omitempty"`
	Span    Span `json:"span"`
}
