package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-dev/tether/approval"
	"github.com/tether-dev/tether/shellparse"
)

func init() { addCommand("check", newCheckCmd) }

// Exit statuses of tether check.
const (
	checkExitAllow    = 0
	checkExitUsage    = 1
	checkExitApproval = 2
	checkExitHardline = 3
)

type checkFlags struct {
	asJSON  bool
	batch   bool
	noColor bool
	home    string
	cwd     string
	deny    []string
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:         "check [flags] 'COMMAND' | -",
		Annotations: map[string]string{annoUsageExit: strconv.Itoa(checkExitUsage)},
		Short:       "Analyse a shell command and print its verdict (hardline, approval or allow)",
		Long: `check parses a shell command (bash) and applies the rule catalog
(see "tether rules"): it prints the verdict, each finding (rule id,
description and the exact source text that matched) and the programs the
command runs after wrappers such as sudo, env or xargs are peeled off.

Give the command as one argument, or "-" to read the whole of stdin as one
command. With --batch, stdin holds one command per line (blank lines are
skipped) and each line gets one output line: TSV
"verdict<TAB>safe<TAB>rules<TAB>command", or a JSON object with --json.

Verdicts: hardline (never runs), approval (a person must approve), allow.
"safe" (yes/no) marks allowed commands that are read-only by construction.
Commands over 128 KiB are refused, never analysed in part; in --batch such
a line gets the verdict "refused".

Exit status:
  0  allow
  2  approval needed
  3  hardline (or matched a --deny glob)
  1  usage or internal error, or a command over the size limit
With --batch the status is that of the strongest verdict seen (3 over 2 over
0), or 1 if any line was refused or stdin could not be read.

Colour is used only when stdout is a terminal, without --no-color and with
NO_COLOR unset or empty.`,
		Example: `  tether check 'rm -rf /'
  tether check --json --home /root 'echo x > ~/.aws/credentials'
  tether check --deny 'sudo *' '/usr/bin/sudo -n id'
  tether check --batch < commands.txt`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.batch {
				if len(args) != 0 {
					return fmt.Errorf("--batch reads commands from stdin and takes no arguments (got %d)", len(args))
				}
				return nil
			}
			if len(args) != 1 {
				return fmt.Errorf("check takes exactly one command (quote it: tether check 'ls -la'), or - to read it from stdin; got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := approval.AnalyzeOptions{Home: f.home, Cwd: f.cwd}
			if opts.Home == "" {
				opts.Home, _ = os.UserHomeDir()
			}
			deny := approval.DenyList(f.deny)
			if err := deny.Validate(); err != nil {
				return &exitError{Code: checkExitUsage, Err: err}
			}
			if f.batch {
				return runCheckBatch(cmd.InOrStdin(), cmd.OutOrStdout(), opts, deny, f.asJSON)
			}
			command := args[0]
			if command == "-" {
				b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), approval.MaxCommandBytes+1))
				if err != nil {
					return &exitError{Code: checkExitUsage, Err: fmt.Errorf("reading command from stdin: %w", err)}
				}
				command = string(b)
			}
			res, err := checkOne(command, opts, deny)
			if err != nil {
				return &exitError{Code: checkExitUsage, Err: err}
			}
			out := cmd.OutOrStdout()
			if f.asJSON {
				if err := json.NewEncoder(out).Encode(res); err != nil {
					return fmt.Errorf("writing result: %w", err)
				}
			} else {
				printCheckHuman(out, res, useColor(out, f.noColor))
			}
			if code := checkVerdictExit(res.tier); code != 0 {
				return &exitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON (one object; one per line with --batch)")
	cmd.Flags().BoolVar(&f.noColor, "no-color", false, "plain text without colour (also NO_COLOR or non-terminal output)")
	cmd.Flags().BoolVar(&f.batch, "batch", false, "read commands from stdin, one per line")
	cmd.Flags().StringVar(&f.home, "home", "", "home directory to fold to ~ (default $HOME)")
	cmd.Flags().StringVar(&f.cwd, "cwd", "", "directory the command runs in; relative paths are resolved against it (default: unknown)")
	cmd.Flags().StringArrayVar(&f.deny, "deny", nil, "deny glob matched against normalised programs, e.g. 'sudo *' (repeatable)")
	return cmd
}

