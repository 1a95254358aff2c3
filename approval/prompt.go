package approval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"

	"golang.org/x/sys/unix"
)

// Prompter is the CLI route: it asks the person at a terminal, reading the
// answer from the terminal device itself (never from the standard input
// the command would get). Input typed before the question appears is
// discarded, so type-ahead never answers it. No answer before the context
// ends (the engine's timeout) is a deny. One question is asked at a time.
// Safe for concurrent use; the caller must call Close.
type Prompter struct {
	turn chan struct{} // holds a token while a question is shown: one at a time
	tty  *os.File
	out  io.Writer
	own  bool
}

// ErrNoTerminal is returned by OpenPrompter when the process has no
// controlling terminal.
var ErrNoTerminal = errors.New("no terminal to ask on")

// OpenPrompter opens the controlling terminal (/dev/tty).
func OpenPrompter() (*Prompter, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoTerminal, err)
	}
	p := NewPrompter(f)
	p.own = true
	return p, nil
}

// NewPrompter returns a prompter that asks on tty (a terminal device opened
// read-write, for example the slave side of a pty). The caller keeps
// ownership of tty.
func NewPrompter(tty *os.File) *Prompter {
	return &Prompter{turn: make(chan struct{}, 1), tty: tty, out: tty}
}

// Close closes the terminal if OpenPrompter opened it.
func (p *Prompter) Close() error {
	if p.own {
		return p.tty.Close()
	}
	return nil
}

// Name returns "cli".
func (p *Prompter) Name() string { return "cli" }

// Ask shows q and waits for o(nce), s(ession), a(lways) or d(eny).
func (p *Prompter) Ask(ctx context.Context, q Question) (Answer, error) {
	select {
	case p.turn <- struct{}{}:
		defer func() { <-p.turn }()
	case <-ctx.Done():
		// Still waiting for another question to be answered: a deny.
		return Answer{}, ctx.Err()
	}

	// Discard type-ahead: only an answer typed after the question counts.
	// (SyscallConn, not Fd: Fd would switch the file to blocking mode and
	// disable the read deadlines that enforce the timeout.)
	if rc, err := p.tty.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) })
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\ntether: approval needed (profile %s", q.Profile)
	if q.Session != "" {
		fmt.Fprintf(&b, ", session %s", printable(q.Session))
	}
	what := "command:"
	if q.Tool != "" {
		what = "file:   " // a file tool's access, not a shell command
	}
	fmt.Fprintf(&b, ")\n  %s %s\n", what, printable(q.Command))
	for _, f := range q.Findings {
		fmt.Fprintf(&b, "  why:     %s (%s)\n", printable(f.Description), f.Rule)
	}
	if q.Reason != "" {
		fmt.Fprintf(&b, "  note:    %s\n", printable(q.Reason))
	}
	for _, sc := range []Scope{ScopeOnce, ScopeSession, ScopeAlways} {
		if c := q.Covers[sc]; c != "" && q.Allows(sc) {
			fmt.Fprintf(&b, "  %-8s %s\n", sc+":", printable(c))
		}
	}
	choices := []string{"[o]nce"}
	valid := "o"
	if q.Allows(ScopeSession) {
		choices = append(choices, "[s]ession")
		valid += ", s"
	}
	if q.Allows(ScopeAlways) {
		choices = append(choices, "[a]lways")
		valid += ", a"
	}
	choices = append(choices, "[d]eny")
	valid += " or d"
	wait := ""
	if dl, ok := ctx.Deadline(); ok {
		wait = fmt.Sprintf(" (no answer in %s denies)", time.Until(dl).Round(time.Second))
	}
	fmt.Fprintf(&b, "  allow? %s%s: ", strings.Join(choices, " "), wait)
	if _, err := io.WriteString(p.out, b.String()); err != nil {
		return Answer{}, fmt.Errorf("writing the prompt: %w", err)
	}

	for {
		line, err := p.readLine(ctx)
		if err != nil {
			fmt.Fprintf(p.out, "\n  -> no answer: denied\n")
			return Answer{}, err
		}
		a, ok := parseAnswer(line, q)
		if ok {
			if a.Verdict == VerdictApprove {
				fmt.Fprintf(p.out, "  -> approved (%s)\n", a.Scope)
			} else {
				fmt.Fprintf(p.out, "  -> denied\n")
			}
			return a, nil
		}
		fmt.Fprintf(p.out, "  please answer %s: ", valid)
	}
}

func parseAnswer(line string, q Question) (Answer, bool) {
	by := "cli"
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "o", "once", "y", "yes":
		return Answer{Verdict: VerdictApprove, Scope: ScopeOnce, By: by}, true
	case "s", "session":
		if q.Allows(ScopeSession) {
			return Answer{Verdict: VerdictApprove, Scope: ScopeSession, By: by}, true
		}
	case "a", "always":
		if q.Allows(ScopeAlways) {
			return Answer{Verdict: VerdictApprove, Scope: ScopeAlways, By: by}, true
		}
	case "d", "deny", "n", "no":
		return Answer{Verdict: VerdictDeny, By: by, Reason: "denied at the terminal"}, true
	}
	return Answer{}, false
}

// readLine reads one line from the terminal, giving up when ctx ends.
func (p *Prompter) readLine(ctx context.Context) (string, error) {
	if err := p.tty.SetReadDeadline(time.Time{}); err != nil {
		return p.readLineBlocking(ctx)
	}
	stop := context.AfterFunc(ctx, func() { _ = p.tty.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := p.tty.Read(b)
		if n == 1 {
			if b[0] == '\n' || b[0] == '\r' {
				return string(line), nil
			}
			if len(line) < 256 {
				line = append(line, b[0])
			}
			continue
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if err == nil {
			err = io.EOF
		}
		return "", fmt.Errorf("reading the answer: %w", err)
	}
}

// readLineBlocking is for terminals the runtime cannot poll: the read runs
// in a goroutine that is abandoned when ctx ends (its line is then lost).
func (p *Prompter) readLineBlocking(ctx context.Context) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var line []byte
		b := make([]byte, 1)
		for {
			n, err := p.tty.Read(b)
			if n == 1 && b[0] != '\n' && b[0] != '\r' {
				line = append(line, b[0])
				continue
			}
			if n == 1 {
				ch <- result{line: string(line)}
				return
			}
			if err == nil {
				err = io.EOF
			}
			ch <- result{err: fmt.Errorf("reading the answer: %w", err)}
			return
		}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// printable escapes control characters so a command cannot rewrite the
// prompt (terminal escape sequences, carriage returns, fake new lines).
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == unicode.ReplacementChar || !unicode.IsPrint(r) && r != ' ':
			fmt.Fprintf(&b, `\x{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
