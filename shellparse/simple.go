package shellparse

import "mvdan.cc/sh/v3/syntax"

// parseSimple builds, for the commonest input, the syntax tree
// mvdan.cc/sh builds, at a fraction of its cost: the parser reads every
// byte through an io.Reader and allocates its nodes in batches of 32, which
// made it most of the analyzer's time and memory for one-line commands.
//
// It accepts only a simple command, or a pipeline of up to nine (a | b),
// on one line, whose words are made of plain characters (letters, digits
// and _ . / : @ % + , = - * ? ~, which the tree keeps as literal text: glob
// and tilde meaning is the walker's business, as with mvdan.cc/sh's tree),
// single-quoted text and double-quoted text without $ ` \ " or !, separated
// by spaces; each command's first word holds no "=" (an assignment) and is
// no reserved word or declaration builtin. Anything else, every other
// operator, expansion, redirection, brace, comment and control byte
// included, returns false and goes to mvdan.cc/sh. In that language a word is the
// concatenation of its parts exactly as written, so the tree is determined;
// TestSimpleParseMatches and FuzzSimpleParse check it node for node, positions
// included, against mvdan.cc/sh.
func parseSimple(src string) (*syntax.File, bool) {
	if len(src) > maxSimpleBytes {
		return nil, false
	}
	// First pass: validate and count, so that the nodes take a few exact
	// allocations.
	var nWords, nLit, nSgl, nDbl, nDblLit int
	var pipes [maxSimplePipes]int // offsets of the | operators
	nPipes := 0
	segWords := 0 // words in the current pipeline stage
	for i := 0; i < len(src); {
		if src[i] == ' ' {
			i++
			continue
		}
		if src[i] == '|' {
			if segWords == 0 || nPipes == maxSimplePipes || (i+1 < len(src) && (src[i+1] == '|' || src[i+1] == '&')) {
				return nil, false
			}
			pipes[nPipes] = i
			nPipes++
			segWords = 0
			i++
			continue
		}
		start := i
		for i < len(src) && src[i] != ' ' && src[i] != '|' {
			switch c := src[i]; {
			case c == '\'':
				j := i + 1
				for j < len(src) && src[j] != '\'' {
					if !printable(src[j]) {
						return nil, false
					}
					j++
				}
				if j == len(src) {
					return nil, false
				}
				nSgl++
				i = j + 1
			case c == '"':
				j := i + 1
				for j < len(src) && src[j] != '"' {
					if !dqPlain(src[j]) {
						return nil, false
					}
					j++
				}
				if j == len(src) {
					return nil, false
				}
				nDbl++
				if j > i+1 {
					nDblLit++
				}
				i = j + 1
			case plainWordChar(c):
				for i < len(src) && plainWordChar(src[i]) {
					i++
				}
				nLit++
			default:
				return nil, false
			}
		}
		if segWords == 0 && !plainProgram(src[start:i]) {
			return nil, false
		}
		segWords++
		nWords++
	}
	if segWords == 0 {
		return nil, false // nothing, or nothing after the last |
	}

	// Second pass: build the nodes.
	t := &simpleTree{}
	t.file.Stmts = t.stmts[:]
	stages := 1 + nPipes
	nParts := nLit + nSgl + nDbl
	var stmts []syntax.Stmt
	var calls []syntax.CallExpr
	var words []syntax.Word
	var args []*syntax.Word
	var parts, inner []syntax.WordPart // inner: the parts of double-quoted texts
	var lits []syntax.Lit
	var sgls []syntax.SglQuoted
	var dbls []syntax.DblQuoted
	if stages == 1 && nWords <= smallN && nParts <= smallN && nLit+nDblLit <= smallN && nSgl <= 2 && nDbl <= 2 {
		// The common case: every node in the one allocation.
		sm := &simpleSmall{}
		t = &sm.tree
		t.file.Stmts = t.stmts[:]
		stmts, calls, words, args = sm.stmt[:], sm.call[:], sm.words[:nWords], sm.args[:nWords]
		parts, inner, lits, sgls, dbls = sm.parts[:0:nParts], sm.inner[:nDblLit], sm.lits[:nLit+nDblLit], sm.sgls[:nSgl], sm.dbls[:nDbl]
	} else {
		stmts = make([]syntax.Stmt, stages)
		calls = make([]syntax.CallExpr, stages)
		words = make([]syntax.Word, nWords)
		args = make([]*syntax.Word, nWords)
		parts = make([]syntax.WordPart, 0, nParts)
		inner = make([]syntax.WordPart, nDblLit)
		lits = make([]syntax.Lit, nLit+nDblLit)
		sgls = make([]syntax.SglQuoted, nSgl)
		dbls = make([]syntax.DblQuoted, nDbl)
	}
	w, stage, stageStart := 0, 0, 0
	endStage := func() {
		calls[stage].Args = args[stageStart:w:w]
		stmts[stage].Cmd = &calls[stage]
		stmts[stage].Position = args[stageStart].Pos()
		stage, stageStart = stage+1, w
	}
	for i := 0; i < len(src); {
		if src[i] == ' ' {
			i++
			continue
		}
		if src[i] == '|' {
			endStage()
			i++
			continue
		}
		first := len(parts)
		for i < len(src) && src[i] != ' ' && src[i] != '|' {
			switch src[i] {
			case '\'':
				j := i + 1
				for src[j] != '\'' {
					j++
				}
				q := &sgls[0]
				sgls = sgls[1:]
				q.Left, q.Right, q.Value = pos(i), pos(j), src[i+1:j]
				parts = append(parts, q)
				i = j + 1
			case '"':
				j := i + 1
				for src[j] != '"' {
					j++
				}
				q := &dbls[0]
				dbls = dbls[1:]
				q.Left, q.Right = pos(i), pos(j)
				if j > i+1 {
					l := &lits[0]
					lits = lits[1:]
					l.ValuePos, l.ValueEnd, l.Value = pos(i+1), pos(j), src[i+1:j]
					inner[0] = l
					q.Parts, inner = inner[:1:1], inner[1:]
				}
				parts = append(parts, q)
				i = j + 1
			default:
				s := i
				for i < len(src) && plainWordChar(src[i]) {
					i++
				}
				l := &lits[0]
				lits = lits[1:]
				l.ValuePos, l.ValueEnd, l.Value = pos(s), pos(i), src[s:i]
				parts = append(parts, l)
			}
		}
		words[w].Parts = parts[first:len(parts):len(parts)]
		args[w] = &words[w]
		w++
	}
	endStage()
	// a | b | c nests to the left: ((a | b) | c).
	top := &stmts[0]
	if nPipes > 0 {
		bins := make([]syntax.BinaryCmd, nPipes)
		outer := make([]syntax.Stmt, nPipes)
		for k := range nPipes {
			bins[k] = syntax.BinaryCmd{OpPos: pos(pipes[k]), Op: syntax.Pipe, X: top, Y: &stmts[k+1]}
			outer[k] = syntax.Stmt{Cmd: &bins[k], Position: stmts[0].Position}
			top = &outer[k]
		}
	}
	t.stmts[0] = top
	return &t.file, true
}