// checkResult is the machine-readable result of one command.
type checkResult struct {
	Command    string             `json:"command"`
	Verdict    string             `json:"verdict"`
	Safe       bool               `json:"safe"`
	Findings   []checkFinding     `json:"findings"`
	Programs   []checkProgram     `json:"programs"`
	Opaque     []checkOpaque      `json:"opaque,omitempty"`
	ParseError string             `json:"parse_error,omitempty"`
	Error      string             `json:"error,omitempty"`
	tier       approval.Tier      // for the exit status
	script     *shellparse.Script // for the human output
	refused    bool
}

type checkFinding struct {
	Rule        string          `json:"rule"`
	Tier        string          `json:"tier"`
	Description string          `json:"description"`
	Text        string          `json:"text"`
	Span        shellparse.Span `json:"span"`
	Reason      string          `json:"reason,omitempty"`
}

type checkProgram struct {
	Program  string   `json:"program"`
	Spelling string   `json:"spelling"`
	Wrappers []string `json:"wrappers,omitempty"`
	Text     string   `json:"text"`
}

type checkOpaque struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// errCheckRefused marks a command refused for its size.
var errCheckRefused = errors.New("refused")

// checkOne analyses one command. The error is non-nil only for a command
// over the size limit.
func checkOne(command string, opts approval.AnalyzeOptions, deny approval.DenyList) (*checkResult, error) {
	a, err := approval.Analyze(command, opts)
	if errors.Is(err, approval.ErrTooLarge) {
		return nil, fmt.Errorf("%w: the command is over the %d-byte limit; it is not analysed in part: split it, or put it in a script file", errCheckRefused, approval.MaxCommandBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("analysing command: %w", err)
	}
	findings := a.Findings
	tier := a.Verdict
	if f, ok := deny.Match(a.Script); ok {
		findings = append(findings, f)
		tier = approval.TierHardline
	}
	res := &checkResult{
		Command: command, Verdict: tier.String(), Safe: a.Safe && tier == approval.TierAllow,
		Findings: make([]checkFinding, 0, len(findings)), Programs: []checkProgram{},
		ParseError: a.ParseErr, tier: tier, script: a.Script,
	}
	for _, f := range findings {
		res.Findings = append(res.Findings, checkFinding{Rule: f.Rule, Tier: f.Tier.String(), Description: f.Description, Text: f.Text, Span: f.Span, Reason: f.Reason})
	}
	if a.Script != nil {
		for _, c := range a.Script.Commands {
			p := checkProgram{Program: c.Program, Spelling: c.Spelling, Text: c.Text}
			for _, w := range c.Wrappers {
				p.Wrappers = append(p.Wrappers, strings.TrimSpace(w.Program+" "+strings.Join(w.Args, " ")))
			}
			res.Programs = append(res.Programs, p)
		}
		for _, o := range a.Script.Opaque {
			res.Opaque = append(res.Opaque, checkOpaque{Kind: string(o.Kind), Text: o.Text})
		}
	}
	return res, nil
}

func checkVerdictExit(t approval.Tier) int {
	switch t {
	case approval.TierHardline:
		return checkExitHardline
	case approval.TierApproval:
		return checkExitApproval
	}
	return checkExitAllow
}

// printCheckHuman writes the verdict, findings and programs for a person.
func printCheckHuman(w io.Writer, r *checkResult, color bool) {
	paint := func(s, code string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	verdict := r.Verdict
	switch r.tier {
	case approval.TierHardline:
		verdict = paint(verdict, "1;31")
	case approval.TierApproval:
		verdict = paint(verdict, "1;33")
	default:
		verdict = paint(verdict, "1;32")
	}
	safe := "no"
	if r.Safe {
		safe = "yes"
	}
	fmt.Fprintf(w, "verdict: %s\nsafe: %s\n", verdict, safe)
	if r.ParseError != "" {
		fmt.Fprintf(w, "parse error: %s\n", r.ParseError)
	}
	if len(r.Findings) > 0 {
		fmt.Fprintln(w, "findings:")
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %s (%s): %s\n", f.Rule, f.Tier, f.Description)
			fmt.Fprintf(w, "    at %d-%d: %s\n", f.Span.Start, f.Span.End, checkQuoteText(f.Text))
		}
	}
	if len(r.Programs) > 0 {
		fmt.Fprintln(w, "programs:")
		for _, p := range r.Programs {
			line := "  " + p.Program
			if p.Program == "" {
				line = "  (computed at run time)"
			}
			if p.Spelling != p.Program && p.Spelling != "" {
				line += " (spelled " + p.Spelling + ")"
			}
			if len(p.Wrappers) > 0 {
				line += " via " + strings.Join(p.Wrappers, " > ")
			}
			fmt.Fprintln(w, line)
		}
	}
	if len(r.Opaque) > 0 {
		fmt.Fprintln(w, "opaque:")
		for _, o := range r.Opaque {
			fmt.Fprintf(w, "  %s: %s\n", o.Kind, checkQuoteText(o.Text))
		}
	}
}

// checkQuoteText shows source text on one line; control characters (newlines,
// escape sequences) are escaped so that they cannot restyle the terminal.
func checkQuoteText(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			q := fmt.Sprintf("%q", s)
			return q
		}
	}
	return s
}

// runCheckBatch analyses stdin line by line.
func runCheckBatch(in io.Reader, out io.Writer, opts approval.AnalyzeOptions, deny approval.DenyList, asJSON bool) error {
	br := bufio.NewReaderSize(in, 64<<10)
	bw := bufio.NewWriter(out)
	defer bw.Flush()
	enc := json.NewEncoder(bw)
	worst, refused := approval.TierAllow, false
	for {
		line, tooLong, err := readCheckLine(br, approval.MaxCommandBytes)
		if err == io.EOF && line == "" && !tooLong {
			break
		}
		if err != nil && err != io.EOF {
			bw.Flush()
			return &exitError{Code: checkExitUsage, Err: fmt.Errorf("reading commands: %w", err)}
		}
		if strings.TrimSpace(line) == "" && !tooLong {
			if err == io.EOF {
				break
			}
			continue
		}
		var res *checkResult
		if tooLong {
			res = &checkResult{Command: line, Verdict: "refused", Findings: []checkFinding{}, Programs: []checkProgram{}, refused: true,
				Error: fmt.Sprintf("line is over the %d-byte limit; refused, not analysed in part", approval.MaxCommandBytes)}
		} else {
			res, err = checkOne(line, opts, deny)
			if err != nil {
				res = &checkResult{Command: line, Verdict: "refused", Findings: []checkFinding{}, Programs: []checkProgram{}, refused: true, Error: err.Error()}
			}
		}
		if res.refused {
			refused = true
		} else if res.tier > worst {
			worst = res.tier
		}
		if asJSON {
			if res.refused {
				res.Command = fmt.Sprintf("(%d+ bytes)", approval.MaxCommandBytes)
			}
			if err := enc.Encode(res); err != nil {
				return fmt.Errorf("writing result: %w", err)
			}
		} else {
			writeCheckTSV(bw, res)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	switch {
	case refused:
		return &exitError{Code: checkExitUsage, Err: errors.New("some lines were over the size limit and were refused")}
	case worst != approval.TierAllow:
		return &exitError{Code: checkVerdictExit(worst)}
	}
	return nil
}

// writeCheckTSV writes verdict, safe, rules and command separated by tabs.
// Tabs and newlines inside the command are escaped so that a row stays one
// line; rules are comma-separated, "-" when there are none.
func writeCheckTSV(w io.Writer, r *checkResult) {
	safe := "no"
	if r.Safe {
		safe = "yes"
	}
	var ids []string
	for _, f := range r.Findings {
		if !checkContains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	rules := strings.Join(ids, ",")
	if rules == "" {
		rules = "-"
	}
	cmd := r.Command
	if r.refused {
		cmd = fmt.Sprintf("(%d+ bytes)", approval.MaxCommandBytes)
	}
	cmd = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\r", `\r`, "\n", `\n`).Replace(cmd)
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Verdict, safe, rules, cmd)
}

func checkContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// readCheckLine reads one line without its line end, keeping at most limit
// bytes. tooLong reports that the line was longer (the rest is discarded).
func readCheckLine(br *bufio.Reader, limit int) (line string, tooLong bool, err error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(b)+len(chunk) > limit+1 {
			tooLong = true
		} else {
			b = append(b, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return "", false, err
		}
		s := strings.TrimSuffix(string(b), "\n")
		if len(s) > limit {
			tooLong = true
		}
		if tooLong {
			s = ""
		}
		return s, tooLong, err
	}
}