// maxSimplePipes bounds the pipeline stages parseSimple takes.
const maxSimplePipes = 8

// maxSimpleBytes bounds the input parseSimple takes (positions stay on one
// line, which mvdan.cc/sh numbers the same way).
const maxSimpleBytes = 4096

// simpleTree holds the fixed nodes of a simple command's tree in one
// allocation.
type simpleTree struct {
	file  syntax.File
	stmts [1]*syntax.Stmt
}

// smallN bounds the words and parts of a command whose nodes fit in one
// simpleSmall.
const smallN = 8

// simpleSmall holds every node of a small simple command's tree.
type simpleSmall struct {
	tree  simpleTree
	stmt  [1]syntax.Stmt
	call  [1]syntax.CallExpr
	words [smallN]syntax.Word
	args  [smallN]*syntax.Word
	parts [smallN]syntax.WordPart
	inner [2]syntax.WordPart
	lits  [smallN]syntax.Lit
	sgls  [2]syntax.SglQuoted
	dbls  [2]syntax.DblQuoted
}

// pos is the position of byte offset i of a one-line source.
func pos(i int) syntax.Pos { return syntax.NewPos(uint(i), 1, uint(i)+1) }

// plainWordChar reports whether c may appear unquoted in a word parseSimple
// takes: characters no shell gives a meaning there (* and ? are glob
// characters, which the tree keeps as literal text, as mvdan.cc/sh does).
func plainWordChar(c byte) bool { return plainWordChars[c] }

var plainWordChars = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			t[c] = true
		}
	}
	for _, c := range "_./:@%+,=-*?~" {
		t[c] = true
	}
	return t
}()

// printable reports whether c is printable ASCII.
func printable(c byte) bool { return c >= 0x20 && c < 0x7f }

// dqPlain reports whether c may appear inside double quotes in a word
// parseSimple takes: no expansion, escape or history character.
func dqPlain(c byte) bool {
	return printable(c) && c != '$' && c != '`' && c != '\\' && c != '"' && c != '!'
}

// plainProgram reports whether the first word leaves the command a plain
// call: no assignment, and no word the parser reads as syntax there.
func plainProgram(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] == '=' {
			return false
		}
	}
	switch w {
	case "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in",
		"select", "function", "time", "coproc", "declare", "local", "export", "readonly", "typeset",
		"nameref", "let":
		return false
	}
	return true
}
